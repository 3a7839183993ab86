// Long on purpose: the pacer's state and its loop (runOnce, the waits, rendering work, the
// wake plan) read together; the links, submission, completion and prediction are in their own
// FramePacer+*.swift files already, and splitting the loop from the state it steps would widen
// that state's access across files.

/// The pacing core for one display: runs display links, holds presented frames until the vblank
/// they are meant for, submits them one flip at a time, and turns completion events into
/// ``FrameReport``s with exact drop accounting.
///
/// Single-threaded and event-driven: call ``runOnce(until:)`` in a loop (``PacingRun`` does).
/// In the steady state it allocates nothing per frame. The display-link callbacks are in
/// FramePacer+Links.swift, submission (one flip at a time, at the vblank each frame is for) in
/// FramePacer+Submission.swift, completion events and the accounting of each frame in
/// FramePacer+Completion.swift, vblank prediction and frame targets in FramePacer+Prediction.swift.
public final class FramePacer {
    /// The display being driven.
    public let backend: any DisplayBackend
    /// Called once per frame when its fate is known (presented, discarded, failed, unconfirmed).
    public var onFrameCompleted: ((FrameReport) -> Void)?
    /// Commit this long before the target vblank at the latest: a frame's deadline is its target
    /// presentation minus this margin (0 on the fake display; ~1 ms on KMS).
    public var commitMargin: Nanoseconds = 0
    /// A flip whose completion has not arrived this many refreshes after it was due is given up
    /// as ``FrameOutcome/unconfirmed``.
    public var completionTimeoutRefreshes: Int = 4
    /// ε, the timestamp uncertainty the presentation contracts allow for (see
    /// ``TimestampUncertainty``): the measured vblank timestamp jitter, at least 1 µs, at most
    /// 0.5% of a refresh.
    public var timestampUncertainty: Nanoseconds { uncertainty.epsilon(refreshInterval: refreshInterval) }
    /// The largest |residual| of recent vblank timestamps against the nominal grid (ns).
    public var measuredJitter: Nanoseconds { uncertainty.measuredJitter }

    /// Nominal refresh interval in ns (re-read on a mode change).
    public internal(set) var refreshInterval: Double
    /// VRR range when active.
    public internal(set) var vrrRange: ClosedRange<Double>?
    /// The most recent vblank the pacer knows of.
    public internal(set) var lastVBlank: VBlank
    /// Set when the device went away; no more frames can be shown.
    public internal(set) var deviceLost: String? = nil
    /// Set (with ``deviceLost``, to the same reason) when the display went away because its
    /// output was unplugged (``BackendFailure/disconnected(_:)``).
    public internal(set) var outputDisconnected: String? = nil
    /// Frames presented to the pacer and not yet completed.
    public var pendingFrames: Int { count }

