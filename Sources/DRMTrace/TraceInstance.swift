#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a trace instance could not be set up; its description is one line for the user.
public struct TraceSetupError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ d: String) { description = d }
}

/// A private tracefs instance (`<tracefs>/instances/cadence-observe-<pid>`) with the DRM vblank
/// events enabled, so that observing neither disturbs nor is disturbed by other tracers.
///
/// Set-up: removes instances and kprobes left by killed `cadence observe` runs (their pid is
/// gone), creates the instance, sets its clock to `mono` (trace times comparable with vblank
/// timestamps) and turns pointer hashing off in it (so that the kprobes' raw `drm_file`
/// pointers match the events'), adds three kprobes in a group of its own
/// (drm_crtc_queue_sequence_ioctl, drm_mode_atomic_ioctl, drm_mode_page_flip_ioctl: who asked
/// for a vblank, who committed when) when the kernel allows them, and enables the events.
/// ``remove()`` (also on deinit) disables them, removes the instance and the kprobes: tracefs is
/// left as it was found.
public final class TraceInstance {
    public let root: String
    public let name: String
    public var path: String { root + "/instances/" + name }
    /// False when the kprobes could not be added (no CONFIG_KPROBE_EVENTS, lockdown): CRTC-
    /// sequence requests then count as flips and commit times are unknown.
    public private(set) var kprobes = false
    /// True when the probe on drm_send_event_timestamp_locked is on: each delivered event's
    /// own type, sequence and timestamp are traced.
    public private(set) var sendProbe = false
    /// False when the kernel has no `hash-ptr` option (older than 6.1 lines used raw pointers).
    public private(set) var rawPointers = false
    private var pipe: Int32 = -1
    private var removed = false
    private var group: String { "cadence_observe_\(ownPid)" }
    private let ownPid: Int32

    static let prefix = "cadence-observe-"

