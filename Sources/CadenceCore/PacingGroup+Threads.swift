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
        let failed = StopFlag()
        let results = SeparateThreads.run(groups.count) { i in
            do {
                return try groups[i].run { failed.isSet || shouldStop() }
            } catch {
                failed.set()
                throw error
            }
        }
        return try results.map { try $0.get() }
    }
}

/// Work on objects that share nothing (one card each), one thread per piece.
public enum SeparateThreads {
    /// Calls `body(i)` for every `i` in `0..<count` at once: 0 on the calling thread, each other
    /// one on a thread of its own; returns when all have returned, with each one's result in
    /// order. A thread that cannot be started gives ``PacingThreadError`` for its piece.
    ///
    /// The caller promises that the pieces touch disjoint state (each its own device, runs and
    /// callbacks): that promise is what makes handing `body` to other threads sound, and why it
    /// need not be `@Sendable`. Results are read only after `pthread_join`, which orders them.
    public static func run<T>(_ count: Int, _ body: @escaping (Int) throws -> T) -> [Result<T, any Error>] {
        guard count > 1 else { return (0..<count).map { i in Result { try body(i) } } }
        let results = Results<T>(count)
        var threads: [pthread_t] = []
        for i in 1..<count {
            let box = Unmanaged.passRetained(Job { results.values[i] = Result { try body(i) } })
            var t = pthread_t()
            let rc = pthread_create(&t, nil, { arg in
                Unmanaged<Job>.fromOpaque(arg!).takeRetainedValue().work()
                return nil
            }, box.toOpaque())
            if rc == 0 {
                threads.append(t)
            } else {
                box.release()
                results.values[i] = .failure(PacingThreadError(errno: rc))
            }
        }
        results.values[0] = Result { try body(0) }
        for t in threads { pthread_join(t, nil) }
        return (0..<count).map { results.values[$0]! }
    }

    /// One thread's work. `@unchecked Sendable`: see ``run(_:_:)``.
    private final class Job: @unchecked Sendable {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }

    /// Each piece's result, in a slot of its own written by its own thread only (a Swift array
    /// would not do: every element write goes through the one array value). `@unchecked
    /// Sendable`: see ``run(_:_:)``.
    private final class Results<T>: @unchecked Sendable {
        let values: UnsafeMutablePointer<Result<T, any Error>?>
        let count: Int
        init(_ count: Int) {
            self.count = count
            values = .allocate(capacity: count)
            values.initialize(repeating: nil, count: count)
        }
        deinit {
            values.deinitialize(count: count)
            values.deallocate()
        }
    }
}

/// A thread for a group could not be started (pthread_create's error number).
public struct PacingThreadError: Error, CustomStringConvertible {
    /// pthread_create's result.
    public var errno: Int32
    public var description: String { "cannot start a thread for a card's outputs: \(String(cString: strerror(errno)))" }
}

/// A flag set once, read from any thread.
package final class StopFlag: Sendable {
    private let lock = Lock()
    private nonisolated(unsafe) var value = false
    package init() {}
    package var isSet: Bool { lock.withLock { value } }
    package func set() { lock.withLock { value = true } }
}