    var links: [DisplayLink] = []
    var events: [BackendEvent] = []
    // Ring of frames not yet completed, in presentation order. Index 0..<submittedCount are in flight.
    var ring: [FrameReport]
    var predicted: [UInt64]  // predicted sequence (fixed) or time (VRR) per ring slot
    var head = 0
    var count = 0
    /// Display events handled so far (wrapping): ``PacingGroup`` reads it to see whether a turn
    /// that did not wait handled any, after its callbacks had already been considered.
    public internal(set) var eventsHandled = 0
    var inFlight = false
    var lastPresentedSeq: UInt64 = 0
    var lastPresentedTime: Nanoseconds = 0
    var havePresented = false
    /// The intent of the last shown frame (the taken-tie rule looks at its time).
    var lastShownIntent: PresentIntent = .nextOpportunity
    var intendedSince: UInt64? = nil
    /// Target time of the earliest discarded frame since the last shown one (the hitch's start).
    var discardedSinceTime: Nanoseconds? = nil
    var uncertainty = TimestampUncertainty()
    /// The fitted vblank grid predictions come from (fixed refresh with hardware vblank).
    var grid: VBlankGrid
    /// The last answer of ``sequence(at:nearest:)``: the same question gets no earlier answer.
    var lastAnswer: PacerState.Answer? = nil
    /// False right after a mode change: the next vblank re-anchors the grid without a residual.
    var gridAnchored = true
    var nextID: FrameID = 1
    var outstandingRequest: UInt64? = nil
    var retryAfterBusy = false
    /// VRR: the frame aimed at the panel's shortest refresh after a frame the panel showed late,
    /// committed as soon as it is the head (`trySubmit`).
    var vrrHeldFrame: FrameID? = nil
    /// VRR: the target of the last frame submitted (a minimum-duration frame after it is aimed
    /// no sooner than one frame of the link after it).
    var vrrLastSubmittedTarget: Nanoseconds? = nil
    /// VRR: the shortest time from a commit to its refresh seen so far (the panel's response:
    /// about 100 µs on KMS, 0 on the fake display); nil before the first flip is shown.
    var vrrResponse: Nanoseconds? = nil
    /// VRR: the callback running now aims at the panel's shortest refresh after the last shown
    /// frame (`fireVariable`).
    var heldBehindLateFrame = false
    var lastCompletionDelay: Nanoseconds = 0
    var lastVBlankEventDelay: Nanoseconds = 0
    /// When the last flip completion was received (the event's receipt time, which a log keeps).
    var lastCompletionReceived: Nanoseconds = 0
    /// Vblank events received late since the last completed frame (handed to the next one's report).
    var lateVBlankEvents: [VBlankReceipt] = []
    /// Vblank timestamps learned from vblank events and queries since the last completed frame
    /// (handed to the next one's report, ``FrameReport/vblanks``).
    var learnedVBlanks: [VBlank] = []
    /// Puts the prediction state, as it was when each frame's callback began and when the frame
    /// completed, in the frame's ``FrameReport/pacerState`` and
    /// ``FrameReport/pacerStateAtCompletion`` (a rotated run log writes them at each cut), on a
    /// fixed-refresh display (under VRR nothing is predicted from a grid). Off by default:
    /// each copy allocates ε's window once the pacer changes its own.
    public var recordsPacerState = false
    /// The prediction state when the callback running now began (``recordsPacerState``).
    var callbackPacerState: PacerState? = nil
    /// When the loop driving the pacer last reported its status (``PacingRun`` sets it; nil
    /// outside one), and what it was when the callback running now began
    /// (``FrameReport/statusTime``, with ``recordsPacerState``).
    var loopStatusTime: Nanoseconds? = nil
    var callbackStatusTime: Nanoseconds? = nil

    /// Gives `r` what was recorded as the callback running now began (its pacer state and
    /// status time).
    func stampCallbackState(_ r: inout FrameReport) {
        r.pacerState = callbackPacerState
        r.statusTime = callbackStatusTime
    }
    /// A state to restore when the link's callback at that time begins (a replay of a later
    /// file of a rotated log; ``RunConfiguration/restoredPacerState``).
    public var pendingPacerStateRestore: PacerStateRestore? = nil
    /// The frame made in the callback a state was restored at, and the state to restore when it
    /// completes (``PacerStateRestore/completed``).
    var restoringAtCompletion: (id: FrameID, state: PacerState)? = nil
    /// The run's newest queued frame when a state was restored at a callback (``PacerState/lastQueued``),
    /// standing in for it until the callback queues a frame of its own or ends: a replay that
    /// starts at a rotated log's cut has no frame in flight there (it is in the file before),
    /// and at latency 2 a frame at a tie follows the one in flight across it.
    var restoredQueued: PacerState.Queued? = nil
    /// Frames whose rendering was scripted to end at a fixed time past their deadline
    /// (``PacingRun``'s injected lateness): a late wake-up did not move that end, so their
    /// drop is never charged to the scheduler (``lateCause(_:)``). Emptied as they complete.
    var scriptedRenderEnds: Set<FrameID> = []
    /// Without hardware vblank: how long the last flip took from commit to completion, so that
    /// the next is committed that much before its target time.
    var softwareCommitLead: Nanoseconds = 0
    // The callback currently running, so that present() can link the frame to it.
    var currentUpdate: DisplayLinkUpdate.Timing? = nil
    var currentLink: DisplayLink? = nil
    var currentWake: Nanoseconds = 0
    var currentSchedulerDelay: Nanoseconds = 0
    /// When the copy of the frame presented in the current callback ended.
    var presentedCopyEnd: Nanoseconds = 0
    /// The last submit returned more than a refresh after it was called.
    var heldUpInSubmit = false
    var currentHeldByLateFlip = false
    var presentedInCallback: Int = -1
    /// Drawables of frames not yet complete, by frame id; spare ones for reuse.
    var drawables: [FrameID: Drawable] = [:]
    var spareDrawables: [Drawable] = []
    var nextDrawableID: UInt64 = 0
    /// When the session was paused (``BackendEvent/sessionPaused(at:)``), nil while active.
    public internal(set) var sessionPausedAt: Nanoseconds? = nil
    /// Called at each session pause and resume (log writers hook here).
    public var onSessionChange: ((SessionChange) -> Void)?