    /// The tracefs mount: `/sys/kernel/tracing`, else the debugfs path when tracefs is only
    /// mounted there; `/sys/kernel/tracing` when neither can be seen (not mounted, or no
    /// permission: ``init(root:)`` says which).
    public static func findRoot() -> String {
        for r in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            if access(r + "/instances", F_OK) == 0 || errno == EACCES { return r }
        }
        return "/sys/kernel/tracing"
    }

    /// Sets up the instance under `root` (see the type's description).
    public init(root: String) throws {
        self.root = root
        ownPid = getpid()
        name = Self.prefix + String(ownPid)
        let permission = TraceSetupError("no permission to use tracefs at \(root): run as root (observing reads the kernel's DRM trace events)")
        if access(root + "/instances", F_OK) != 0 {
            if errno == EACCES || errno == EPERM { throw permission }
            throw TraceSetupError("tracefs is not mounted at \(root) (mount -t tracefs nodev /sys/kernel/tracing)")
        }
        guard access(root + "/instances", W_OK) == 0 else { throw permission }
        Self.removeStale(root: root)
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            let e = errno
            if e == EACCES || e == EPERM { throw permission }
            throw TraceSetupError("cannot create trace instance \(path): \(String(cString: strerror(e)))")
        }
        do {
            guard access(path + "/events/drm/drm_vblank_event/enable", F_OK) == 0 else {
                throw TraceSetupError("this kernel has no DRM trace events (events/drm/drm_vblank_event in \(root))")
            }
            try Self.write("mono", to: path + "/trace_clock")
            rawPointers = (try? Self.write("nohash-ptr", to: path + "/trace_options")) != nil
            if rawPointers { addKprobes() }
            for e in [TraceEventName.vblank, TraceEventName.queued, TraceEventName.delivered] {
                try Self.write("1", to: path + "/events/drm/\(e)/enable")
            }
            if kprobes { try Self.write("1", to: path + "/events/\(group)/enable") }
            pipe = open(path + "/trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard pipe >= 0 else { throw TraceSetupError("cannot open \(path)/trace_pipe: \(String(cString: strerror(errno)))") }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// Reads what the trace pipe has, waiting up to `timeoutMs` for data; 0 bytes on timeout.
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMs: Int32) throws -> Int {
        var p = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, timeoutMs)
        if r < 0 { return errno == EINTR ? 0 : try fail("poll") }
        if r == 0 { return 0 }
        let n = Glibc.read(pipe, buffer.baseAddress, buffer.count)
        if n < 0 { return errno == EAGAIN || errno == EINTR ? 0 : try fail("read") }
        return n
    }

    private func fail(_ what: String) throws -> Int {
        throw TraceSetupError("\(what) \(path)/trace_pipe: \(String(cString: strerror(errno)))")
    }

    /// Disables the events, removes the instance and the kprobes. Idempotent.
    public func remove() {
        guard !removed else { return }
        removed = true
        if pipe >= 0 { close(pipe); pipe = -1 }
        Self.removeInstance(root: root, name: name, pid: ownPid)
    }

    private func addKprobes() {
        // drm_crtc_queue_sequence: u32 crtc_id, u32 flags, u64 sequence; drm_mode_atomic:
        // u32 flags first; drm_mode_crtc_page_flip: crtc_id, fb_id, flags. `file` is the
        // ioctl's third argument.
        let probes = [
            "p:\(group)/\(TraceEventName.sequenceProbe) drm_crtc_queue_sequence_ioctl file=$arg3:x64 flags=+4($arg2):u32 seq=+8($arg2):u64",
            "p:\(group)/\(TraceEventName.atomicProbe) drm_mode_atomic_ioctl file=$arg3:x64 flags=+0($arg2):u32",
            "p:\(group)/\(TraceEventName.pageFlipProbe) drm_mode_page_flip_ioctl file=$arg3:x64 flags=+8($arg2):u32",
        ]
        // drm_send_event_timestamp_locked(dev, &e->base, now), e a drm_pending_vblank_event:
        // base.file_priv at 32, pipe at 72, event.base.type at 88, event.vbl.sequence (and
        // event.seq.sequence's low half) at 112 (6.1's layout, checked against its drm.ko).
        // Optional: without it, which delivery is the flip is inferred (see FlipTracker).
        let send = "p:\(group)/\(TraceEventName.sendProbe) drm_send_event_timestamp_locked file=+32($arg2):x64 crtc=+72($arg2):u32 seq=+112($arg2):u32 type=+88($arg2):u32 time=$arg3:s64"
        for p in probes {
            guard (try? Self.append(p, to: root + "/kprobe_events")) != nil else {
                Self.removeKprobes(root: root, pid: ownPid)
                return
            }
        }
        kprobes = true
        sendProbe = (try? Self.append(send, to: root + "/kprobe_events")) != nil
    }

    /// Removes instances (and kprobe groups) of `cadence observe` runs whose process is gone.
    static func removeStale(root: String) {
        guard let dir = opendir(root + "/instances") else { return }
        var stale: [(String, Int32)] = []
        while let e = readdir(dir) {
            let n = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard n.hasPrefix(prefix), let pid = Int32(n.dropFirst(prefix.count)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append((n, pid)) }
        }
        closedir(dir)
        for (n, pid) in stale { removeInstance(root: root, name: n, pid: pid) }
    }

    static func removeInstance(root: String, name: String, pid: Int32) {
        let path = root + "/instances/" + name
        _ = try? write("0", to: path + "/events/enable")
        rmdir(path)
        removeKprobes(root: root, pid: pid)
    }

    static func removeKprobes(root: String, pid: Int32) {
        let group = "cadence_observe_\(pid)"
        for e in [TraceEventName.sequenceProbe, TraceEventName.atomicProbe, TraceEventName.pageFlipProbe, TraceEventName.sendProbe] {
            _ = try? append("-:\(group)/\(e)", to: root + "/kprobe_events")
        }
    }

    static func write(_ text: String, to path: String) throws {
        try put(text, path, O_WRONLY | O_TRUNC)
    }

    /// Appends (O_APPEND, never O_TRUNC: truncating kprobe_events would remove every probe).
    static func append(_ text: String, to path: String) throws {
        try put(text, path, O_WRONLY | O_APPEND)
    }

    private static func put(_ text: String, _ path: String, _ flags: Int32) throws {
        let fd = open(path, flags | O_CLOEXEC)
        guard fd >= 0 else { throw TraceSetupError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((text + "\n").utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw TraceSetupError("cannot write \(path): \(String(cString: strerror(errno)))") }
    }
}
