import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The async forms of running a link. The pacing loop is a blocking loop (it sleeps in poll(2)
// until the next vblank or flip event), so it never runs on Swift concurrency's cooperative
// threads: it gets a thread of its own, and the awaiting task is resumed when it ends.

extension DisplayLink {
    /// Runs the link for `duration` on a thread of its own and resumes when the run is over
    /// (see ``run(for:shouldStop:)``). Cancelling the task stops the run as `shouldStop` would.
    /// The callback and presented handlers run on the link's thread; don't touch the link or its
    /// display from elsewhere while it runs.
    public func run(for duration: Duration) async throws -> PacingResult {
        let job = LinkJob(self)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<PacingResult, any Error>) in
                DispatchQueue(label: "cadence.display-link").async {
                    c.resume(with: Result(catching: { try job.link.run(for: duration, shouldStop: { job.isCancelled }) }))
                }
            }
        } onCancel: {
            job.cancel()
        }
    }

    /// The link's callbacks as an asynchronous sequence, the alternative to a callback body:
    ///
    ///     for try await update in link.updates {
    ///         draw(into: update.drawable.canvas)
    ///         update.drawable.present()
    ///     }
    ///
    /// The pacing loop runs on a thread of its own and waits at each callback until the loop
    /// body asks for the next update, so the body has the same deadline a callback has. The
    /// sequence ends when the body breaks out (the run stops), when the link is invalidated or
    /// the device is lost; an error of the run is thrown by the iteration.
    public var updates: DisplayLinkUpdates { DisplayLinkUpdates(link: self) }
}

/// The updates of a ``DisplayLink`` as an `AsyncSequence` (see ``DisplayLink/updates``).
/// Iterate it once.
public struct DisplayLinkUpdates: AsyncSequence {
    public typealias Element = DisplayLinkUpdate
    let link: DisplayLink

    public func makeAsyncIterator() -> Iterator { Iterator(token: IterationToken(UpdateChannel(link))) }

    public struct Iterator: AsyncIteratorProtocol {
        let token: IterationToken

        public mutating func next() async throws -> DisplayLinkUpdate? {
            let channel = token.channel
            return try await withTaskCancellationHandler {
                try await channel.next()
            } onCancel: {
                channel.cancel()
            }
        }
    }
}

/// Owned by the iterator alone: when the iteration is abandoned (the loop body breaks out), its
/// deinit stops the run, so that the loop thread never stays parked.
final class IterationToken: Sendable {
    let channel: UpdateChannel
    init(_ channel: UpdateChannel) { self.channel = channel }
    deinit { channel.cancel() }
}

/// Hands a link (a non-Sendable class) to the thread that runs it. Safe because the caller
/// never uses the link while the run is going (it is suspended awaiting the run's end, or, for
/// ``DisplayLink/updates``, it touches only the update it was handed while the loop is parked).
final class LinkJob: @unchecked Sendable {
    let link: DisplayLink
    /// The link's own handler while ``DisplayLink/updates`` replaces it.
    var savedHandler: DisplayLink.Handler?
    private let lock = Lock()
    private var cancelled = false
    init(_ link: DisplayLink) { self.link = link }
    var isCancelled: Bool { lock.withLock { cancelled } }
    func cancel() { lock.withLock { cancelled = true } }
}

/// The rendezvous between the loop thread and the iterating task: the loop thread offers an
/// update and waits until the task asks for the next one; the task waits for an offer.
/// All state is under `lock`; the loop thread parks on `resume`. `@unchecked Sendable`
/// because the compiler cannot see that a lock guards the `var`s (every access is inside
/// `lock.withLock`).
final class UpdateChannel: @unchecked Sendable {
    private let job: LinkJob
    private let lock = Lock()
    private let resume = DispatchSemaphore(value: 0)
    private var started = false
    private var offered: DisplayLinkUpdate?
    private var finished: Result<Void, any Error>?
    private var waiter: CheckedContinuation<DisplayLinkUpdate?, any Error>?
    private var loopParked = false

    init(_ link: DisplayLink) { job = LinkJob(link) }

    func cancel() {
        job.cancel()
        let w: CheckedContinuation<DisplayLinkUpdate?, any Error>? = lock.withLock {
            defer { waiter = nil }
            return waiter
        }
        w?.resume(returning: nil)
        releaseLoop()
    }

    func next() async throws -> DisplayLinkUpdate? {
        if job.isCancelled { return nil }
        let start = lock.withLock { () -> Bool in
            defer { started = true }
            return !started
        }
        if start { startLoop() } else { releaseLoop() }
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<DisplayLinkUpdate?, any Error>) in
            let ready: Result<DisplayLinkUpdate?, any Error>? = lock.withLock {
                if let u = offered { offered = nil; return .success(u) }
                if let f = finished { return f.map { nil } }
                waiter = c
                return nil
            }
            if let ready { c.resume(with: ready) }
        }
    }

    /// Lets a loop parked in a callback go on.
    private func releaseLoop() {
        let parked = lock.withLock { () -> Bool in
            defer { loopParked = false }
            return loopParked
        }
        if parked { resume.signal() }
    }

    private func startLoop() {
        let link = job.link
        job.savedHandler = link.handler
        link.handler = { [self] update in
            if job.isCancelled { return }
            let w: CheckedContinuation<DisplayLinkUpdate?, any Error>? = lock.withLock {
                loopParked = true
                if let w = waiter { waiter = nil; return w }
                offered = update
                return nil
            }
            w?.resume(returning: update)
            resume.wait()
        }
        DispatchQueue(label: "cadence.display-link.updates").async { [self] in
            let link = job.link
            let result = Result(catching: { _ = try link.run(for: .seconds(365 * 86_400), shouldStop: { self.job.isCancelled }) })
            if let h = job.savedHandler { link.handler = h }
            let w: CheckedContinuation<DisplayLinkUpdate?, any Error>? = lock.withLock {
                finished = result
                defer { waiter = nil }
                return waiter
            }
            w?.resume(with: result.map { nil })
        }
    }
}

/// A pthread mutex (CadenceCore uses no Foundation; `Synchronization.Mutex` needs macOS 15,
/// the package supports 13). `@unchecked Sendable`: the mutex is the synchronisation itself;
/// its pointer is set once in init and freed in deinit. Package access: CadenceMetrics uses it too.
package final class Lock: @unchecked Sendable {
    private let m: UnsafeMutablePointer<pthread_mutex_t>
    package init() {
        m = .allocate(capacity: 1)
        m.initialize(to: pthread_mutex_t())
        pthread_mutex_init(m, nil)
    }
    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}
