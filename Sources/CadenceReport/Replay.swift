import CadenceCore
import Foundation

/// A display that plays back a recorded run: vblanks at the recorded kernel timestamps (and
/// sequences; vblanks no frame was shown at are interpolated between recorded ones), and each
/// submitted frame completing as it did in the recording — presented at its recorded vblank
/// and received when it was, discarded, failed, or never confirmed. Virtual time, no sleeping.
///
/// Frames are matched by pacer frame id (the pacer numbers frames the same way on every run).
/// A frame submitted after its recorded vblank had already passed, or not in the recording, is
/// shown at the next vblank and counted in ``divergences``.
///
/// Limits: the log records when each flip completion was received and when each display-link
/// callback woke, but not when vblank events the pacer asked for without a callback arrived. A
/// stall of the whole process that delayed only such events replays as a late flip event
/// (cause flip-late instead of scheduler-late); everything else is reproduced exactly.
public final class ReplayDisplay: DisplayBackend, WorkSimulating {
    public let name: String = "replay"
    public let crtcID: UInt32
    public let refreshInterval: Double
    public let vrrRange: ClosedRange<Double>?
    public let hasHardwareVBlank: Bool
    public let surface: PixelSurface?
    public let queueCapacity: Int
    /// Submissions that could not follow the recording.
    public private(set) var divergences = 0
    /// Frames after this id are made past the end of the log (the frame after a rotated file's
    /// last, see ``Replay``): they have no record to diverge from.
    var pastTheLogAfter: FrameID? = nil

    private var clock: Nanoseconds
    private(set) var seqs: [UInt64]
    private(set) var stamps: [Nanoseconds]
    // Pins with nanosecond precision (timestamps not a whole microsecond).
    private(set) var nsSeqs: [UInt64] = []
    private(set) var nsStamps: [Nanoseconds] = []
    private let byID: [FrameID: FrameRecord]
    private var busyLeft: [FrameID: Int] = [:]
    /// Vblank timestamp → when the recorded run woke for it (its callbacks' wake times).
    private var wakeAt: [Nanoseconds: Nanoseconds] = [:]
    /// Vblank sequence → when the recorded run woke for a callback planned at it (logs with
    /// `schedulerDelayNs`: planned vblank = wake − delay).
    private var wakeAtSequence: [UInt64: Nanoseconds] = [:]
    /// Vblank sequence → the earliest time the recorded run knew of it, where that was before
    /// its timestamp: a callback that woke for it earlier, or its flip completion received
    /// earlier. Hardware that stamps a vblank with the end of the blanking interval (the start of
    /// scanout) delivers its events before that time, as the fake display with jitter does.
    private var knownEarly: [UInt64: Nanoseconds] = [:]
    /// Vblank sequence → when the recorded run received its event, where that was over a quarter
    /// refresh late (logged as `lateVBlankEvents`): the run judged causes by how late its vblank
    /// events came (a late flip event while vblank events were on time is flip-late; both late
    /// is the process held up), so the replay delivers those events as late.
    private var lateVBlankEventAt: [UInt64: Nanoseconds] = [:]
    /// Events before their timestamps are replayed (`knownEarly`, flip receipts) only on a
    /// fixed-refresh display with a hardware vblank counter, where sequences and timestamps
    /// form a grid; elsewhere nothing is replayed before its timestamp.
    private var modelsEarlyEvents: Bool { hasHardwareVBlank && vrrRange == nil }
    private var loggedDelays = false
    private var pending: (id: FrameID, at: VBlank, received: Nanoseconds, kind: Int)? = nil
    private var requests: [UInt64] = []
    private var outbox: [(at: Nanoseconds, order: Int, event: BackendEvent)] = []
    private var startSequence: UInt64
    private var lastFlipSequence: UInt64 = 0
    private var pixel = [UInt32](repeating: 0, count: 1)
    private let pixelBase: UnsafeMutableRawPointer

    /// Why a log cannot be replayed.
    public struct Unreplayable: Error, CustomStringConvertible {
        public var description: String
    }

    /// A display playing back `log`. The log does not say where between two vblanks the run
    /// started: `startBetweenVBlanks` starts the clock half a refresh before the first callback's
    /// vblank (the first callback waits for it), otherwise at that callback's wake.
    public convenience init(log: RunLog, startBetweenVBlanks: Bool = false) throws {
        try self.init(log: log, startBetweenVBlanks: startBetweenVBlanks, refreshesEarlier: 0)
    }