    public init(backend: any DisplayBackend) throws {
        self.backend = backend
        refreshInterval = backend.refreshInterval
        vrrRange = backend.vrrRange
        lastVBlank = try backend.lastVBlank()
        grid = VBlankGrid(nominal: backend.refreshInterval)
        let capacity = 8
        ring = Array(repeating: FrameReport(), count: capacity)
        predicted = Array(repeating: 0, count: capacity)
        events.reserveCapacity(32)
        links.reserveCapacity(4)
        drawables.reserveCapacity(16)
        spareDrawables.reserveCapacity(8)
    }

    /// Starts `link`: its first callback comes at the current vblank when the pacer is at one
    /// (within 1/8 refresh), else at the next vblank.
    public func add(_ link: DisplayLink) {
        link.rateDirty = true
        link.needsReanchor = true
        links.append(link)
    }

    /// Stops running `link` (without invalidating it).
    func remove(_ link: DisplayLink) {
        links.removeAll { $0 === link }
    }

    /// The current time on the display clock.
    public func now() -> Nanoseconds { backend.now() }

    // MARK: Presenting

    /// Presents the current contents of the backend's surface as frame `frameIndex`.
    ///
    /// Call it from a display link callback with that callback's `update` (the frame is then
    /// aimed at its target presentation), or outside any callback with `update` nil.
    /// `renderStart`/`renderEnd` are when drawing began and ended (deadline accounting).
    @discardableResult
    public func present(
        intent: PresentIntent = .nextOpportunity, update: DisplayLinkUpdate? = nil, frameIndex: Int,
        renderStart: Nanoseconds, renderEnd: Nanoseconds
    ) throws -> FrameID {
        try presentFrame(
            intent: intent, timing: update?.timing, drawable: nil, frameIndex: frameIndex, renderStart: renderStart,
            renderEnd: renderEnd)
    }

    /// ``present(intent:update:frameIndex:renderStart:renderEnd:)`` for a frame whose rendering
    /// was scripted to end at `renderEnd` however late its callback woke (injected lateness).
    @discardableResult
    func presentScripted(
        intent: PresentIntent, update: DisplayLinkUpdate, frameIndex: Int, renderStart: Nanoseconds,
        renderEnd: Nanoseconds
    ) throws -> FrameID {
        scriptedRenderEnds.insert(nextID)
        do {
            return try present(
                intent: intent, update: update, frameIndex: frameIndex, renderStart: renderStart, renderEnd: renderEnd)
        } catch {
            scriptedRenderEnds.removeAll()
            throw error
        }
    }

    /// Presents a drawable of a link callback (``Drawable/present()`` and friends): the render
    /// time runs from the callback's start to now. A failure (device lost) completes the
    /// drawable as failed; the run loop then ends.
    func present(drawable d: Drawable, intent: PresentIntent) {
        do {
            d.frameID = try presentFrame(
                intent: intent, timing: d.update, drawable: d, frameIndex: d.frameIndex,
                renderStart: d.renderStart, renderEnd: backend.now())
        } catch {
            var r = FrameReport()
            r.frameIndex = d.frameIndex
            r.intent = intent
            r.outcome = .failed
            r.cause = outputDisconnected != nil ? .disconnected : .deviceLost
            d.complete(r)
        }
    }

