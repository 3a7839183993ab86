/// A complete scenario run (what `cadence run` does): one display link producing frames per ``RunConfiguration`` on a
/// ``DisplayBackend``, rendering with an optional ``FrameRenderer``, accounting every frame.
/// The CLI and the end-to-end tests drive exactly this.
///
///     let run = try PacingRun(backend: FakeDisplay(), configuration: config)
///     run.onFrame = { report in reports.append(report) }
///     let summary = try run.run()
public final class PacingRun {
    public let backend: any DisplayBackend
    public let configuration: RunConfiguration
    public let pacer: FramePacer
    public var renderer: FrameRenderer?
    /// Every completed frame, in completion order (log writers hook here).
    public var onFrame: ((FrameReport) -> Void)?
    /// Called about once a second of display time while frames are produced.
    public var onStatus: ((RunStatus) -> Void)?
    /// Called at each rate switch of ``RunConfiguration/adapt`` (log writers hook here).
    public var onRateSwitch: ((RateSwitch) -> Void)?
    /// Called at each seat-session pause and resume (log writers hook here).
    public var onSessionChange: ((SessionChange) -> Void)?
    /// Session gaps so far (resumed ones) and their total time in ns.
    public private(set) var sessionGaps = 0
    public private(set) var sessionGapTotal: Nanoseconds = 0
    /// The switches the rate adaptation made so far.
    public private(set) var rateSwitches: [RateSwitch] = []
    public private(set) var accounting: FrameAccounting
    /// The display link producing the frames.
    public let link: DisplayLink
    /// At most this many turns of the loop (running and draining). A real display's clock
    /// always advances; a virtual-time one replaying a corrupt recording may not, and would
    /// spin forever. Unbounded by default.
    public var maxLoopTurns = Int.max
    /// True when the run ended because it reached ``maxLoopTurns``.
    public private(set) var stalled = false

    /// Called, when set, while a frame's scripted rendering time (``RunConfiguration/injectLate``,
    /// ``RunConfiguration/renderCost``) passes, with the time it ends: ``PacingGroup`` serves its
    /// other outputs meanwhile, so that one output's slow frame does not hold the others up.
    public var whileRendering: ((Nanoseconds) -> Void)?

    private var produced = 0
    private var producing = true
    private var runEnd: Nanoseconds = .max
    private var tick: Nanoseconds = 0
    private var turns = 0
    private var drainDeadline: Nanoseconds?
    private var contentStart: Nanoseconds? = nil
    private var firstTarget: Nanoseconds? = nil
    private var lastStatusPresented = 0
    /// When the status was last reported; the loop waits no longer than a second after it.
    /// Kept by the pacer, for its frames' ``FrameReport/statusTime``.
    private var lastStatusTime: Nanoseconds {
        get { pacer.loopStatusTime ?? 0 }
        set { pacer.loopStatusTime = newValue }
    }
    private let adapter: RateAdapter?

    public init(backend: any DisplayBackend, configuration: RunConfiguration, renderer: FrameRenderer? = nil) throws {
        try configuration.validate()
        self.backend = backend
        self.configuration = configuration
        self.renderer = renderer
        pacer = try FramePacer(backend: backend)
        pacer.commitMargin = configuration.commitMargin
        pacer.pendingPacerStateRestore = configuration.restoredPacerState
        accounting = FrameAccounting()
        link = DisplayLink(preferredFrameRateRange: configuration.range, preferredFrameLatency: configuration.latency) {
            _ in
        }
        adapter =
            configuration.adapt
            ? RateAdapter(range: configuration.range, refreshHz: 1e9 / pacer.refreshInterval, vrr: pacer.vrrRange) : nil
        link.handler = { [unowned self] u in self.produce(u) }
        pacer.onFrameCompleted = { [unowned self] r in
            self.accounting.add(r)
            self.onFrame?(r)
            self.adapt(after: r)
        }
        pacer.onSessionChange = { [unowned self] c in
            if c.event == .resumed {
                self.sessionGaps += 1
                self.sessionGapTotal &+= c.gapNs ?? 0
            }
            self.onSessionChange?(c)
        }
    }

    /// ``RunConfiguration/adapt``: lets the adapter see a completed frame and switches the link's rate when it says so.
    private func adapt(after r: FrameReport) {
        guard let a = adapter, producing else { return }
        let from = a.currentHz
        guard let change = a.frameCompleted(r, commitMargin: configuration.commitMargin) else { return }
        link.preferredFrameRateRange = a.currentRange
        let s = RateSwitch(
            frame: produced, afterFrame: r.frameIndex, timeNs: backend.now(), fromHz: from,
            toHz: change.hz, direction: change.direction, reason: change.reason)
        rateSwitches.append(s)
        onRateSwitch?(s)
    }