    /// `refreshesEarlier`: start that many vblanks before the first callback's (a later file of
    /// a rotated log whose link was held back: its fresh link then aims at the recorded target).
    init(log: RunLog, startBetweenVBlanks: Bool, refreshesEarlier: UInt64) throws {
        let recs = log.records
        refreshInterval = LogAnalysis.refreshIntervalNs(log)
        vrrRange = log.header?.vrrRangeHz.flatMap { $0.count == 2 ? $0[0]...$0[1] : nil }
        hasHardwareVBlank = log.header?.hasHardwareVBlank ?? true
        queueCapacity = log.header?.queueCapacity ?? 2
        crtcID = recs.first?.crtc ?? 0
        var pairs: [UInt64: Nanoseconds] = [:]
        for r in recs where r.flipNs > 0 && (r.outcome == .onTime || r.outcome == .late) { pairs[r.sequence] = r.flipNs }
        guard !pairs.isEmpty else { throw Unreplayable(description: "no frame in the log reached the screen; nothing to replay") }
        seqs = pairs.keys.sorted()
        stamps = seqs.map { pairs[$0]! }
        var m: [FrameID: FrameRecord] = [:]
        for r in recs {
            m[r.id] = r
            if r.busyRetries > 0 { busyLeft[r.id] = r.busyRetries }
        }
        // A callback that ran late is replayed late, unless a flip completion arriving just then
        // (within 50 µs) is what woke it: that lateness is the flip's, and replays by itself.
        let receipts = recs.map(\.receivedNs).filter { $0 > 0 }.sorted()
        for r in recs where r.callbackNs > 0 && r.wakeNs > r.callbackNs {
            var lo = 0, hi = receipts.count
            while lo < hi { let mid = (lo + hi) / 2; if receipts[mid] < r.wakeNs &- 50_000 { lo = mid + 1 } else { hi = mid } }
            if lo < receipts.count && receipts[lo] <= r.wakeNs { continue }
            wakeAt[r.callbackNs] = Swift.max(wakeAt[r.callbackNs] ?? 0, r.wakeNs)
        }
        byID = m
        pixelBase = UnsafeMutableRawPointer.allocate(byteCount: 4, alignment: 4)
        surface = PixelSurface(base: pixelBase, width: 1, height: 1, stride: 4)
        clock = 0
        startSequence = 0
        // Display-link callbacks ran at vblanks no frame was shown at, too: their timestamps
        // (`callbackNs`) are kernel vblank timestamps; pin them on the timeline. They come from
        // vblank queries and events, which carry nanoseconds, while flip events carry
        // microseconds: queries and vblank events replay the nanosecond value, flip completions
        // keep their own (recorded) timestamp.
        // The grid refinement is only for kernel flip events, which carry whole microseconds (the
        // fake display's carry nanoseconds); the pins themselves also give a jittery fake display's
        // unshown vblanks their recorded timestamps, from which the run predicted its targets.
        let microsecondFlips = stamps.allSatisfy { $0 % 1000 == 0 }
        if hasHardwareVBlank && vrrRange == nil {
            for r in recs where r.callbackNs > 0 {
                let s = sequence(near: r.callbackNs)
                if abs(time(of: s) &- r.callbackNs) < clampedNanoseconds(refreshInterval / 4) { pairs[s] = r.callbackNs }
            }
            seqs = pairs.keys.sorted()
            stamps = seqs.map { pairs[$0]! }
            if microsecondFlips {
                nsSeqs = seqs.filter { pairs[$0]! % 1000 != 0 }
                nsStamps = nsSeqs.map { pairs[$0]! }
            }
        } else if let first = recs.min(by: { $0.id < $1.id }), first.callbackNs > 0 {
            // VRR: the link started at a vblank (the display's last one when the run began), which
            // the frames' minimum durations count from; no flip marks it: pin the first callback.
            // Without a vblank interrupt (bochs, virtio-gpu) likewise: the first callback's vblank
            // is the one the run queried, from which it predicted the first frame's target; the
            // flips after it are commit-completion times, a commit latency later.
            let s = sequence(near: first.callbackNs)
            if pairs[s] == nil && s < seqs[0] {
                pairs[s] = first.callbackNs
                seqs = pairs.keys.sorted()
                stamps = seqs.map { pairs[$0]! }
            }
        }
        loggedDelays = recs.contains { $0.schedulerDelayNs != nil }
        let renders = recs.filter { $0.renderEndNs > $0.renderStartNs }.map { (start: $0.renderStartNs, end: $0.renderEndNs) }
        for r in recs {
            guard let d = r.schedulerDelayNs, d > 0 else { continue }
            let planned = r.wakeNs &- d
            // Not when the wake is explained by work the replay reproduces anyway: a frame being
            // drawn until then, or a flip completion received just then.
            if renders.contains(where: { $0.start <= planned && $0.end >= r.wakeNs &- 50_000 && $0.end <= r.wakeNs }) { continue }
            if receipts.contains(where: { $0 >= r.wakeNs &- 50_000 && $0 <= r.wakeNs }) { continue }
            let s = sequence(near: planned)
            if abs(time(of: s) &- planned) < clampedNanoseconds(refreshInterval / 4) {
                wakeAtSequence[s] = Swift.max(wakeAtSequence[s] ?? 0, r.wakeNs)
            }
        }
        for r in recs {
            for e in r.lateVBlankEvents ?? [] where e.count == 2 && e[0] >= 0 {
                lateVBlankEventAt[UInt64(e[0])] = Swift.max(lateVBlankEventAt[UInt64(e[0])] ?? 0, e[1])
            }
        }
        // Vblanks the recorded run knew of before their timestamps (see `knownEarly`).
        if modelsEarlyEvents {
            func early(_ s: UInt64, _ at: Nanoseconds) { knownEarly[s] = Swift.min(knownEarly[s] ?? at, at) }
            for r in recs where r.callbackNs > 0 && r.wakeNs > 0 && r.wakeNs < r.callbackNs {
                let s = sequence(near: r.callbackNs)
                if time(of: s) == r.callbackNs { early(s, r.wakeNs) }
            }
            for r in recs where (r.outcome == .onTime || r.outcome == .late) && r.receivedNs > 0 && r.receivedNs < r.flipNs {
                early(r.sequence, r.receivedNs)
            }
        }
        // Start where the recorded run started: its first callback's vblank, woken when it woke.
        let first = recs.min { $0.id < $1.id }!
        startSequence = sequence(near: first.callbackNs)
        if startBetweenVBlanks && startSequence > 0 {
            startSequence -= 1
            clock = first.callbackNs &- clampedNanoseconds(refreshInterval / 2)
        } else if let vrr = vrrRange {
            // A VRR link starts at the time it was added, not at a vblank: start when it woke.
            clock = first.wakeNs
            // A fresh VRR link aims its first frame `latency` frame intervals after it starts. In
            // the recorded run that is where it started; in a rotated log's later file, whose
            // replay starts at a carried frame, the frame aimed one interval after the previous
            // target, and its callback ran when the previous flip's event was read (the driver's
            // event latency after the flip): start where a fresh link aims at the recorded target.
            let rate = EffectiveRate.select(for: first.intent.range, refreshHz: 1e9 / refreshInterval, vrr: vrr)
            let latency = Swift.max(1, Swift.min(log.header?.latency ?? first.latency, 1 + queueCapacity))
            let lead = Nanoseconds(latency) &* clampedNanoseconds(rate.frameInterval.rounded())
            let aim = first.intent.targetTimeNs &- lead
            if rate.isVariable && first.intent.targetTimeNs > 0 && aim < clock && clock &- aim < clampedNanoseconds(rate.frameInterval) {
                clock = aim
            }
            while startSequence > 0 && time(of: startSequence) > clock { startSequence -= 1 }
        } else if refreshesEarlier > 0 && startSequence >= refreshesEarlier {
            startSequence -= refreshesEarlier
            clock = time(of: startSequence)
        } else {
            clock = Swift.max(first.wakeNs, time(of: startSequence))
        }
        outbox.reserveCapacity(16)
        // Seat-session gaps (`{"record":"session"}` lines) are replayed where they were.
        var pausedAt: Nanoseconds? = nil
        for c in log.sessions {
            switch c.event {
            case .paused:
                pausedAt = c.timeNs
                enqueue(.sessionPaused(at: c.timeNs), at: c.timeNs, order: 2)
            case .resumed:
                // A rotated log's later file may hold the resume without its pause: the pause
                // was `gapNs` before it.
                if pausedAt == nil, let gap = c.gapNs {
                    enqueue(.sessionPaused(at: c.timeNs &- gap), at: c.timeNs &- gap, order: 2)
                } else if pausedAt == nil {
                    continue
                }
                pausedAt = nil
                enqueue(.sessionResumed(at: c.timeNs, vblank: vblank(atOrBefore: c.timeNs)), at: c.timeNs, order: 2)
            }
        }
    }