    /// Reports content frame `frameIndex`, "not before" `time`, discarded without drawing or
    /// presenting it: a newer content frame is due at or before the vblank it would be shown
    /// at, so it could never be seen (content ahead of the panel, or behind after the loop was
    /// held up; ``PacingRun`` catches up so, as a video player on a slow display drops a frame).
    /// `cause` is ``hiddenByNext(_:next:target:wake:schedulerDelay:)``'s. No refresh counts as
    /// dropped for it.
    func skip(time: Nanoseconds, update: DisplayLinkUpdate, frameIndex: Int, cause: DropCause?) {
        var r = FrameReport()
        r.id = nextID
        nextID &+= 1
        r.frameIndex = frameIndex
        r.intent = .at(time, nearest: false)
        r.crtc = backend.crtcID
        let u = update.timing
        r.callbackTimestamp = u.timestamp
        if currentUpdate == u { stampCallbackState(&r) }
        (r.wakeTime, r.schedulerDelay) = callbackWake(update)
        r.latency = u.latency
        r.effectiveRateHz = u.rate.hz
        r.targetSequence = Swift.min(peekSequence(at: time), u.targetSequence)
        r.targetTime = self.time(ofSequence: r.targetSequence)
        r.deadline = u.deadline
        r.outcome = .discarded
        r.cause = cause
        deliver(r)
    }

    /// When the callback `update` woke, and its scheduler delay (its timestamp and 0 outside it).
    func callbackWake(_ update: DisplayLinkUpdate) -> (Nanoseconds, Nanoseconds) {
        currentUpdate == update.timing ? (currentWake, currentSchedulerDelay) : (update.timing.timestamp, 0)
    }

    private func presentFrame(
        intent: PresentIntent, timing update: DisplayLinkUpdate.Timing?, drawable: Drawable?, frameIndex: Int,
        renderStart: Nanoseconds, renderEnd: Nanoseconds
    ) throws -> FrameID {
        let id = nextID
        nextID &+= 1
        if deviceLost != nil { throw BackendFailure.deviceLost(deviceLost!) }
        // Timed: on KMS this copies the frame into a scanout buffer, after rendering.
        try backend.finish(frame: id)
        let copyEnd = backend.now()
        // Keep at most 1 + queueCapacity frames (in flight + waiting): discard the oldest waiting.
        while count >= 1 + backend.queueCapacity || count == ring.count {
            let first = inFlight ? 1 : 0
            if count <= first { break }
            discardWaiting(at: first)
        }
        var r = FrameReport()
        r.id = id
        r.frameIndex = frameIndex
        r.intent = intent
        r.renderStart = renderStart
        r.renderEnd = renderEnd
        r.copyEnd = copyEnd
        r.crtc = backend.crtcID
        if let u = update {
            r.callbackTimestamp = u.timestamp
            if currentUpdate == u {
                r.wakeTime = currentWake
                r.schedulerDelay = currentSchedulerDelay
                r.waitedOnLateFlip = currentHeldByLateFlip
            } else {
                r.wakeTime = u.timestamp
            }
            r.latency = u.latency
            r.effectiveRateHz = u.rate.hz
            if let l = currentLink, currentUpdate == u {
                r.range = l.preferredFrameRateRange
                if case .nextOpportunity = intent, l.steadyCadence, !u.rate.isVariable, backend.hasHardwareVBlank {
                    r.cadenceRefreshes = u.rate.refreshesPerFrame
                }
            }
        }
        let plan = plan(intent: intent, update: update)
        r.targetSequence = plan.targetSequence
        r.targetTime = plan.targetTime
        r.deadline = plan.deadline
        let pred = plan.predicted
        let slot = (head + count) % ring.count
        if let u = update, currentUpdate == u { stampCallbackState(&r) }
        ring[slot] = r
        predicted[slot] = pred
        if let d = drawable { drawables[id] = d }
        count += 1
        restoredQueued = nil
        if currentUpdate != nil {
            presentedInCallback = slot
            presentedCopyEnd = copyEnd
        }
        // Made while the session is away (the pause came in during its callback): never shown.
        if sessionPausedAt != nil { flushForPause() }
        try trySubmit()
        return id
    }
}
