/// Turns the DRM trace records into page-flip completions per client, each with the kernel
/// timestamp of the vblank it latched at, and the vblank grid itself.
///
/// How a delivered event is told apart:
/// - a delivery to a client with a commit outstanding (seen through the commit kprobes) is
///   that commit's completion;
/// - else a delivery to a client that has an outstanding vblank request (drmWaitVBlank, seen as
///   `drm_vblank_event_queued`) or CRTC-sequence request (drmCrtcQueueSequence, seen through
///   Cadence's kprobe) whose sequence has passed answers that request;
/// - any other delivery is a page-flip (or atomic commit) completion. A client that flips and
///   also waits for the same vblank gets two deliveries; one of them answers the request.
/// - `file` 0 is the kernel's own commit (no client asked for an event: fbcon, a commit
///   without DRM_MODE_PAGE_FLIP_EVENT); it is tracked as its own client.
///
/// The flip's timestamp is the `drm_vblank_event` of the same CRTC and sequence (the kernel
/// traces it right after delivering that vblank's events, or before, for drivers that send
/// completions from their own interrupt handler). When that vblank's event is missing (lost
/// trace events) the timestamp is extrapolated from the nearest traced vblank and the flip
/// is marked inexact. 32-bit sequences are unwrapped to 64 bits per CRTC.
public struct FlipTracker {
    /// A page-flip completion.
    public struct Flip: Equatable, Sendable {
        public var file: UInt64
        public var crtc: Int32
        /// Vblank sequence, unwrapped to 64 bits.
        public var sequence: UInt64
        /// Kernel timestamp of that vblank, CLOCK_MONOTONIC ns.
        public var timestamp: Int64
        /// False when the vblank's own trace event was missing and the time was extrapolated.
        public var exact: Bool
        /// When the event was delivered (trace clock, mono ns).
        public var deliveredAt: Int64
        /// The client's last commit asking for an event since its previous flip (mono ns), when
        /// the commit kprobes are on.
        public var committedAt: Int64?
    }

    /// What the tracker produced from a record.
    public enum Event: Equatable, Sendable {
        case vblank(crtc: Int32, sequence: UInt64, timestamp: Int64)
        case flip(Flip)
    }

    private struct Request { var crtc: Int32?; var sequence: UInt32?; var flagsAny: Bool }
    private struct CRTCState {
        var last: UInt64? = nil
        /// Recent (sequence, timestamp) pairs, oldest first (at most `recentLimit`).
        var recent: [(UInt64, Int64)] = []
        var pending: [Flip] = []
    }

    private var crtcs: [Int32: CRTCState] = [:]
    private var requests: [UInt64: [Request]] = [:]
    private var commits: [UInt64: Int64] = [:]
    private var lastCRTC: [UInt64: Int32] = [:]
    /// The process each client was seen in (from its requests and commits).
    public private(set) var tasks: [UInt64: TraceTask] = [:]
    /// Deliveries that answered a vblank or CRTC-sequence request (not flips).
    public private(set) var requestDeliveries = 0
    /// Flips whose vblank event was missing (timestamp extrapolated).
    public private(set) var inexactFlips = 0
    /// Outstanding requests kept per client; older ones are dropped (a client that never
    /// collects its events cannot grow the tracker).
    public static let requestLimit = 64
    static let recentLimit = 16

    public init() {}

