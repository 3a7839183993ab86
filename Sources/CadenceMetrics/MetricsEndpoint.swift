#if canImport(Glibc)
import Glibc
#endif

/// Serves `GET /metrics` (Prometheus' scrape) on a TCP address, from one thread, until
/// ``stop()``. Deliberately tiny instead of hummingbird or swift-nio (which would add minutes to
/// every CI build): it answers one request per connection (HTTP/1.0 semantics, `Connection:
/// close`), reads at most 8 KiB of request within 2 s, serves only GET (and HEAD) of
/// `/metrics` (404 for other paths, 405 for other methods, 400 for anything unparsable) and
/// never reads a request body. Bound to 127.0.0.1 unless told otherwise.
public final class MetricsEndpoint: @unchecked Sendable {
    public let port: UInt16
    private let listener: Int32
    private let body: @Sendable () -> [UInt8]
    private let state = NSLockish()
    private var stopping = false
    private var thread: pthread_t?

    /// Binds `address:port` (port 0: any free port, see ``port``) and starts serving `body()`.
    public init(address: String, port: UInt16, body: @escaping @Sendable () -> [UInt8]) throws {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else {
            throw MetricsError("--metrics-address \(address) is not an IPv4 address")
        }
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw MetricsError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(s, 16) == 0 else {
            let why = String(cString: strerror(errno))
            close(s)
            throw MetricsError("cannot listen on \(address):\(port): \(why)")
        }
        var got = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &got) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        self.port = UInt16(bigEndian: got.sin_port)
        listener = s
        self.body = body
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            let me = Unmanaged<MetricsEndpoint>.fromOpaque(arg!).takeRetainedValue()
            me.serve()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            close(s)
            throw MetricsError("cannot start the metrics thread: \(String(cString: strerror(rc)))")
        }
        thread = t
    }

    /// Stops serving and closes the socket (waits for the thread).
    public func stop() {
        let t: pthread_t? = state.locked {
            guard !stopping else { return nil }
            stopping = true
            return thread
        }
        if let t { pthread_join(t, nil) }
    }

    private var isStopping: Bool { state.locked { stopping } }

    private func serve() {
        defer { close(listener) }
        while !isStopping {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let c = accept(listener, nil, nil)
            guard c >= 0 else { continue }
            answer(c)
            close(c)
        }
    }

    private func answer(_ c: Int32) {
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var req = [UInt8](repeating: 0, count: 8192)
        var n = 0
        // Read until the end of the headers (a blank line), the buffer is full, or 2 s.
        while n < req.count {
            let r = req.withUnsafeMutableBytes { recv(c, $0.baseAddress! + n, $0.count - n, 0) }
            if r <= 0 { break }
            n += r
            if Self.headersEnd(req, n) { break }
        }
        let (status, payload, head) = Self.response(to: Array(req[0..<n]), body: body)
        var out = Array("HTTP/1.1 \(status)\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: \(payload.count)\r\nConnection: close\r\n\r\n".utf8)
        if !head { out += payload }
        var off = 0
        while off < out.count {
            let w = out.withUnsafeBytes { send(c, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if w <= 0 { return }
            off += w
        }
    }

    static func headersEnd(_ b: [UInt8], _ n: Int) -> Bool {
        guard n >= 4 else { return false }
        for i in 0...(n - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return true }
        return false
    }

    /// Status line, payload and whether it is a HEAD request, for the request bytes.
    static func response(to request: [UInt8], body: () -> [UInt8]) -> (String, [UInt8], Bool) {
        guard let lineEnd = request.firstIndex(of: 13) ?? request.firstIndex(of: 10) else {
            return ("400 Bad Request", Array("bad request\n".utf8), false)
        }
        let parts = request[0..<lineEnd].split(separator: 0x20, omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)) else {
            return ("400 Bad Request", Array("bad request\n".utf8), false)
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        var path = String(decoding: parts[1], as: UTF8.self)
        if let q = path.firstIndex(of: "?") { path = String(path[..<q]) }
        guard method == "GET" || method == "HEAD" else { return ("405 Method Not Allowed", Array("only GET\n".utf8), false) }
        guard path == "/metrics" else { return ("404 Not Found", Array("see /metrics\n".utf8), method == "HEAD") }
        return ("200 OK", body(), method == "HEAD")
    }
}