    deinit { pixelBase.deallocate() }

    public func now() -> Nanoseconds { clock }

    public func lastVBlank() throws -> VBlank {
        var vb = vblank(atOrBefore: clock)
        // The next vblank, when the recorded run already knew of it (before its timestamp).
        if let k = knownEarly[vb.sequence &+ 1], k <= clock { vb = VBlank(sequence: vb.sequence &+ 1, timestamp: time(of: vb.sequence &+ 1)) }
        return vb.sequence < startSequence ? VBlank(sequence: startSequence, timestamp: time(of: startSequence)) : vb
    }

    /// The recorded run finished keeping the frame's pixels (its copy) at `copyEndNs`: so does the replay.
    public func finish(frame: FrameID) throws {
        if let r = byID[frame], let c = r.copyEndNs, c > clock { clock = c }
    }

    public func submit(frame: FrameID) throws {
        if pending != nil { throw BackendFailure.busy }
        if let n = busyLeft[frame], n > 0 {
            busyLeft[frame] = n - 1
            throw BackendFailure.busy
        }
        let next = try lastVBlank().sequence &+ 1
        // The recorded run committed at commitNs (after copying the frame, say): so does the replay.
        if let r = byID[frame], r.commitNs > clock { clock = r.commitNs }
        var target = VBlank(sequence: next, timestamp: time(of: next))
        var received = target.timestamp
        var deliver = received
        var kind = 0 // 0 presented, 1 discarded, 2 failed, 3 never confirmed
        if let r = byID[frame] {
            switch r.outcome {
            case .onTime, .late:
                // A vkms-style timer that fires late latches a flip committed just after the
                // vblank's timestamp: accept the recorded vblank up to one before `next`.
                if r.sequence > lastFlipSequence && r.sequence &+ 1 >= next {
                    lastFlipSequence = r.sequence
                    target = VBlank(sequence: r.sequence, timestamp: r.flipNs)
                    // Received when it was: before its timestamp too where the replay models
                    // early events (see `knownEarly`), even when a callback knew of the vblank
                    // earlier still. A receipt not logged (0) is taken as the timestamp.
                    let receivedEarly = modelsEarlyEvents && r.receivedNs > 0 && r.receivedNs < r.flipNs
                    received = receivedEarly ? r.receivedNs : Swift.max(r.receivedNs, r.flipNs)
                    let wake = loggedDelays ? wakeAtSequence[r.sequence] : wakeAt[r.flipNs]
                    deliver = Swift.max(received, wake ?? received)
                } else {
                    divergences += 1
                }
            case .discarded where r.cause == .sessionPaused: kind = 3
            case .discarded: kind = 1
            case .failed: kind = 2
            case .unconfirmed: kind = 3
            }
        } else if !(pastTheLogAfter.map { frame > $0 } ?? false) {
            divergences += 1
        }
        pending = (frame, target, received, kind)
        switch kind {
        case 0: enqueue(.presented(frame: frame, vblank: target, receivedAt: received), at: deliver, order: 0)
        case 1: enqueue(.discarded(frame: frame), at: target.timestamp, order: 0)
        case 2: enqueue(.failed(frame: frame, .deviceLost("replayed failure")), at: target.timestamp, order: 0)
        default: break
        }
    }

