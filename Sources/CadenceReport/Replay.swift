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
    /// The recorded run's commit margin (its display's recommendation): the pacer's first
    /// estimate of a VRR panel's response, as it was in the run.
    public let recommendedCommitMargin: Nanoseconds
    /// Submissions that could not follow the recording.
    public internal(set) var divergences = 0
    /// Frames after this id are made past the end of the log (the frame after a rotated file's
    /// last, see ``Replay``): they have no record to diverge from.
    var pastTheLogAfter: FrameID? = nil
    /// Ids in the log's range whose records are in another file of a rotated log (completed out
    /// of order across the cut, ``ReplaySurvey/missingIDs``): made without a record, and not a
    /// divergence.
    var inAnotherFile: Set<FrameID> = []

    var clock: Nanoseconds
    /// The merged timeline (flips and callbacks) the replay runs on, and the flips alone
    /// (callbacks are pinned on it).
    var timeline: ReplayTimeline
    var flipsOnly: ReplayTimeline
    var callbackPinned: Set<UInt64> = []
    /// Vblanks whose timestamps the run learned from a vblank event or query (``FrameRecord/vblanks``):
    /// a flip shown there keeps its own timestamp, the timeline the learned one.
    var learnedPinned: Set<UInt64> = []
    var byID: [FrameID: Recorded] = [:]
    var renderEndByFrame: [Int: Nanoseconds] = [:]
    var busyLeft: [FrameID: Int] = [:]
    /// Flip receipts (sorted) and render spans of the records read.
    var receipts: [Nanoseconds] = []
    var renders: [(start: Nanoseconds, end: Nanoseconds)] = []
    /// Vblank timestamp → when the recorded run woke for it (its callbacks' wake times).
    var wakeAt: [Nanoseconds: Nanoseconds] = [:]
    /// Vblank sequence → when the recorded run woke for a callback planned at it (logs with
    /// `schedulerDelayNs`: planned vblank = wake − delay).
    var wakeAtSequence: [UInt64: Nanoseconds] = [:]
    /// Vblank sequence → the earliest time the recorded run knew of it, where that was before
    /// its timestamp: a callback that woke for it earlier, or its flip completion received
    /// earlier. Hardware that stamps a vblank with the end of the blanking interval (the start of
    /// scanout) delivers its events before that time, as the fake display with jitter does.
    var knownEarly: [UInt64: Nanoseconds] = [:]
    /// Vblank sequence → when the recorded run received its event, where that was over a quarter
    /// refresh late (logged as `lateVBlankEvents`): the run judged causes by how late its vblank
    /// events came (a late flip event while vblank events were on time is flip-late; both late
    /// is the process held up), so the replay delivers those events as late.
    var lateVBlankEventAt: [UInt64: Nanoseconds] = [:]
    /// Vblank sequence → when the recorded run received the flip completion shown at it. A
    /// vblank event of that vblank came with it (the kernel sends both from the vblank's
    /// interrupt, with the same delivery latency): a run that did not call back at the vblank
    /// read its event no sooner than the completion, and took the vblank's time from the flip
    /// event (whole µs), not from the vblank event (ns). The replay delivers it so.
    var flipReceivedAt: [UInt64: Nanoseconds] = [:]
    /// The vblank of the last flip completion delivered to the pacer (a display without a vblank
    /// interrupt steps its software vblanks from it).
    var lastDeliveredFlip: VBlank? = nil
    /// A rotated log's later file without a vblank interrupt: the flip shown before the replay's
    /// first frame (its record's interval back), when that came after the first callback. The
    /// run's software grid moved to it (a late frame's flip, half a refresh off the grid); the
    /// fresh replay has no frame of its own to show there, so the grid moves to it at its time.
    var priorFlip: VBlank? = nil
    /// Whether the run's software vblanks were stepped from the completions it had read: a KMS
    /// display without a vblank interrupt (whole-µs flip events). The fake display's without one
    /// tick on its own grid whatever the pacer has read.
    let stepsFromReadCompletions: Bool
    /// Whether the run's display was the simulator's without a vblank interrupt (nanosecond flip
    /// events): its grid ticks by itself from the last flip completion, and a flip completes its
    /// commit latency after the commit, counted as the nearest whole number of refreshes since
    /// the completion before. A flip completing less than half a refresh after a tick takes
    /// that tick's sequence: the run saw the vblank twice, first at the tick (``tickTime(of:)``).
    let ticksBeforeFlips: Bool
    /// Whether a vblank event is read with the flip completion shown at that vblank
    /// (``flipReceivedAt``): a KMS display with a vblank interrupt (whole-µs flip events).
    let readsVBlankWithFlip: Bool
    /// Events before their timestamps are replayed (`knownEarly`, flip receipts) only on a
    /// fixed-refresh display with a hardware vblank counter, where sequences and timestamps
    /// form a grid; elsewhere nothing is replayed before its timestamp.
    let modelsEarlyEvents: Bool
    let loggedDelays: Bool
    var pending: (id: FrameID, at: VBlank, received: Nanoseconds, kind: Int)? = nil
    var requests: [UInt64] = []
    var outbox: [(at: Nanoseconds, order: Int, event: BackendEvent)] = []
    var startSequence: UInt64 = 0
    var lastFlipSequence: UInt64 = 0
    var pixel = [UInt32](repeating: 0, count: 1)
    let pixelBase: UnsafeMutableRawPointer

    // Reading the log: records come from `nextRecord` in log order; each is read (its flip,
    // receipt, render, busy retries), then pinned (its callback on the flips' timeline), then
    // derived (wakes, early and late events): each stage once everything near its times is in.
    let nextRecord: () throws -> FrameRecord?
    var exhausted = false
    /// All records at once, in the order of the whole-log replay (no window).
    let whole: Bool
    let near: Nanoseconds
    let disorderNs: Nanoseconds
    var latestEarliest: Nanoseconds = .min
    var maxLoadedID: FrameID = 0
    var maxLoadedFrame = Int.min
    var awaitingPin: [Recorded] = []
    var awaitingPinHead = 0
    var awaitingDerive: [Recorded] = []
    var awaitingDeriveHead = 0
    var loaded: [(id: FrameID, frame: Int, latest: Nanoseconds)] = []
    var loadedHead = 0
    var sinceEviction = 0
    /// Everything before this time is read and derived.
    var ready: Nanoseconds = .min
    /// The largest number of records held at once (read and not yet dropped).
    var maxWindow = 0
    /// The error reading the log ended with, if it did.
    var readError: Error? = nil

    /// Why a log cannot be replayed.
    public struct Unreplayable: Error, CustomStringConvertible {
        public var description: String
    }

    /// How much earlier than an earlier record's earliest time a record's may be for the log to
    /// be read record by record (a run writes frames in completion order).
    static func disorder(_ refreshInterval: Double) -> Nanoseconds {
        Swift.max(1_000_000_000, clampedNanoseconds(64 * refreshInterval))
    }

    /// A display playing back `log`. The log does not say where between two vblanks the run
    /// started: `startBetweenVBlanks` starts the clock half a refresh before the first callback's
    /// vblank (the first callback waits for it), otherwise at that callback's wake.
    public convenience init(log: RunLog, startBetweenVBlanks: Bool = false) throws {
        let survey = ReplaySurvey(log)
        var i = 0
        let records = log.records
        try self.init(
            log: log, survey: survey,
            records: {
                guard i < records.count else { return nil }
                i += 1
                return records[i - 1]
            }, whole: !survey.streamable, startBetweenVBlanks: startBetweenVBlanks, refreshesEarlier: 0)
    }

    /// A display playing back the records `records` returns in log order (nil after the last),
    /// surveyed in `survey`; `log` holds the rest of the log (header, sessions). `whole` reads
    /// them all first. `refreshesEarlier`: start that many vblanks before the first callback's
    /// (a later file of a rotated log whose link was held back: its fresh link then aims at the
    /// recorded target); `refreshesLater`: that many after it (a later file whose first frame a
    /// minimum duration after its predecessor put further ahead than a fresh link aims).
    init(
        log: RunLog, survey: ReplaySurvey, records: @escaping () throws -> FrameRecord?, whole: Bool,
        startBetweenVBlanks: Bool, refreshesEarlier: UInt64, refreshesLater: UInt64 = 0
    ) throws {
        refreshInterval = survey.refreshInterval
        vrrRange = log.header?.vrrRangeHz.flatMap { $0.count == 2 ? $0[0]...$0[1] : nil }
        hasHardwareVBlank = log.header?.hasHardwareVBlank ?? true
        queueCapacity = log.header?.queueCapacity ?? 2
        recommendedCommitMargin = log.header?.commitMarginNs ?? 0
        crtcID = survey.firstInLog?.crtc ?? 0
        guard survey.anyFlip, let first = survey.first else {
            throw Unreplayable(description: "no frame in the log reached the screen; nothing to replay")
        }
        modelsEarlyEvents = hasHardwareVBlank && vrrRange == nil
        loggedDelays = survey.loggedDelays
        timeline = ReplayTimeline(refreshInterval: refreshInterval)
        flipsOnly = ReplayTimeline(refreshInterval: refreshInterval)
        // The grid refinement is only for kernel flip events, which carry whole microseconds (the
        // fake display's carry nanoseconds); the pins themselves also give a jittery fake display's
        // unshown vblanks their recorded timestamps, from which the run predicted its targets.
        timeline.usesGrid = modelsEarlyEvents && survey.microsecondFlips
        // Without a vblank interrupt the run's vblanks between completions were its software
        // grid, stepped from the last completion (KMSDisplay's and the fake display's).
        timeline.stepsFromEarlierPin = !hasHardwareVBlank && vrrRange == nil
        stepsFromReadCompletions = timeline.stepsFromEarlierPin && survey.microsecondFlips
        readsVBlankWithFlip = modelsEarlyEvents && survey.microsecondFlips
        ticksBeforeFlips = timeline.stepsFromEarlierPin && !survey.microsecondFlips
        flipsOnly.stepsFromEarlierPin = timeline.stepsFromEarlierPin
        nextRecord = records
        self.whole = whole
        near = ReplayDisplay.disorder(refreshInterval)
        disorderNs = near
        pixelBase = UnsafeMutableRawPointer.allocate(byteCount: 4, alignment: 4)
        surface = PixelSurface(base: pixelBase, width: 1, height: 1, stride: 4)
        clock = 0
        if whole {
            while try load() {}
        }
        if !modelsEarlyEvents && first.callbackNs > 0 {
            // VRR: the link started at a vblank (the display's last one when the run began), which
            // the frames' minimum durations count from; no flip marks it: pin the first callback.
            // Without a vblank interrupt (bochs, virtio-gpu) likewise: the first callback's vblank
            // is the one the run queried, from which it predicted the first frame's target; the
            // flips after it are commit-completion times, a commit latency later.
            while !exhausted && (timeline.lastStamp ?? .min) <= first.callbackNs &+ near { _ = try load() }
            // Under VRR the log may say when that vblank was (the display's last refresh,
            // `vrrLastRefreshNs`): a first file's is within the longest refresh before the
            // first callback; a rotated log's later file repeats the header, and its first
            // callback is far later.
            var at = first.callbackNs
            if let vrr = vrrRange, let t = log.header?.vrrLastRefreshNs, t <= at,
                Double(at &- t) < 1e9 / vrr.lowerBound
            {
                at = t
            }
            var s = timeline.sequence(near: first.callbackNs)
            if vrrRange == nil {
                // A rotated log's later file: the flip before its first frame (in the file before)
                // moved the run's grid after the first callback; pinned, the vblanks after the
                // callback step from it, as the run's did (bochs at 75 Hz, latency 2, frame 3 late
                // by a refresh, a file every 8 KiB: frame 3's flip at 74.339 ms, half a refresh off
                // the grid frame 4's callback ran on, 67.672 ms; stepped from that callback, the
                // second file's replay aimed every frame 6.7 ms, then 2 refreshes, late).
                if let p = Self.flipBefore(first), p.timestamp > first.callbackNs, p.sequence > 0,
                    survey.firstFlipSequence.map({ p.sequence < $0 }) ?? false, timeline.pin(at: p.sequence) == nil
                {
                    timeline.set(p.sequence, p.timestamp)
                    priorFlip = p
                }
                // The callback's vblank is the one its frame was aimed from: its target whole
                // refreshes after it (the grid steps by whole nominal refreshes). Nearest on the
                // flips' timeline, it may be the next one: the frame 3 above flipped half a
                // refresh after frame 4's callback, 6.667146 ms after it against 6.667281 before.
                if first.intent.targetTimeNs > first.callbackNs, refreshInterval > 0 {
                    let k = (Double(first.intent.targetTimeNs &- first.callbackNs) / refreshInterval).rounded()
                    let off = Double(first.intent.targetTimeNs &- first.callbackNs) - k * refreshInterval
                    if abs(off) < 1_000, k < 64, UInt64(k) <= first.intent.targetSequence {
                        s = first.intent.targetSequence &- UInt64(k)
                    }
                }
            }
            if let s0 = survey.firstFlipSequence, timeline.pin(at: s) == nil && s < s0 {
                timeline.set(s, at)
            }
        }
        try fill(until: first.callbackNs &+ 2 &* near)
        // Start where the recorded run started: its first callback's vblank, woken when it woke.
        startSequence = timeline.sequence(near: first.callbackNs)
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
            // That is less than the link's lead (`latency` intervals) before the callback: a
            // frame whose predecessor was handed over late is aimed one interval after that
            // handover, where its callback ran (6.52 Hz at latency 2, frame 3 late: a later file's
            // first frame); at latency 3 a late render holds back the callbacks of the two frames
            // after it, run together when it ends and aimed one and two intervals ahead (3 Hz,
            // frame 39 late: frame 40 called back at 15.003 s for 15.337 s; started at the
            // callback, the fresh link aimed it at 16.003 s, and the file's frames were called
            // back 0.69 s late and shown late, flip-late).
            let rate = EffectiveRate.select(for: first.intent.range, refreshHz: 1e9 / refreshInterval, vrr: vrr)
            let latency = Swift.max(1, Swift.min(log.header?.latency ?? first.latency, 1 + queueCapacity))
            let lead = Nanoseconds(latency) &* clampedNanoseconds(rate.frameInterval.rounded())
            let aim = first.intent.targetTimeNs &- lead
            if rate.isVariable && first.intent.targetTimeNs > 0 && aim < clock
                && clock &- aim < lead
            {
                clock = aim
            }
            while startSequence > 0 && time(of: startSequence) > clock { startSequence -= 1 }
        } else if refreshesEarlier > 0 && startSequence >= refreshesEarlier {
            startSequence -= refreshesEarlier
            clock = time(of: startSequence)
        } else if refreshesLater > 0 {
            startSequence += refreshesLater
            clock = time(of: startSequence)
        } else {
            clock = Swift.max(first.wakeNs, time(of: startSequence))
        }
        outbox.reserveCapacity(16)
        // Seat-session gaps (`{"record":"session"}` lines) are replayed where they were (a
        // resume's vblank is found when it is delivered). A gap that had ended by the time the
        // replay starts (a rotated log's later file whose first carried frame was called at the
        // resume) is not: the fresh run starts as the run went on after it, with nothing shown
        // yet. Replayed at the start, the pause came after the first callbacks (the loop fires
        // due callbacks before it reads events) and flushed the carried frames, and the resume
        // then forgot the frame shown after them: that file's first frame replayed without its
        // interval (17 frame intervals vs 18).
        var pausedAt: Nanoseconds? = nil
        for c in log.sessions {
            switch c.event {
            case .paused:
                if let p = pausedAt { enqueue(.sessionPaused(at: p), at: p, order: 2) }
                pausedAt = c.timeNs
            case .resumed:
                // A rotated log's later file may hold the resume without its pause: the pause
                // was `gapNs` before it.
                guard let paused = pausedAt ?? c.gapNs.map({ c.timeNs &- $0 }) else { continue }
                pausedAt = nil
                guard c.timeNs > clock else { continue }
                enqueue(.sessionPaused(at: paused), at: paused, order: 2)
                enqueue(
                    .sessionResumed(at: c.timeNs, vblank: VBlank(sequence: 0, timestamp: 0)), at: c.timeNs, order: 2)
            }
        }
        if let p = pausedAt { enqueue(.sessionPaused(at: p), at: p, order: 2) }
        try fill(until: clock &+ 2 &* near)
    }

    /// Kernel timestamp of vblank `s` (recorded, else interpolated by sequence, else extrapolated).
    public func time(of s: UInt64) -> Nanoseconds { timeline.time(of: s) }

    /// The flip shown before `r`'s, from `r`'s interval (nil when `r` has none: the run's first
    /// shown frame, or not shown).
    static func flipBefore(_ r: FrameRecord) -> VBlank? {
        guard r.outcome == .onTime || r.outcome == .late, r.flipNs > 0, r.intervalNs > 0, r.intervalRefreshes > 0,
            r.intervalNs < r.flipNs, UInt64(r.intervalRefreshes) <= r.sequence
        else { return nil }
        return VBlank(sequence: r.sequence &- UInt64(r.intervalRefreshes), timestamp: r.flipNs &- r.intervalNs)
    }

    deinit { pixelBase.deallocate() }
}