    /// The rate frames are intended at: the link's effective rate (when adapting: the current
    /// one), the content rate, or what the minimum duration allows (see ``PresentIntent``).
    public var intendedRateHz: Double {
        let refreshHz = 1e9 / pacer.refreshInterval
        let linkRate = EffectiveRate.select(
            for: link.preferredFrameRateRange, refreshHz: refreshHz, vrr: pacer.vrrRange
        ).hz
        if let c = configuration.contentRate { return Swift.min(c, linkRate) }
        if let d = configuration.minimumDuration, d > 0 {
            if pacer.vrrRange != nil { return Swift.min(linkRate, 1e9 / Double(d)) }
            return Swift.min(linkRate, refreshHz / Double(pacer.minimumDurationRefreshes(d)))
        }
        return linkRate
    }

    /// The frame latency in effect: the requested one, limited by how many finished frames the
    /// backend can hold (KMS with 3 buffers: 2).
    public var effectiveLatency: Int { Swift.min(configuration.latency, 1 + backend.queueCapacity) }

    /// Runs until the frame count or duration is reached, `shouldStop` returns true (checked at
    /// least once a refresh), or the device is lost; then lets queued frames complete and returns
    /// the summary.
    public func run(shouldStop: () -> Bool = { false }) throws -> RunSummary {
        begin()
        var stopped = false
        while producing && pacer.deviceLost == nil {
            if shouldStop() { stopped = true; break }
            if try !step() { break }
        }
        return try end(stopped: stopped)
    }

    /// Starts a run driven turn by turn with ``step(limit:)`` and ``end(stopped:)`` (what
    /// ``PacingGroup`` does for several outputs on one thread); ``run(shouldStop:)`` does all three.
    public func begin() {
        let start = backend.now()
        runEnd = configuration.duration.map { start &+ $0 } ?? .max
        lastStatusTime = start
        if let s = configuration.restoredStatusTime {
            // Where the run's status clock stood (a replay starting in the middle of a run): a
            // status after this start came a second after the one before.
            lastStatusTime = s <= start ? s : s &- 1_000_000_000
        }
        pacer.add(link)
        tick = Nanoseconds(pacer.refreshInterval.rounded())
        turns = 0
    }

    /// One turn of the run's loop (fire due callbacks, submit, wait for events), waiting no later
    /// than `limit`. Returns false, doing nothing, once the run has no more frames to produce
    /// (frame count or duration reached, device lost, ``maxLoopTurns`` reached).
    public func step(limit: Nanoseconds = .max) throws -> Bool {
        guard producing && pacer.deviceLost == nil else { return false }
        turns += 1
        if turns > maxLoopTurns { stalled = true; return false }
        let now = backend.now()
        if now >= runEnd { return false }
        try pacer.runOnce(until: Swift.min(runEnd, now &+ 4 &* tick, lastStatusTime &+ 1_000_000_000, limit))
        emitStatusIfDue()
        return true
    }

    /// After ``step(limit:)`` returned false: one turn letting the frames already presented
    /// complete (no callbacks), waiting no later than `limit`. Returns false once none is left,
    /// or the drain's time is up. ``PacingGroup`` drains an output that finished early this way
    /// while the others go on, so its last frames are confirmed when they are shown.
    public func drainStep(limit: Nanoseconds) throws -> Bool {
        let deadline = startDrain()
        let now = backend.now()
        guard pacer.count > 0, pacer.deviceLost == nil, now < deadline, turns < maxLoopTurns else { return false }
        turns += try pacer.drain(until: Swift.max(now &+ 1, Swift.min(deadline, limit)), maxTurns: 1)
        return pacer.count > 0 && pacer.deviceLost == nil && backend.now() < deadline
    }

    /// Ends a run begun with ``begin()``: no more frames, the queued ones complete (for at most
    /// the time a few frames take), and the summary; `stopped` says it was stopped early.
    public func end(stopped: Bool) throws -> RunSummary {
        let deadline = startDrain()
        let remaining = Swift.max(0, maxLoopTurns - turns)
        if try pacer.drain(until: Swift.max(deadline, backend.now()), maxTurns: remaining) >= remaining {
            stalled = true
        }
        let end: RunEnd
        if let why = pacer.outputDisconnected {
            end = .disconnected(why)
        } else if let why = pacer.deviceLost {
            end = .deviceLost(why)
        } else {
            end = stopped ? .stopped : .completed
        }
        return summary(end: end)
    }

    /// Invalidates the link and fixes the drain's deadline, once; returns it.
    private func startDrain() -> Nanoseconds {
        if let d = drainDeadline { return d }
        link.invalidate()
        // Frames queued at a slow rate (0.4 Hz: 2.5 s each) need longer than a second.
        let frameNs = 1e9 / Swift.max(intendedRateHz, 0.01)
        let drainNs = Nanoseconds(Swift.min(60e9, Swift.max(1e9, Double(effectiveLatency + 2) * frameNs)))
        let d = backend.now() &+ drainNs
        drainDeadline = d
        return d
    }

    /// The summary of what has completed so far.
    public func summary(end: RunEnd) -> RunSummary {
        var s = RunSummary(
            accounting: accounting, backend: backend.name, refreshHz: 1e9 / pacer.refreshInterval,
            vrr: pacer.vrrRange, effectiveRateHz: intendedRateHz, latency: effectiveLatency, end: end)
        if adapter != nil { s.rateSwitches = rateSwitches.count }
        var gaps = sessionGaps, total = sessionGapTotal
        if let since = pacer.sessionPausedAt {
            gaps += 1
            total &+= Swift.max(0, backend.now() &- since)
        }
        if gaps > 0 {
            s.sessionGaps = gaps
            s.sessionGapSeconds = Double(total) / 1e9
            // The rate measured over the intervals between shown frames (none spans a gap).
            if s.intervalMs.mean > 0 { s.measuredRateHz = 1e3 / s.intervalMs.mean }
        }
        return s
    }

