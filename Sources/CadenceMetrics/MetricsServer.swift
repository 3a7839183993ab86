#if MetricsHTTP
import Dispatch
import Hummingbird
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#endif

/// Serves Prometheus' scrape, `GET /metrics` (and `HEAD`), over HTTP/1.1 with hummingbird, on
/// its own event-loop thread and task, until ``stop()``: a scrape never runs on the caller's
/// thread, so a pacing loop is never held up by one. Any other path is 404, any other method on
/// `/metrics` 405. The body is `body()`, called once per scrape on the server's thread.
///
/// Only in builds with the package trait `MetricsHTTP` (the default); a build without it
/// (`--disable-default-traits`) compiles this type, but ``init(address:port:body:)`` throws
/// ``MetricsError/httpUnavailable`` (see ``isAvailable``).
public final class MetricsServer: Sendable {
    /// Whether this build can serve HTTP (built with the `MetricsHTTP` trait).
    public static var isAvailable: Bool {
        #if MetricsHTTP
        return true
        #else
        return false
        #endif
    }

    /// The port bound (the one asked for, or the one the kernel picked for port 0).
    public let port: Int

    #if MetricsHTTP
    private let task: Task<Void, Never>
    private let finished: DispatchSemaphore
    private let executor: ThreadExecutor

    /// Binds `address:port` (an IPv4 or IPv6 address or a host name; port 0: any free port, see
    /// ``port``) and starts serving. Returns once the socket listens; throws ``MetricsError``
    /// when it cannot (address in use, not an address, no permission).
    public init(address: String, port: Int, body: @escaping @Sendable () -> [UInt8]) throws {
        let started = StartGate()
        let finished = DispatchSemaphore(value: 0)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            Self.respond(method: request.method, path: request.uri.path, body: body)
        }
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(address, port: port)),
            onServerRunning: { channel in started.open(.success(channel.localAddress?.port ?? port)) },
            logger: Logger(label: "cadence.metrics", factory: { _ in SwiftLogNoOpLogHandler() }))
        // The server's tasks run on a thread of their own (and NIO's event-loop threads), never on
        // the caller's nor on the shared cooperative pool, which a caller blocking in `init` (or a
        // busy async program) could leave without a free thread.
        let executor = ThreadExecutor()
        self.executor = executor
        task = Task(executorPreference: executor) {
            do { try await app.run() } catch { started.open(.failure(Self.describe(error))) }
            started.open(.failure("the server stopped"))
            finished.signal()
        }
        self.finished = finished
        switch started.wait() {
        case .success(let p):
            self.port = p
        case .failure(let why):
            task.cancel()
            _ = finished.wait(timeout: .now() + 5)
            executor.stop()
            throw MetricsError.listen(address: address, port: port, why)
        }
    }

    /// Stops serving and closes the socket (waits up to 5 s for the server to shut down).
    public func stop() {
        task.cancel()
        if finished.wait(timeout: .now() + 5) == .success { executor.stop() }
    }

    static func respond(method: HTTPRequest.Method, path: String, body: () -> [UInt8]) -> Response {
        let plain: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        guard path == "/metrics" else {
            return Response(status: .notFound, headers: plain, body: .init(byteBuffer: ByteBuffer(string: "see /metrics\n")))
        }
        guard method == .get || method == .head else {
            return Response(status: .methodNotAllowed, headers: plain.merging([.allow: "GET, HEAD"]),
                            body: .init(byteBuffer: ByteBuffer(string: "only GET and HEAD\n")))
        }
        let bytes = body()
        var headers: HTTPFields = [.contentType: "text/plain; version=0.0.4; charset=utf-8"]
        guard method == .get else {
            headers[.contentLength] = String(bytes.count)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// One line for a bind failure (NIO's IOError says the call and errno).
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("errno: 98") || text.contains("Address already in use") { return "address already in use" }
        if text.contains("errno: 99") || text.contains("Cannot assign requested address") { return "not an address of this machine" }
        if text.contains("errno: 13") || text.contains("Permission denied") { return "permission denied (ports below 1024 need root)" }
        return text
    }
    #else
    /// Throws ``MetricsError/httpUnavailable``: this build has no HTTP server.
    public init(address: String, port: Int, body: @escaping @Sendable () -> [UInt8]) throws {
        throw MetricsError.httpUnavailable
    }

    /// Nothing to stop in a build without HTTP.
    public func stop() {}
    #endif
}

#if MetricsHTTP
extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var m = self
        m.append(contentsOf: other)
        return m
    }
}

/// Started (with the port) or failed (with why), once; `wait()` blocks a plain thread until then.
private final class StartGate: Sendable {
    enum Result: Sendable { case success(Int), failure(String) }
    private let state = Mutex<Result?>(nil)
    private let opened = DispatchSemaphore(value: 0)

    func open(_ r: Result) {
        let first = state.withLock { v -> Bool in
            guard v == nil else { return false }
            v = r
            return true
        }
        if first { opened.signal() }
    }

    func wait() -> Result {
        opened.wait()
        return state.withLock { $0! }
    }
}
#endif

#if MetricsHTTP
/// A task executor with one thread of its own: runs the jobs enqueued, in order, until stopped.
private final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let state = Mutex<(jobs: [UnownedJob], stopped: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)

    init() {
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            let me = Unmanaged<ThreadExecutor>.fromOpaque(arg!).takeRetainedValue()
            me.loop()
            return nil
        }, box.toOpaque())
        if rc == 0 { pthread_detach(t) } else { box.release() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let j = UnownedJob(job)
        state.withLock { $0.jobs.append(j) }
        ready.signal()
    }

    /// Ends the thread once the jobs queued so far have run.
    func stop() {
        state.withLock { $0.stopped = true }
        ready.signal()
    }

    private func loop() {
        while true {
            ready.wait()
            let (batch, stopped) = state.withLock { s -> ([UnownedJob], Bool) in
                let b = s.jobs
                s.jobs.removeAll(keepingCapacity: true)
                return (b, s.stopped)
            }
            for j in batch { j.runSynchronously(on: asUnownedTaskExecutor()) }
            if stopped && state.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
#endif