    /// Feeds one record; appends what it completed to `out`.
    public mutating func add(_ record: TraceRecord, into out: inout [Event]) {
        switch record {
        case let .vblank(crtc, seq, time):
            var c = crtcs[crtc] ?? CRTCState()
            let s = Self.unwrap(seq, after: c.last)
            c.last = max(c.last ?? s, s)
            c.recent.append((s, time))
            if c.recent.count > Self.recentLimit { c.recent.removeFirst(c.recent.count - Self.recentLimit) }
            out.append(.vblank(crtc: crtc, sequence: s, timestamp: time))
            // Resolve the flips waiting for this vblank or an earlier one.
            var k = 0
            while k < c.pending.count && c.pending[k].sequence <= s {
                var f = c.pending[k]
                if let t = Self.time(of: f.sequence, in: c.recent) { f.timestamp = t } else { f.timestamp = Self.extrapolate(f.sequence, c.recent); f.exact = false; inexactFlips += 1 }
                out.append(.flip(f))
                k += 1
            }
            if k > 0 { c.pending.removeFirst(k) }
            crtcs[crtc] = c
        case let .vblankRequest(file, crtc, seq, task):
            addRequest(file, Request(crtc: crtc, sequence: seq, flagsAny: false), task)
        case let .sequenceRequest(file, seq, flags, task):
            // The CRTC's count now (the client's last CRTC, or the only one traced): the kernel
            // moves a passed target to the next vblank (NEXT_ON_MISS, 2) and adds a relative
            // one (RELATIVE, 1) to it.
            let crtc = lastCRTC[file] ?? (crtcs.count == 1 ? crtcs.keys.first : nil)
            let current = crtc.flatMap { crtcs[$0]?.last }
            var target: UInt64? = seq
            if flags & 1 != 0 { target = current.map { $0 &+ seq } }
            if let t = target, let c = current, flags & 2 != 0, t <= c { target = c + 1 }
            addRequest(file, Request(crtc: nil, sequence: target.map { UInt32(truncatingIfNeeded: $0) }, flagsAny: target == nil), task)
        case let .commit(file, flags, task, time):
            // DRM_MODE_PAGE_FLIP_EVENT (1) asked, DRM_MODE_ATOMIC_TEST_ONLY (0x100) not.
            if tasks[file] == nil { tasks[file] = task }
            if flags & 1 != 0 && flags & 0x100 == 0 { commits[file] = time }
        case let .delivered(file, crtc, seq, time):
            // With commit times known (kprobes), a delivery to a client with a commit outstanding
            // is its flip; otherwise (or without kprobes) one answering a passed request is not.
            // A request for exactly this vblank is answered first; then an outstanding commit
            // completes; then a request whose target has passed.
            if file != 0 { lastCRTC[file] = crtc }
            if file != 0, var list = requests[file], !list.isEmpty {
                let exact = list.firstIndex { ($0.crtc == nil || $0.crtc == crtc) && $0.sequence == seq }
                let passed = commits[file] != nil ? nil : list.firstIndex { r in
                    (r.crtc == nil || r.crtc == crtc) && (r.sequence.map { Int32(bitPattern: seq &- $0) >= 0 } ?? true)
                }
                if let i = exact ?? passed {
                    list.remove(at: i)
                    requests[file] = list
                    requestDeliveries += 1
                    return
                }
            }
            var c = crtcs[crtc] ?? CRTCState()
            let s = Self.unwrap(seq, after: c.last)
            let committed = commits.removeValue(forKey: file)
            var f = Flip(file: file, crtc: crtc, sequence: s, timestamp: 0, exact: true, deliveredAt: time, committedAt: committed)
            if c.pending.isEmpty, let t = Self.time(of: s, in: c.recent) {
                f.timestamp = t
                out.append(.flip(f))
            } else {
                c.pending.append(f)
            }
            crtcs[crtc] = c
        }
    }

    /// Resolves the flips still waiting for their vblank (end of the trace): their timestamps
    /// are extrapolated from the last traced vblanks.
    public mutating func finish(into out: inout [Event]) {
        for key in crtcs.keys.sorted() {
            guard var c = crtcs[key] else { continue }
            for var f in c.pending {
                if let t = Self.time(of: f.sequence, in: c.recent) { f.timestamp = t } else {
                    f.timestamp = Self.extrapolate(f.sequence, c.recent); f.exact = false; inexactFlips += 1
                }
                out.append(.flip(f))
            }
            c.pending.removeAll()
            crtcs[key] = c
        }
    }

    private mutating func addRequest(_ file: UInt64, _ r: Request, _ task: TraceTask) {
        if tasks[file] == nil { tasks[file] = task }
        var list = requests[file] ?? []
        list.append(r)
        if list.count > Self.requestLimit { list.removeFirst(list.count - Self.requestLimit) }
        requests[file] = list
    }

    /// The 64-bit sequence nearest to `last` whose low 32 bits are `seq`.
    static func unwrap(_ seq: UInt32, after last: UInt64?) -> UInt64 {
        guard let last else { return UInt64(seq) }
        let delta = Int64(Int32(bitPattern: seq &- UInt32(truncatingIfNeeded: last)))
        let v = Int64(bitPattern: last) &+ delta
        return v < 0 ? UInt64(seq) : UInt64(v)
    }

    private static func time(of seq: UInt64, in recent: [(UInt64, Int64)]) -> Int64? {
        for (s, t) in recent.reversed() where s == seq { return t }
        return nil
    }

    /// `seq`'s time from the traced vblank nearest to it and the mean spacing of the recent ones.
    private static func extrapolate(_ seq: UInt64, _ recent: [(UInt64, Int64)]) -> Int64 {
        guard let last = recent.last else { return 0 }
        guard let first = recent.first, last.0 > first.0 else { return last.1 }
        let period = Double(last.1 - first.1) / Double(last.0 - first.0)
        let nearest = recent.min { a, b in
            (a.0 > seq ? a.0 - seq : seq - a.0) < (b.0 > seq ? b.0 - seq : seq - b.0)
        } ?? last
        let d = Double(Int64(bitPattern: seq &- nearest.0))
        return nearest.1 + Int64((d * period).rounded())
    }
}
