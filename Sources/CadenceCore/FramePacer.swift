/// The pacing core for one display: runs display links, holds presented frames until the vblank
/// they are meant for, submits them one flip at a time, and turns completion events into
/// ``FrameReport``s with exact drop accounting.
///
/// Single-threaded and event-driven: call ``runOnce(until:)`` in a loop (``PacingRun`` does).
/// In the steady state it allocates nothing per frame.
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
    /// `present(at:)` treats a vblank predicted this fraction of a refresh before the requested
    /// time as "not before" it (absorbs timestamp jitter).
    public var placementTolerance: Double = 0.1

    /// Nominal refresh interval in ns (re-read on a mode change).
    public private(set) var refreshInterval: Double
    /// VRR range when active.
    public private(set) var vrrRange: ClosedRange<Double>?
    /// The most recent vblank the pacer knows of.
    public private(set) var lastVBlank: VBlank
    /// Set when the device went away; no more frames can be shown.
    public private(set) var deviceLost: String? = nil
    /// Frames presented to the pacer and not yet completed.
    public var pendingFrames: Int { count }

    private var links: [DisplayLink] = []
    private var events: [BackendEvent] = []
    // Ring of frames not yet completed, in presentation order. Index 0..<submittedCount are in flight.
    private var ring: [FrameReport]
    private var predicted: [UInt64]        // predicted sequence (fixed) or time (VRR) per ring slot
    private var head = 0
    private var count = 0
    private var inFlight = false
    private var lastPresentedSeq: UInt64 = 0
    private var lastPresentedTime: Nanoseconds = 0
    private var havePresented = false
    private var intendedSince: UInt64? = nil
    private var discardedSinceTime: Nanoseconds? = nil
    private var nextID: FrameID = 1
    private var outstandingRequest: UInt64? = nil
    private var retryAfterBusy = false
    private var lastCompletionDelay: Nanoseconds = 0
    private var lastVBlankEventDelay: Nanoseconds = 0
    /// Without hardware vblank: how long the last flip took from commit to completion, so that
    /// the next is committed that much before its target time.
    private var softwareCommitLead: Nanoseconds = 0
    // The callback currently running, so that present() can link the frame to it.
    private var currentUpdate: DisplayLinkUpdate? = nil
    private var currentLink: DisplayLink? = nil
    private var currentWake: Nanoseconds = 0
    private var currentSchedulerDelay: Nanoseconds = 0
    private var currentHeldByLateFlip = false
    private var presentedInCallback: Int = -1

    public init(backend: any DisplayBackend) throws {
        self.backend = backend
        refreshInterval = backend.refreshInterval
        vrrRange = backend.vrrRange
        lastVBlank = try backend.lastVBlank()
        let capacity = 8
        ring = Array(repeating: FrameReport(), count: capacity)
        predicted = Array(repeating: 0, count: capacity)
        events.reserveCapacity(32)
        links.reserveCapacity(4)
    }

    /// Starts `link`: its first callback comes at the current vblank when the pacer is at one
    /// (within 1/8 refresh), else at the next vblank.
    public func add(_ link: DisplayLink) {
        link.rateDirty = true
        link.needsReanchor = true
        links.append(link)
    }

    /// The current time on the display clock.
    public func now() -> Nanoseconds { backend.now() }

    // MARK: Prediction

    /// Predicted time of vblank `sequence` from the last known vblank.
    public func time(ofSequence sequence: UInt64) -> Nanoseconds {
        let d = Int64(bitPattern: sequence &- lastVBlank.sequence)
        return lastVBlank.timestamp &+ Nanoseconds((Double(d) * refreshInterval).rounded())
    }

    /// The first vblank not before `t` (within the placement tolerance), or the nearest one.
    public func sequence(at t: Nanoseconds, nearest: Bool = false) -> UInt64 {
        let k = Double(t &- lastVBlank.timestamp) / refreshInterval
        let steps = nearest ? k.rounded() : (k - placementTolerance).rounded(.up)
        let s = Int64(bitPattern: lastVBlank.sequence) &+ Int64(steps)
        return UInt64(Swift.max(0, s))
    }

    private func refreshesCeil(_ d: Nanoseconds) -> UInt64 {
        UInt64(Swift.max(0, (Double(d) / refreshInterval - placementTolerance).rounded(.up)))
    }

    // MARK: Presenting

    /// Presents the current contents of the backend's surface as frame `frameIndex`.
    ///
    /// Call it from a display link callback with that callback's `update` (the frame is then
    /// aimed at its target presentation), or outside any callback with `update` nil.
    /// `renderStart`/`renderEnd` are when drawing began and ended (deadline accounting).
    @discardableResult
    public func present(intent: PresentIntent = .nextOpportunity, update: DisplayLinkUpdate? = nil, frameIndex: Int, renderStart: Nanoseconds, renderEnd: Nanoseconds) throws -> FrameID {
        let id = nextID
        nextID &+= 1
        if deviceLost != nil { throw BackendFailure.deviceLost(deviceLost!) }
        try backend.finish(frame: id)
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
            if let l = currentLink, currentUpdate == u { r.range = l.preferredFrameRateRange }
        }
        let prev: UInt64? = count > 0 ? predicted[(head + count - 1) % ring.count] : nil
        var pred: UInt64
        if vrrRange != nil {
            // Times stored as UInt64 bit patterns of Nanoseconds.
            let nowT = backend.now()
            let prevT = prev.map { Nanoseconds(bitPattern: $0) } ?? (havePresented ? lastPresentedTime : lastVBlank.timestamp)
            let minGap = Nanoseconds(refreshInterval.rounded())
            let earliest = Swift.max(nowT, prevT &+ minGap)
            var target: Nanoseconds
            switch intent {
            case .nextOpportunity: target = update?.targetPresentationTimestamp ?? earliest
            case .at(let t, _): target = t
            case .afterMinimumDuration(let d):
                target = Swift.max(update?.targetPresentationTimestamp ?? earliest, prevT &+ d)
            }
            r.targetTime = target
            r.targetSequence = update?.targetSequence ?? 0
            r.deadline = update?.targetTimestamp ?? (target &- commitMargin)
            pred = UInt64(bitPattern: Swift.max(target, earliest))
        } else {
            let prevSeq = prev ?? (havePresented ? Swift.max(lastPresentedSeq, lastVBlank.sequence) : lastVBlank.sequence)
            let earliest = Swift.max(lastVBlank.sequence &+ 1, prevSeq &+ 1)
            var target: UInt64
            switch intent {
            case .nextOpportunity: target = update?.targetSequence ?? earliest
            case .at(let t, let nearest): target = sequence(at: t, nearest: nearest)
            case .afterMinimumDuration(let d):
                target = Swift.max(update?.targetSequence ?? earliest, prevSeq &+ Swift.max(1, refreshesCeil(d)))
            }
            r.targetSequence = target
            r.targetTime = time(ofSequence: target)
            r.deadline = update?.targetTimestamp ?? (r.targetTime &- commitMargin)
            pred = Swift.max(target, earliest)
        }
        let slot = (head + count) % ring.count
        ring[slot] = r
        predicted[slot] = pred
        count += 1
        if currentUpdate != nil { presentedInCallback = slot }
        try trySubmit()
        return id
    }

    // MARK: Loop

    /// One turn of the loop: fire due link callbacks, submit due frames, wait for the next event
    /// (or `deadline`), and account for what completed.
    public func runOnce(until deadline: Nanoseconds) throws {
        if deviceLost != nil { return }
        try refreshLastVBlank()
        try trySubmit()
        try fireDueLinks()
        checkCompletionTimeout()
        if deviceLost != nil { return }
        guard try waitAndHandleEvents(until: try planWake(limit: deadline)) else { return }
        if deviceLost == nil { try trySubmit() }
    }

    /// Waits until every presented frame is complete (or `deadline`, or `maxTurns` turns of the
    /// loop: a virtual-time backend fed a corrupt recording may never advance), firing no link
    /// callbacks. Returns the turns taken.
    @discardableResult
    public func drain(until deadline: Nanoseconds, maxTurns: Int = .max) throws -> Int {
        var turns = 0
        while count > 0 && deviceLost == nil && backend.now() < deadline && turns < maxTurns {
            turns += 1
            try refreshLastVBlank()
            try trySubmit()
            checkCompletionTimeout()
            if count == 0 { break }
            guard try waitAndHandleEvents(until: try planWake(limit: deadline, links: false)) else { return turns }
        }
        return turns
    }

    /// Occupies the time until `deadline` as rendering work would (``DisplayBackend/spin(until:)``)
    /// while keeping earlier frames flowing: with frame latency 2–3 the frames queued before the
    /// one being drawn are still submitted at their vblanks, as a separate render thread allows.
    /// Fires no link callbacks.
    public func renderWork(until deadline: Nanoseconds) throws {
        while deviceLost == nil && backend.now() < deadline {
            try refreshLastVBlank()
            try trySubmit()
            let waiting = count - (inFlight ? 1 : 0)
            if waiting <= 0 {
                backend.spin(until: deadline)
                break
            }
            guard try waitAndHandleEvents(until: try planWake(limit: deadline, links: false)) else { return }
        }
    }

    /// Waits for backend events until `wake` and handles them; false when the device was lost.
    private func waitAndHandleEvents(until wake: Nanoseconds) throws -> Bool {
        events.removeAll(keepingCapacity: true)
        do {
            try backend.waitForEvents(until: wake, into: &events)
        } catch let f as BackendFailure {
            if case .deviceLost(let why) = f { loseDevice(why); return false }
            throw f
        }
        for e in events { handle(e) }
        return true
    }

    private func refreshLastVBlank() throws {
        do {
            let vb = try backend.lastVBlank()
            if vb.sequence > lastVBlank.sequence { lastVBlank = vb }
        } catch let f as BackendFailure {
            if case .deviceLost(let why) = f { loseDevice(why) } else { throw f }
        }
    }

    private func planWake(limit: Nanoseconds, links withLinks: Bool = true) throws -> Nanoseconds {
        var wake = limit
        var needVBlankAfter: UInt64 = .max
        if withLinks {
            for link in links where link.isValid && !link.isPaused {
                if link.rate.isVariable {
                    // A link held back by pending frames fires on a completion, not at its time
                    // (which can pass while a flip waits for the panel: an LFC repeat just
                    // before it). Waking at a past time would spin without time advancing.
                    if link.lastCallbackPresented && count >= link.plannedLatency { continue }
                    let fire = link.nextTargetTime &- Nanoseconds(link.plannedLatency) &* Nanoseconds(link.rate.frameInterval.rounded())
                    wake = Swift.min(wake, fire)
                } else {
                    let fire = link.nextTargetSequence &- UInt64(link.plannedLatency * link.rate.refreshesPerFrame)
                    if fire > lastVBlank.sequence { needVBlankAfter = Swift.min(needVBlankAfter, fire &- 1) }
                }
            }
        }
        if count > 0 {
            if inFlight {
                let r = ring[head]
                let due = vrrRange == nil ? time(ofSequence: Swift.max(r.targetSequence, lastVBlank.sequence &+ 1)) : Swift.max(r.targetTime, r.commitTime)
                let timeout = Swift.max(due, r.commitTime) &+ Nanoseconds(Double(completionTimeoutRefreshes) * refreshInterval)
                wake = Swift.min(wake, timeout)
            } else if vrrRange != nil {
                wake = Swift.min(wake, Nanoseconds(bitPattern: predicted[head]) &- commitMargin)
            } else {
                let target = predicted[head]
                if target >= lastVBlank.sequence &+ 2 { needVBlankAfter = Swift.min(needVBlankAfter, target &- 2) }
                if !backend.hasHardwareVBlank { wake = Swift.min(wake, time(ofSequence: ring[head].targetSequence) &- softwareCommitLead) }
            }
        }
        if retryAfterBusy { needVBlankAfter = Swift.min(needVBlankAfter, lastVBlank.sequence) }
        if needVBlankAfter != .max {
            if outstandingRequest == nil || needVBlankAfter < outstandingRequest! {
                do {
                    try backend.requestVBlank(after: needVBlankAfter)
                } catch let f as BackendFailure {
                    if case .deviceLost(let why) = f { loseDevice(why); return limit }
                    throw f
                }
                outstandingRequest = needVBlankAfter
            }
        }
        return wake
    }

    // MARK: Links

    private func fireDueLinks() throws {
        var i = 0
        while i < links.count {
            let link = links[i]
            if !link.isValid {
                links.remove(at: i)
                continue
            }
            i += 1
            if link.isPaused { continue }
            if link.rateDirty {
                link.rate = EffectiveRate.select(for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
                link.rateDirty = false
            }
            let latency = Swift.min(link.preferredFrameLatency, 1 + backend.queueCapacity)
            if link.needsReanchor {
                link.needsReanchor = false
                if link.rate.isVariable {
                    link.nextTargetTime = backend.now() &+ Nanoseconds(latency) &* Nanoseconds(link.rate.frameInterval.rounded())
                } else {
                    // Start at a vblank: at once when we are at one, else at the next one, so
                    // that the first callback gets a whole frame to render.
                    let sinceVBlank = backend.now() &- lastVBlank.timestamp
                    let start = sinceVBlank > Nanoseconds(refreshInterval / 8) ? lastVBlank.sequence &+ 1 : lastVBlank.sequence
                    link.nextTargetSequence = start &+ UInt64(latency * link.rate.refreshesPerFrame)
                }
                link.plannedLatency = latency
            }
            if link.rate.isVariable {
                try fireVariable(link, latency: latency)
            } else {
                try fireFixed(link, latency: latency)
            }
            if deviceLost != nil { return }
        }
    }

    private func fireFixed(_ link: DisplayLink, latency: Int) throws {
        let n = UInt64(link.rate.refreshesPerFrame)
        var fire = link.nextTargetSequence &- UInt64(link.plannedLatency) &* n
        guard fire <= lastVBlank.sequence else { return }
        // Back-pressure: a presenting link waits while `latency` frames are still pending.
        if link.lastCallbackPresented && count >= link.plannedLatency {
            link.heldByPendingFlip = true
            return
        }
        let planned = time(ofSequence: fire)
        let late = lastVBlank.sequence > fire
        if late && !link.lastCallbackPresented {
            // A timer-only link skips the callbacks it missed, staying on its grid.
            while fire < lastVBlank.sequence {
                link.nextTargetSequence &+= n
                fire &+= n
            }
        }
        if link.lastCallbackPresented {
            // Frames still pending or shown later than planned (EBUSY, a late flip) push this one
            // back: aim it at the first vblank after them so that it is not late behind them
            // (their delay is already charged to them).
            var floor = earliestFreeSequence()
            if havePresented { floor = Swift.max(floor, lastPresentedSeq &+ 1) }
            if link.nextTargetSequence < floor { link.nextTargetSequence = floor }
        }
        currentHeldByLateFlip = link.heldByPendingFlip && flipEventWasLate()
        link.heldByPendingFlip = false
        let target = link.nextTargetSequence
        let presentTime = time(ofSequence: target)
        let update = DisplayLinkUpdate(
            timestamp: lastVBlank.timestamp,
            targetTimestamp: presentTime &- commitMargin,
            targetPresentationTimestamp: presentTime,
            targetSequence: target,
            duration: Nanoseconds((Double(n) * refreshInterval).rounded()),
            rate: link.rate,
            callbackIndex: link.callbacks,
            latency: link.plannedLatency,
            firedLate: lastVBlank.sequence > fire)
        let presentedSlot = try invoke(link, update, plannedAt: planned)
        // A range change takes effect from this callback on.
        if link.rateDirty {
            link.rate = EffectiveRate.select(for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
            link.rateDirty = false
        }
        let n2 = UInt64(link.rate.refreshesPerFrame)
        var next = target &+ n2
        if let slot = presentedSlot {
            try refreshLastVBlank()
            // The frame can latch no sooner than the next vblank; the next one follows it.
            let latch = Swift.max(predicted[slot], lastVBlank.sequence &+ 1)
            next = Swift.max(next, latch &+ n2)
        }
        link.plannedLatency = latency
        link.nextTargetSequence = next
    }

    private func fireVariable(_ link: DisplayLink, latency: Int) throws {
        let d = Nanoseconds(link.rate.frameInterval.rounded())
        let nowT = backend.now()
        var fire = link.nextTargetTime &- Nanoseconds(link.plannedLatency) &* d
        guard fire <= nowT else { return }
        if link.lastCallbackPresented && count >= link.plannedLatency {
            link.heldByPendingFlip = true
            return
        }
        currentHeldByLateFlip = link.heldByPendingFlip && flipEventWasLate()
        link.heldByPendingFlip = false
        let planned = fire
        let late = nowT - fire > d / 2
        if late && !link.lastCallbackPresented {
            while fire &+ d / 2 < nowT {
                link.nextTargetTime &+= d
                fire &+= d
            }
        }
        let target = link.nextTargetTime
        let update = DisplayLinkUpdate(
            timestamp: nowT,
            targetTimestamp: target &- commitMargin,
            targetPresentationTimestamp: target,
            targetSequence: lastVBlank.sequence &+ UInt64(link.plannedLatency),
            duration: d,
            rate: link.rate,
            callbackIndex: link.callbacks,
            latency: link.plannedLatency,
            firedLate: late)
        let presentedSlot = try invoke(link, update, plannedAt: planned)
        if link.rateDirty {
            link.rate = EffectiveRate.select(for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
            link.rateDirty = false
        }
        let d2 = Nanoseconds(link.rate.frameInterval.rounded())
        var next = target &+ d2
        if let slot = presentedSlot {
            let latch = Swift.max(Nanoseconds(bitPattern: predicted[slot]), backend.now())
            next = Swift.max(next, latch &+ d2)
        }
        link.plannedLatency = latency
        link.nextTargetTime = next
    }

    /// The last flip completion arrived late while vblank events came on time: the flip (its
    /// event) was late, not the whole process (that would be scheduler-late).
    private func flipEventWasLate() -> Bool {
        let limit = Nanoseconds(refreshInterval / 4)
        return lastCompletionDelay > limit && lastVBlankEventDelay <= limit
    }

    /// The first vblank a newly presented frame could be shown at after the pending ones (0 when
    /// none is pending).
    private func earliestFreeSequence() -> UInt64 {
        if count == 0 { return 0 }
        var running = lastVBlank.sequence
        var i = 0
        while i < count {
            let slot = (head + i) % ring.count
            running = Swift.max(predicted[slot], running &+ 1)
            i += 1
        }
        return running &+ 1
    }

    /// Runs the link's handler; returns the ring slot of the frame it presented, if any.
    private func invoke(_ link: DisplayLink, _ update: DisplayLinkUpdate, plannedAt planned: Nanoseconds) throws -> Int? {
        currentUpdate = update
        currentLink = link
        currentWake = backend.now()
        // Late through no fault of this link's own previous frame: the loop woke late.
        currentSchedulerDelay = link.lastHandlerEnd > planned ? 0 : Swift.max(0, currentWake &- planned)
        presentedInCallback = -1
        link.callbacks += 1
        link.handler(update)
        link.lastHandlerEnd = backend.now()
        currentUpdate = nil
        currentLink = nil
        let slot = presentedInCallback
        presentedInCallback = -1
        // The slot may have completed already (frame shown or discarded within the callback).
        link.lastCallbackPresented = slot >= 0
        return slot >= 0 ? slot : nil
    }

    // MARK: Submission

    private func trySubmit() throws {
        while count > 0 && !inFlight && deviceLost == nil {
            var r = ring[head]
            if vrrRange == nil {
                if case .afterMinimumDuration(let d) = r.intent, havePresented {
                    let minSeq = lastPresentedSeq &+ Swift.max(1, refreshesCeil(d))
                    if minSeq > r.targetSequence {
                        r.targetSequence = minSeq
                        r.targetTime = time(ofSequence: minSeq)
                        ring[head] = r
                    }
                    predicted[head] = Swift.max(predicted[head], minSeq)
                }
                let due = lastVBlank.sequence &+ 1
                if r.targetSequence > due { return }
                // Without hardware vblank a flip completes at commit, not at a vblank: commit at
                // the target's predicted time instead of as soon as the previous one completed.
                if !backend.hasHardwareVBlank && backend.now() < time(ofSequence: r.targetSequence) &- softwareCommitLead { return }
                // A newer frame due at the same vblank makes this one invisible: discard it.
                if count > 1 {
                    let n = ring[(head + 1) % ring.count]
                    if n.targetSequence <= due && !isMinDuration(n.intent) {
                        discardWaiting(at: 0)
                        continue
                    }
                }
            } else {
                if case .afterMinimumDuration(let d) = r.intent, havePresented {
                    let minT = lastPresentedTime &+ d
                    if minT > r.targetTime { r.targetTime = minT; ring[head] = r }
                }
                let nowT = backend.now()
                if r.targetTime &- commitMargin > nowT { return }
                if count > 1 {
                    let n = ring[(head + 1) % ring.count]
                    if n.targetTime &- commitMargin <= nowT && !isMinDuration(n.intent) {
                        discardWaiting(at: 0)
                        continue
                    }
                }
            }
            do {
                try backend.submit(frame: r.id)
                ring[head].commitTime = backend.now()
                inFlight = true
                retryAfterBusy = false
            } catch BackendFailure.busy {
                ring[head].busyRetries += 1
                retryAfterBusy = true
                return
            } catch BackendFailure.deviceLost(let why) {
                loseDevice(why)
                return
            }
        }
    }

    private func isMinDuration(_ i: PresentIntent) -> Bool {
        if case .afterMinimumDuration = i { return true }
        return false
    }

    private func checkCompletionTimeout() {
        guard inFlight, count > 0 else { return }
        let r = ring[head]
        let due = vrrRange == nil ? time(ofSequence: r.targetSequence) : r.targetTime
        let limit = Swift.max(due, r.commitTime) &+ Nanoseconds(Double(completionTimeoutRefreshes) * refreshInterval)
        if backend.now() >= limit {
            var done = r
            done.outcome = .unconfirmed
            done.cause = .flipLate
            inFlight = false
            complete(done)
        }
    }

    // MARK: Events

    private func handle(_ e: BackendEvent) {
        switch e {
        case .vblank(let vb):
            lastVBlankEventDelay = backend.now() &- vb.timestamp
            if vb.sequence > lastVBlank.sequence { lastVBlank = vb }
            if let o = outstandingRequest, vb.sequence > o { outstandingRequest = nil }
        case .presented(let id, let vb, let receivedAt):
            if vb.sequence > lastVBlank.sequence || (vb.sequence == lastVBlank.sequence && vb.timestamp != lastVBlank.timestamp) {
                lastVBlank = vb
            }
            lastCompletionDelay = receivedAt &- vb.timestamp
            guard inFlight, count > 0, ring[head].id == id else { return }
            inFlight = false
            var r = ring[head]
            if !backend.hasHardwareVBlank && r.commitTime > 0 {
                softwareCommitLead = Swift.min(Swift.max(0, vb.timestamp &- r.commitTime), Nanoseconds(refreshInterval / 2))
            }
            r.presentedTime = vb.timestamp
            r.sequence = vb.sequence
            r.receivedTime = receivedAt
            account(&r)
            complete(r)
        case .discarded(let id):
            guard count > 0, ring[head].id == id else { return }
            if inFlight { inFlight = false }
            var r = ring[head]
            r.outcome = .discarded
            r.cause = r.cause ?? lateCause(r)
            noteDiscarded(r)
            complete(r)
        case .failed(let id, let failure):
            switch failure {
            case .deviceLost(let why):
                if let id = id, count > 0, ring[head].id == id {
                    inFlight = false
                    var r = ring[head]
                    r.outcome = .failed
                    r.cause = .deviceLost
                    complete(r)
                }
                if id == nil { loseDevice(why) }
            case .modeChanged:
                refreshInterval = backend.refreshInterval
                vrrRange = backend.vrrRange
                for l in links { l.rateDirty = true; l.needsReanchor = true }
            case .busy:
                if let id = id, count > 0, ring[head].id == id {
                    inFlight = false
                    ring[head].busyRetries += 1
                    retryAfterBusy = true
                }
            case .other:
                if let id = id, count > 0, ring[head].id == id {
                    inFlight = false
                    var r = ring[head]
                    r.outcome = .failed
                    r.cause = .flipLate
                    complete(r)
                }
            }
        }
    }

    private func loseDevice(_ why: String) {
        if deviceLost == nil { deviceLost = why }
        inFlight = false
        while count > 0 {
            var r = ring[head]
            r.outcome = .failed
            r.cause = .deviceLost
            complete(r)
        }
    }

    /// Discards the waiting frame at ring offset `offset` (0 = head).
    private func discardWaiting(at offset: Int) {
        let slot = (head + offset) % ring.count
        var r = ring[slot]
        r.outcome = .discarded
        r.cause = lateCause(r)
        noteDiscarded(r)
        if offset == 0 {
            complete(r)
        } else {
            // Shift later frames down over the hole, then report.
            var i = offset
            while i < count - 1 {
                ring[(head + i) % ring.count] = ring[(head + i + 1) % ring.count]
                predicted[(head + i) % ring.count] = predicted[(head + i + 1) % ring.count]
                i += 1
            }
            count -= 1
            onFrameCompleted?(r)
        }
    }

    private func noteDiscarded(_ r: FrameReport) {
        if vrrRange == nil {
            intendedSince = Swift.min(intendedSince ?? r.targetSequence, r.targetSequence)
        } else {
            discardedSinceTime = Swift.min(discardedSinceTime ?? r.targetTime, r.targetTime)
        }
    }

    /// Removes the head frame and reports it.
    private func complete(_ r: FrameReport) {
        head = (head + 1) % ring.count
        count -= 1
        onFrameCompleted?(r)
    }

    /// Lateness, drops, hitch, interval and cause of a frame that was just shown.
    private func account(_ r: inout FrameReport) {
        if vrrRange == nil {
            let late = Int64(bitPattern: r.sequence &- r.targetSequence)
            r.lateRefreshes = Int(Swift.max(0, late))
            let from = Swift.min(intendedSince ?? r.targetSequence, r.targetSequence)
            let floor = havePresented ? Swift.max(from, lastPresentedSeq &+ 1) : from
            r.droppedRefreshes = r.sequence > floor ? Int(r.sequence &- floor) : 0
            if havePresented {
                // Signed: a backend reporting an earlier vblank (a corrupt log being replayed,
                // a 32-bit counter wrapping) must not trap.
                r.intervalRefreshes = Int(Int64(bitPattern: r.sequence &- lastPresentedSeq))
            }
            lastPresentedSeq = r.sequence
        } else {
            let frame = r.effectiveRateHz > 0 ? 1e9 / r.effectiveRateHz : refreshInterval
            let lateNs = r.presentedTime &- r.targetTime
            r.lateRefreshes = Swift.max(0, Int((Double(lateNs) / frame).rounded()))
            let from = Swift.min(discardedSinceTime ?? r.targetTime, r.targetTime)
            r.droppedRefreshes = Swift.max(0, Int((Double(r.presentedTime &- from) / frame).rounded()))
            if havePresented {
                r.intervalRefreshes = Int((Double(r.presentedTime &- lastPresentedTime) / refreshInterval).rounded())
            }
        }
        if havePresented { r.interval = r.presentedTime &- lastPresentedTime }
        r.hitch = r.presentedTime &- r.targetTime
        lastPresentedTime = r.presentedTime
        havePresented = true
        intendedSince = nil
        discardedSinceTime = nil
        if r.lateRefreshes > 0 || r.droppedRefreshes > 0 {
            r.outcome = r.lateRefreshes > 0 ? .late : .onTime
            r.cause = lateCause(r)
        } else {
            r.outcome = .onTime
        }
    }

    /// Why a frame missed its target (also used for discarded frames).
    private func lateCause(_ r: FrameReport) -> DropCause {
        if r.busyRetries > 0 { return .busy }
        if r.waitedOnLateFlip { return .flipLate }
        if r.renderEnd > r.deadline {
            // Would it have made the deadline had the loop woken on time?
            if r.schedulerDelay > 0 && r.renderEnd &- r.schedulerDelay <= r.deadline { return .schedulerLate }
            return .renderLate
        }
        if r.commitTime != 0 && r.commitTime > r.deadline {
            // Rendered in time, committed late: the previous flip's completion came late, or we did.
            return flipEventWasLate() ? .flipLate : .schedulerLate
        }
        return .flipLate
    }
}
