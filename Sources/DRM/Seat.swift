#if canImport(Glibc)
import Glibc
#endif
import CSeat
import SystemPackage

/// What a seat told its session (libseat's listener callbacks), in the order they came.
public enum SeatEvent: Equatable, Sendable {
    /// The seat is usable again (VT switched back): devices work, DRM master is back.
    case enabled
    /// The seat is going away (VT switched away): stop using its devices, then call
    /// ``SeatSession/acknowledgeDisable()`` promptly, or the seat provider revokes them.
    case disabled
}

/// A session on a seat through libseat (seatd, logind, or what `LIBSEAT_BACKEND` names): opens
/// device nodes the user may not open directly, and reports VT switches as ``SeatEvent``s.
/// Closes the seat in deinit. Not thread-safe: use it from the thread that drives the display.
///
/// libseat's callbacks run only inside ``dispatch(timeoutMilliseconds:)`` (and the open); they
/// reach this object through a userdata pointer to an event queue the session keeps alive for
/// its whole life, so no Swift context is captured by C.
public final class SeatSession {
    /// The libseat backends tried, in order, when `LIBSEAT_BACKEND` is not set. libseat's
    /// `builtin` backend (an in-process seatd that needs root) is left out on purpose: "a seat
    /// answers" means a seat daemon or logind does.
    public static let defaultBackends = ["seatd", "logind"]

    private let handle: OpaquePointer
    private let queue: EventQueue
    private let listener: UnsafeMutablePointer<libseat_seat_listener>
    /// The libseat backend that answered ("seatd", "logind", or `LIBSEAT_BACKEND`'s value).
    public let backend: String
    /// The seat's name ("seat0").
    public let name: String
    /// True between an enable and a disable (the seat's devices may be used).
    public private(set) var isActive = false

    final class EventQueue {
        var events: [SeatEvent] = []
    }

    private init(handle: OpaquePointer, queue: EventQueue, listener: UnsafeMutablePointer<libseat_seat_listener>, backend: String) {
        self.handle = handle
        self.queue = queue
        self.listener = listener
        self.backend = backend
        name = libseat_seat_name(handle).map { String(cString: $0) } ?? "seat"
    }

    deinit {
        libseat_close_seat(handle)
        listener.deallocate()
    }

    /// Opens a session on the seat and waits up to `timeoutMilliseconds` for it to be enabled.
    ///
    /// `backends` are tried in order (each one by setting `LIBSEAT_BACKEND` for the call); with
    /// `LIBSEAT_BACKEND` already set in the environment only that one is tried. libseat's own log
    /// is silenced unless `CADENCE_SEAT_LOG` is set (then it goes to stderr at debug level), so
    /// a failed probe is the one error thrown. Throws a ``SeatError`` naming every backend tried.
    public static func open(backends: [String] = defaultBackends, timeoutMilliseconds: Int32 = 2000) throws -> SeatSession {
        let verbose = getenv("CADENCE_SEAT_LOG") != nil
        libseat_set_log_level(verbose ? LIBSEAT_LOG_LEVEL_DEBUG : LIBSEAT_LOG_LEVEL_SILENT)
        let preset = getenv("LIBSEAT_BACKEND").map { String(cString: $0) }
        let tried = preset.map { [$0] } ?? backends
        var failures: [(backend: String, errno: Errno)] = []
        for backend in tried {
            do {
                let session = try openLock.withLock { try openOne(backend: backend, setEnvironment: preset == nil) }
                try session.waitForEnable(timeoutMilliseconds: timeoutMilliseconds)
                return session
            } catch let e as SeatError {
                failures.append((backend, e.failures.first?.errno ?? Errno(rawValue: EIO)))
            } catch let e as DRMError {
                // The connection failed while waiting for the enable (libseat_dispatch).
                failures.append((backend, e.errno))
            }
        }
        throw SeatError(failures: failures)
    }

    /// libseat 0.7 takes its backend only from `LIBSEAT_BACKEND`: opens through this process are
    /// serialised so that two never set it at once.
    private static let openLock = SeatOpenLock()

    private static func openOne(backend: String, setEnvironment: Bool) throws -> SeatSession {
        let queue = EventQueue()
        let listener = UnsafeMutablePointer<libseat_seat_listener>.allocate(capacity: 1)
        listener.initialize(to: libseat_seat_listener(
            enable_seat: { _, userdata in
                guard let userdata else { return }
                Unmanaged<EventQueue>.fromOpaque(userdata).takeUnretainedValue().events.append(.enabled)
            },
            disable_seat: { _, userdata in
                guard let userdata else { return }
                Unmanaged<EventQueue>.fromOpaque(userdata).takeUnretainedValue().events.append(.disabled)
            }))
        if setEnvironment { setenv("LIBSEAT_BACKEND", backend, 1) }
        defer { if setEnvironment { unsetenv("LIBSEAT_BACKEND") } }
        errno = 0
        // The queue outlives the seat: the session owns both and closes the seat first.
        guard let handle = libseat_open_seat(listener, Unmanaged.passUnretained(queue).toOpaque()) else {
            let e = Errno(rawValue: errno == 0 ? ENOENT : errno)
            listener.deallocate()
            throw SeatError(failures: [(backend, e)])
        }
        return SeatSession(handle: handle, queue: queue, listener: listener, backend: backend)
    }