    private func emitStatusIfDue() {
        let now = backend.now()
        guard now &- lastStatusTime >= 1_000_000_000 else { return }
        guard let onStatus = onStatus else {
            lastStatusTime = now
            return
        }
        let seconds = Double(now &- lastStatusTime) / 1e9
        let shown = accounting.presented - lastStatusPresented
        var status = RunStatus(
            elapsedSeconds: Double(now &- (firstTarget ?? now)) / 1e9, fps: Double(shown) / seconds,
            effectiveRateHz: intendedRateHz, droppedRefreshes: accounting.droppedRefreshes,
            dropEvents: accounting.dropEvents, hitchTimeRatio: accounting.hitchTimeRatio)
        status.sessionPaused = pacer.sessionPausedAt != nil
        onStatus(status)
        lastStatusPresented = accounting.presented
        lastStatusTime = now
    }

    /// The display-link callback: decide whether a frame is due, draw it, present it.
    private func produce(_ u: DisplayLinkUpdate) {
        if let limit = configuration.frames, produced >= limit {
            producing = false
            return
        }
        var n = produced
        var intent = PresentIntent.nextOpportunity
        var target = u.timing.targetPresentationTimestamp
        if let rate = configuration.contentRate {
            let t0 = contentStart ?? configuration.contentClock?.start ?? u.timing.targetPresentationTimestamp
            contentStart = t0
            func time(ofFrame n: Int) -> Nanoseconds {
                let k = n &+ (configuration.contentClock?.firstFrame ?? 0)
                return t0 &+ Nanoseconds((Double(k) * 1e9 / rate).rounded())
            }
            var tn = time(ofFrame: n)
            if pacer.vrrRange == nil {
                // Not yet: a later callback will reach content frame n's vblank.
                if pacer.sequence(at: tn) > u.targetSequence { return }
                // Content ahead of the panel (faster than its real rate, or behind after a late
                // frame): the newest content frame due at or before this callback's target is
                // shown there, the older ones are discarded unseen, as a video player drops a
                // frame to catch up. Shown one a callback, they would each be a vblank after
                // their own, on time only because the frame before took that vblank. Two frames
                // that share a vblank only through a tie are shown a vblank apart instead (the
                // taken-tie rule of `FramePacer.plan`), none discarded
                // (`FramePacer.hiddenByNext`).
                let (wake, delay) = pacer.callbackWake(u)
                while configuration.frames.map({ n + 1 < $0 }) ?? true {
                    let next = time(ofFrame: n + 1)
                    let h = pacer.hiddenByNext(
                        tn, next: next, target: u.targetSequence, wake: wake, schedulerDelay: delay)
                    guard h.hidden else { break }
                    pacer.skip(time: tn, update: u, frameIndex: n, cause: h.cause)
                    produced += 1
                    n += 1
                    tn = next
                }
            } else if tn > u.timing.targetPresentationTimestamp &+ u.timing.frameInterval / 2 {
                return
            }
            intent = .at(tn, nearest: false)
            target = tn
        } else if let d = configuration.minimumDuration {
            intent = .afterMinimumDuration(d)
        }
        if firstTarget == nil { firstTarget = target }
        let renderStart = backend.now()
        if let r = renderer, let surface = backend.surface {
            let ctx = FrameContext(
                frameIndex: n, time: Double(target &- (firstTarget ?? target)) / 1e9,
                targetPresentationTime: target, deadline: u.timing.deadline,
                refreshHz: 1e9 / pacer.refreshInterval, effectiveRateHz: u.rate.hz)
            r(surface, ctx)
        }
        if let cost = configuration.renderCost(of: n) {
            whileRendering?(renderStart &+ cost)
            try? pacer.renderWork(until: renderStart &+ cost)
        }
        if let k = configuration.injectLate[n] {
            // Overrun the frame's own deadline (its minimum duration or content time can put it
            // after the callback's target) so that it misses exactly k vblanks.
            let overrun = (Double(k) - 0.5) * pacer.refreshInterval
            let until = pacer.deadline(of: intent, update: u.timing) &+ Nanoseconds(overrun.rounded())
            whileRendering?(until)
            try? pacer.renderWork(until: until)
        }
        let renderEnd = backend.now()
        produced += 1
        do {
            if configuration.injectLate[n] != nil {
                try pacer.presentScripted(
                    intent: intent, update: u, frameIndex: n, renderStart: renderStart, renderEnd: renderEnd)
            } else {
                try pacer.present(
                    intent: intent, update: u, frameIndex: n, renderStart: renderStart, renderEnd: renderEnd)
            }
        } catch {
            producing = false
        }
        if let limit = configuration.frames, produced >= limit { producing = false }
    }
}