    public func requestVBlank(after sequence: UInt64) throws {
        let s = sequence &+ 1
        let last = try lastVBlank()
        if last.sequence > sequence {
            enqueue(.vblank(last), at: clock, order: 1)
        } else if !requests.contains(s) {
            requests.append(s)
            // Delivered when the recorded run received it (a late wake is replayed as late).
            let t = time(of: s)
            let wake = loggedDelays ? wakeAtSequence[s] : wakeAt[t]
            // Early when the recorded run knew of it early, late when it woke late.
            let on = wake == nil ? Swift.min(t, knownEarly[s] ?? t) : t
            let at = Swift.max(on, wake ?? on, lateVBlankEventAt[s] ?? on)
            enqueue(.vblank(VBlank(sequence: s, timestamp: t)), at: at, order: 1)
        }
    }

    public func waitForEvents(until deadline: Nanoseconds, into events: inout [BackendEvent]) throws {
        // Events already due are delivered even when `deadline` has passed (as a kernel's are).
        if outbox.isEmpty || outbox[0].at > Swift.max(deadline, clock) {
            // A never-confirmed flip stops occupying the display at its vblank.
            if let p = pending, p.kind == 3, p.at.timestamp <= deadline { pending = nil }
            clock = Swift.max(clock, deadline)
            return
        }
        clock = Swift.max(clock, outbox[0].at)
        var n = 0
        while n < outbox.count && outbox[n].at <= clock {
            let e = outbox[n].event
            switch e {
            case .presented(let id, _, _), .discarded(let id):
                if pending?.id == id { pending = nil }
            case .failed(let id, _):
                if let id = id, pending?.id == id { pending = nil }
            case .vblank(let vb):
                requests.removeAll { $0 == vb.sequence }
            case .sessionPaused:
                pending = nil
            case .sessionResumed:
                break
            }
            events.append(e)
            n += 1
        }
        outbox.removeFirst(n)
    }

    /// Nothing to restore: a replay shows nothing.
    public func close() {}

    package func spin(until deadline: Nanoseconds) {
        clock = Swift.max(clock, deadline)
    }

    private func enqueue(_ e: BackendEvent, at t: Nanoseconds, order: Int) {
        let at = Swift.max(t, clock)
        var i = outbox.count
        while i > 0 && (outbox[i - 1].at > at || (outbox[i - 1].at == at && outbox[i - 1].order > order)) { i -= 1 }
        outbox.insert((at, order, e), at: i)
    }
}