    private func waitForEnable(timeoutMilliseconds: Int32) throws {
        var left = Int64(timeoutMilliseconds)
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        _ = takeEvents()
        // libseat's noop backend (a seat that opens nodes with open(2)) never sends an enable:
        // it is always usable.
        if backend == "noop" { isActive = true }
        while !isActive && left > 0 {
            _ = try dispatch(timeoutMilliseconds: Int32(min(left, 100)))
            _ = takeEvents()
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            left = Int64(timeoutMilliseconds) - (Int64(now.tv_sec - start.tv_sec) * 1000 + Int64(now.tv_nsec - start.tv_nsec) / 1_000_000)
        }
        // An inactive seat (another session owns the VT): no device can be opened.
        if !isActive { throw SeatError(failures: [(backend, Errno(rawValue: EBUSY))]) }
    }

    /// The descriptor to poll for seat events (libseat_get_fd); readable means: call
    /// ``dispatch(timeoutMilliseconds:)``.
    public var fileDescriptor: Int32 { libseat_get_fd(handle) }

    /// Reads and dispatches the seat's messages (libseat_dispatch), waiting up to
    /// `timeoutMilliseconds` (0: no wait, -1: forever). Returns the number processed.
    @discardableResult
    public func dispatch(timeoutMilliseconds: Int32 = 0) throws -> Int {
        try retrying("libseat_dispatch", name) {
            let r = libseat_dispatch(handle, timeoutMilliseconds)
            guard r >= 0 else { throw Errno(rawValue: errno) }
            return Int(r)
        }
    }

    /// True when a ``SeatEvent/disabled`` is waiting in ``takeEvents()``, after reading the seat's
    /// messages for up to `timeoutMilliseconds`. seatd takes DRM master away before it sends the
    /// disable, so a flip refused with EACCES may be this, not a lost device.
    public func disablePending(timeoutMilliseconds: Int32 = 50) -> Bool {
        if queue.events.last == .disabled { return true }
        _ = try? dispatch(timeoutMilliseconds: timeoutMilliseconds)
        return queue.events.last == .disabled
    }

    /// The events received since the last call, oldest first; updates ``isActive``.
    public func takeEvents() -> [SeatEvent] {
        let events = queue.events
        queue.events.removeAll()
        for e in events { isActive = e == .enabled }
        return events
    }

    /// Acknowledges a ``SeatEvent/disabled`` (libseat_disable_seat): from now on the seat's
    /// devices must not be used until ``SeatEvent/enabled``.
    public func acknowledgeDisable() throws {
        isActive = false
        if libseat_disable_seat(handle) != 0 {
            throw DRMError(call: "libseat_disable_seat", object: name, errno: Errno(rawValue: errno))
        }
    }

    /// Opens a device node on the seat (libseat_open_device) as a ``DRMDevice`` that closes it
    /// on the seat (libseat_close_device, then close(2)) in deinit and keeps the session alive.
    public func openDevice(_ path: String) throws -> DRMDevice {
        var fd: Int32 = -1
        errno = 0
        let id = libseat_open_device(handle, path, &fd)
        if id < 0 || fd < 0 {
            throw DRMError(call: "libseat_open_device", object: path, errno: Errno(rawValue: errno == 0 ? EIO : errno))
        }
        let handle = handle
        return DRMDevice(sys: LiveDRM.shared, path: path, adopting: fd, seat: self) { [self] in
            // `self` captured: the seat stays open until its last device is closed.
            _ = self
            libseat_close_device(handle, id)
            _ = Glibc.close(fd)
        }
    }
}

/// No seat answered: each libseat backend tried and the errno it failed with.
public struct SeatError: Error, Sendable, CustomStringConvertible {
    /// (backend, errno) for each backend tried, in order.
    public var failures: [(backend: String, errno: Errno)]

    public init(failures: [(backend: String, errno: Errno)]) { self.failures = failures }

    /// One line: "no seat answered (seatd: No such file or directory (ENOENT); logind: …)".
    public var description: String {
        let parts = failures.map { f -> String in
            f.errno == Errno(rawValue: EBUSY)
                ? "\(f.backend): the seat is not active (another session has the VT)"
                : "\(f.backend): \(f.errno.description) (\(DRMError.symbol(f.errno)))"
        }
        return "no seat answered (\(parts.joined(separator: "; ")))"
    }
}

/// A process-wide mutex (pthread) around setting `LIBSEAT_BACKEND` and opening a seat.
final class SeatOpenLock: @unchecked Sendable {
    private let m: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        m = .allocate(capacity: 1)
        m.initialize(to: pthread_mutex_t())
        pthread_mutex_init(m, nil)
    }

    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}
