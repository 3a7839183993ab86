/// Turns the DRM trace records into page-flip completions per client, each with the kernel
/// timestamp of the vblank it latched at, and the vblank grid itself.
///
/// How a delivered event is told apart: with the probe on drm_send_event_timestamp_locked
/// (``TraceRecord/sent(file:crtc:sequence:type:timestamp:)``, traced right after each
/// `drm_vblank_event_delivered`), by the event's own type: a DRM_EVENT_FLIP_COMPLETE is a flip,
/// at the sequence and kernel timestamp the event carries; a vblank or CRTC-sequence event
/// answers a request. Without it (no kprobes, a trace saved without the probe), inferred:
/// - a request for exactly the delivered vblank is answered first;
/// - else a delivery to a client with a commit outstanding (seen through the commit kprobes) is
///   that commit's completion;
/// - else a delivery to a client that has an outstanding vblank request (drmWaitVBlank, seen as
///   `drm_vblank_event_queued`) or CRTC-sequence request (drmCrtcQueueSequence, seen through
///   Cadence's kprobe) whose sequence has passed answers that request;
/// - any other delivery is a page-flip (or atomic commit) completion. A client that flips and
///   also waits for the same vblank gets two deliveries; one of them answers the request.
/// - `file` 0 is the kernel's own commit (no client asked for an event: fbcon, a commit
///   without DRM_MODE_PAGE_FLIP_EVENT); it is tracked as its own client.
/// A delivery is held until its `sent` record, or until its CRTC's vblank, the client's next
/// delivery or (without the send probe) the client's next record shows none is coming; then
/// it is inferred from the state at delivery.
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
    private struct Held {
        var crtc: Int32; var sequence: UInt32; var time: Int64
        /// The record traced just before was this client's request (or commit) kprobe.
        var afterRequestProbe = false, afterCommitProbe = false
    }
    private struct CRTCState {
        var last: UInt64? = nil
        /// Recent (sequence, timestamp) pairs, oldest first (at most `recentLimit`).
        var recent: [(UInt64, Int64)] = []
        var pending: [Flip] = []
    }

    private var crtcs: [Int32: CRTCState] = [:]
    private var requests: [UInt64: [Request]] = [:]
    /// Commit times (trace clock) per client since its last flip, oldest first.
    private var commits: [UInt64: [Int64]] = [:]
    /// Deliveries waiting for their `sent` record, per client.
    private var held: [UInt64: Held] = [:]
    /// The previous record, when it was a request or commit kprobe: (client, is a request).
    private var lastProbe: (file: UInt64, request: Bool)?
    /// The send probe is on in this trace (told, or learned from the first `sent` record).
    private var typed: Bool
    private var lastCRTC: [UInt64: Int32] = [:]
    /// The process each client was seen in (from its requests and commits).
    public private(set) var tasks: [UInt64: TraceTask] = [:]
    /// Deliveries that answered a vblank or CRTC-sequence request (not flips).
    public private(set) var requestDeliveries = 0
    /// Flips whose vblank event was missing (timestamp extrapolated).
    public private(set) var inexactFlips = 0
    /// Deliveries classified by the event's own type (the `sent` probe), not inferred.
    public private(set) var typedDeliveries = 0
    /// The send probe read something other than the delivery it follows (another kernel's
    /// struct layout): its records are ignored.
    public private(set) var sendProbeMismatch = false
    /// Commits kept per client (a client whose flips are never seen cannot grow the tracker).
    static let commitLimit = 8
    /// Outstanding requests kept per client; older ones are dropped (a client that never
    /// collects its events cannot grow the tracker).
    public static let requestLimit = 64
    static let recentLimit = 16

    /// `sendProbe`: whether the trace has the send probe's records (a live instance knows;
    /// a saved trace can be scanned for them); nil learns it from the first `sent` record.
    /// Known up front, a delivery waits for its `sent` record across the client's other
    /// records (another CPU's commit or request can be traced in between).
    public init(sendProbe: Bool? = nil) { typed = sendProbe ?? false }

    /// Feeds one record; appends what it completed to `out`.
    public mutating func add(_ record: TraceRecord, into out: inout [Event]) {
        let probe = lastProbe
        lastProbe = nil
        switch record {
        case let .vblank(crtc, seq, time):
            for (file, h) in held where h.crtc == crtc { resolve(file, into: &out, always: true) }
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
                if f.timestamp != 0 {   // the event's own timestamp
                } else if let t = Self.time(of: f.sequence, in: c.recent) { f.timestamp = t } else { f.timestamp = Self.extrapolate(f.sequence, c.recent); f.exact = false; inexactFlips += 1 }
                out.append(.flip(f))
                k += 1
            }
            if k > 0 { c.pending.removeFirst(k) }
            crtcs[crtc] = c
        case let .vblankRequest(file, crtc, seq, task):
            resolve(file, into: &out)
            addRequest(file, Request(crtc: crtc, sequence: seq, flagsAny: false), task)
        case let .sequenceRequest(file, seq, flags, task):
            resolve(file, into: &out)
            lastProbe = (file, true)
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
            resolve(file, into: &out)
            lastProbe = (file, false)
            if tasks[file] == nil { tasks[file] = task }
            if flags & 1 != 0 && flags & 0x100 == 0 {
                var list = commits[file] ?? []
                list.append(time)
                if list.count > Self.commitLimit { list.removeFirst(list.count - Self.commitLimit) }
                commits[file] = list
            }
        case let .delivered(file, crtc, seq, time):
            resolve(file, into: &out, always: true)
            if file != 0 { lastCRTC[file] = crtc }
            var h = Held(crtc: crtc, sequence: seq, time: time)
            if let p = probe, p.file == file { if p.request { h.afterRequestProbe = true } else { h.afterCommitProbe = true } }
            held[file] = h
        case let .sent(file, crtc, seq, type, time):
            let h = held.removeValue(forKey: file)
            // The probe reads the event through fixed struct offsets: when what it read
            // disagrees with the delivery it follows, this kernel's layout differs, and the
            // probe's records are ignored from then on (deliveries are inferred).
            // (Type 0: the helpers' own event for a commit no client asked one for, file 0;
            // its sequence is never filled in.)
            if let h, h.crtc != crtc || (1...3 ~= type && h.sequence != seq) { sendProbeMismatch = true; typed = false }
            if sendProbeMismatch {
                if let h { held[file] = h }
                return
            }
            typed = true
            if file != 0 { lastCRTC[file] = crtc }
            switch type {
            case DRMEventType.flipComplete:
                typedDeliveries += 1
                var c = crtcs[crtc] ?? CRTCState()
                let s = Self.unwrap(seq, after: c.last)
                let at = h?.time ?? Int64.max
                let f = Flip(file: file, crtc: crtc, sequence: s, timestamp: time, exact: true, deliveredAt: h?.time ?? 0, committedAt: takeCommit(file, upTo: at))
                if c.pending.isEmpty && c.last.map({ s <= $0 }) == true { out.append(.flip(f)) } else { c.pending.append(f) }
                crtcs[crtc] = c
            case DRMEventType.vblank, DRMEventType.crtcSequence:
                typedDeliveries += 1
                requestDeliveries += 1
                if var list = requests[file], !list.isEmpty {
                    let i = list.firstIndex { ($0.crtc == nil || $0.crtc == crtc) && $0.sequence == seq } ?? 0
                    list.remove(at: i)
                    requests[file] = list
                }
            default:
                if let h { held[file] = h }   // not a vblank event: the delivery waits on
            }
        }
    }

    /// Infers what `file`'s held delivery was (its `sent` record is not coming), from the
    /// state when it was delivered: nothing about this client has been fed since.
    ///
    /// In a trace with the send probe, a delivery without its `sent` record is one whose probe
    /// the kernel skipped because the vblank interrupted another kprobe's handler (kprobes do
    /// not nest). When that was this client's request kprobe, at the entry of
    /// drm_crtc_queue_sequence_ioctl, the request was not queued yet (the kernel moves its
    /// passed target to the next vblank): the delivery does not answer it. Likewise a commit
    /// whose kprobe was interrupted had not armed its event yet.
    private mutating func resolve(_ file: UInt64, into out: inout [Event], always: Bool = false) {
        guard always || !typed, let h = held.removeValue(forKey: file) else { return }
        let crtc = h.crtc, seq = h.sequence, time = h.time
        let skipRequest = typed && h.afterRequestProbe, skipCommit = typed && h.afterCommitProbe
        // A request for exactly this vblank is answered first; then an outstanding commit
        // completes; then a request whose target has passed.
        if file != 0, var list = requests[file], !list.isEmpty {
            let candidates = list.indices.dropLast(skipRequest ? 1 : 0)
            let queued = commits[file]?.filter { $0 <= time } ?? []
            let outstanding = queued.count > (skipCommit ? 1 : 0)
            let exact = candidates.first { (list[$0].crtc == nil || list[$0].crtc == crtc) && list[$0].sequence == seq }
            let passed = outstanding ? nil : candidates.first { i in
                let r = list[i]
                return (r.crtc == nil || r.crtc == crtc) && (r.sequence.map { Int32(bitPattern: seq &- $0) >= 0 } ?? true)
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
        let committed = takeCommit(file, upTo: time, keepingLast: skipCommit)
        var f = Flip(file: file, crtc: crtc, sequence: s, timestamp: 0, exact: true, deliveredAt: time, committedAt: committed)
        if c.pending.isEmpty, let t = Self.time(of: s, in: c.recent) {
            f.timestamp = t
            out.append(.flip(f))
        } else {
            c.pending.append(f)
        }
        crtcs[crtc] = c
    }

    /// The client's last commit at or before `time` (its flip's commit); drops those commits,
    /// keeps later ones (a commit for the next frame traced before this completion).
    /// `keepingLast`: the newest of them is not this flip's (its kprobe was interrupted).
    private mutating func takeCommit(_ file: UInt64, upTo time: Int64, keepingLast: Bool = false) -> Int64? {
        guard var list = commits[file] else { return nil }
        var before = list.filter { $0 <= time }
        if keepingLast, !before.isEmpty { before.removeLast() }
        list.removeFirst(min(before.count, list.count))
        commits[file] = list.isEmpty ? nil : list
        return before.last
    }

    /// Resolves the flips still waiting for their vblank (end of the trace): their timestamps
    /// are extrapolated from the last traced vblanks.
    public mutating func finish(into out: inout [Event]) {
        for file in held.keys.sorted() { resolve(file, into: &out, always: true) }
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
