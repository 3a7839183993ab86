#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Groups that share nothing (the outputs of different devices: their own descriptors, their own
/// clocks) run side by side, one thread each, so that one card's drawing or waiting never holds
/// another card's outputs.
extension PacingGroup {
    /// Runs `groups` at once: the first on the calling thread, each other one on a thread of its
    /// own, until each is done (``run(shouldStop:)``). Returns each group's summaries, in order.
    /// `shouldStop` is asked by every group's thread. An error thrown by one group stops the
    /// others (as `shouldStop` would) and is rethrown once all have ended.
    ///
    /// Each group (its runs, displays and callbacks) must be used by no one else while this runs:
    /// a group's thread is the only one touching it between the start and the join.
    public static func runTogether(_ groups: [PacingGroup],
                                   shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> [[RunSummary]] {
        guard groups.count > 1 else { return try groups.map { try $0.run(shouldStop: shouldStop) } }
        let abort = Flag()
        let jobs = groups.map { GroupJob($0) }
        let stop: @Sendable () -> Bool = { abort.isSet || shouldStop() }
        var threads: [pthread_t] = []
        for job in jobs.dropFirst() {
            job.stop = stop
            job.abort = abort
            let box = Unmanaged.passRetained(job)
            var t = pthread_t()
            let rc = pthread_create(&t, nil, { arg in
                let me = Unmanaged<GroupJob>.fromOpaque(arg!).takeRetainedValue()
                me.execute()
                return nil
            }, box.toOpaque())
            guard rc == 0 else {
                box.release()
                job.result = .failure(PacingThreadError(errno: rc))
                abort.set()
                continue
            }
            threads.append(t)
        }
        jobs[0].stop = stop
        jobs[0].abort = abort
        jobs[0].execute()
        for t in threads { pthread_join(t, nil) }
        return try jobs.map { try $0.result!.get() }
    }
}

/// A thread for a group could not be started (pthread_create's error number).
public struct PacingThreadError: Error, CustomStringConvertible {
    /// pthread_create's result.
    public var errno: Int32
    public var description: String { "cannot start a thread for a card's outputs: \(String(cString: strerror(errno)))" }
}

/// One group and what its run gave. `@unchecked Sendable`: it is handed to its thread once, and
/// read back only after `pthread_join`, which orders the two.
private final class GroupJob: @unchecked Sendable {
    let group: PacingGroup
    var stop: @Sendable () -> Bool = { false }
    var abort: Flag?
    var result: Result<[RunSummary], any Error>?
    init(_ group: PacingGroup) { self.group = group }

    func execute() {
        result = Result { try group.run(shouldStop: stop) }
        if case .failure = result { abort?.set() }
    }
}

/// A flag set once, read from any thread.
private final class Flag: Sendable {
    private let lock = Lock()
    private nonisolated(unsafe) var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
