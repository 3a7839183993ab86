/// Backend events, frame completion and the accounting of each shown frame: lateness, dropped
/// refreshes, hitch, interval and cause.
extension FramePacer {
    // MARK: Events

    func handle(_ e: BackendEvent) {
        switch e {
        case .vblank(let vb):
            let receivedAt = backend.now()
            // (A late one is noted before the events read with it are handled: `noteLateVBlankEvents`.)
            lastVBlankEventDelay = receivedAt &- vb.timestamp
            observe(vb)
            if vb.sequence > lastVBlank.sequence { lastVBlank = vb }
            if let o = outstandingRequest, vb.sequence > o { outstandingRequest = nil }
        case .presented(let id, let vb, let receivedAt):
            observe(vb, flip: true)
            if vb.sequence > lastVBlank.sequence
                || (vb.sequence == lastVBlank.sequence && vb.timestamp != lastVBlank.timestamp)
            {
                lastVBlank = vb
            }
            lastCompletionDelay = receivedAt &- vb.timestamp
            lastCompletionReceived = receivedAt
            guard inFlight, count > 0, ring[head].id == id else { return }
            inFlight = false
            var r = ring[head]
            if !backend.hasHardwareVBlank && r.commitTime > 0 {
                softwareCommitLead = Swift.min(
                    Swift.max(0, vb.timestamp &- r.commitTime), Nanoseconds(refreshInterval / 2))
            }
            if vrrRange != nil && r.commitTime > 0 {
                let took = Swift.max(0, vb.timestamp &- r.commitTime)
                vrrResponse = Swift.min(vrrResponse ?? took, took)
            }
            r.presentedTime = vb.timestamp
            r.sequence = vb.sequence
            r.receivedTime = receivedAt
            pullBackTargets(shown: id, at: vb.sequence)
            account(&r)
            complete(r)
            pushBackQueuedVRRFrames(behindFrameShownAt: r.presentedTime)
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
                failHead(id, cause: .deviceLost)
                if id == nil { loseDevice(why) }
            case .disconnected(let why):
                failHead(id, cause: .disconnected)
                if id == nil { loseDevice(why, cause: .disconnected) }
            case .modeChanged:
                refreshInterval = backend.refreshInterval
                vrrRange = backend.vrrRange
                vrrResponse = nil
                vrrLastSubmittedTarget = nil
                uncertainty.reset()
                grid.reset(nominal: refreshInterval)
                gridAnchored = false
                for l in links { l.rateDirty = true; l.needsReanchor = true }
            case .busy:
                if let id = id, count > 0, ring[head].id == id {
                    inFlight = false
                    ring[head].busyRetries += 1
                    retryAfterBusy = true
                }
            case .other:
                failHead(id, cause: .flipLate)
            }
        case .sessionPaused(let at):
            guard sessionPausedAt == nil else { return }
            sessionPausedAt = at
            flushForPause()
            onSessionChange?(SessionChange(event: .paused, timeNs: at))
        case .sessionResumed(let at, let vb):
            guard let since = sessionPausedAt else { return }
            sessionPausedAt = nil
            // Accounting starts again from the first vblank after the resume: nothing before it
            // is a previous shown frame, an intended refresh or a grid residual.
            if vb.sequence >= lastVBlank.sequence { lastVBlank = vb }
            havePresented = false
            intendedSince = nil
            discardedSinceTime = nil
            outstandingRequest = nil
            retryAfterBusy = false
            gridAnchored = false
            uncertainty.reset()
            grid.reset(nominal: refreshInterval)
            for l in links { l.needsReanchor = true; l.pushedBy = nil }
            onSessionChange?(SessionChange(event: .resumed, timeNs: at, gapNs: Swift.max(0, at &- since)))
        }
    }

    /// The session went away: every frame not yet shown completes as discarded with cause
    /// ``DropCause/sessionPaused`` (no refresh counts as dropped).
    func flushForPause() {
        inFlight = false
        while count > 0 {
            var r = ring[head]
            r.outcome = .discarded
            r.cause = .sessionPaused
            complete(r)
        }
        intendedSince = nil
        discardedSinceTime = nil
    }

    /// Completes the head frame as failed with `cause` when it is submission `id`.
    func failHead(_ id: FrameID?, cause: DropCause) {
        guard let id, count > 0, ring[head].id == id else { return }
        inFlight = false
        var r = ring[head]
        r.outcome = .failed
        r.cause = cause
        complete(r)
    }

    /// A frame latched before the vblank a link's next target was pushed behind (committed in
    /// time, then the process was held up, e.g. stopped, before the commit returned): the link
    /// aims again at the vblank after the one the frame really took, so the refreshes lost
    /// while the process was held up count as dropped.
    func pullBackTargets(shown id: FrameID, at sequence: UInt64) {
        for l in links {
            guard let p = l.pushedBy, p.frame == id else { continue }
            l.pushedBy = nil
            if sequence < p.latch && l.nextTargetSequence == p.pushed {
                l.nextTargetSequence = Swift.max(p.unpushed, sequence &+ UInt64(l.rate.refreshesPerFrame))
            }
        }
    }

    /// VRR: a frame the panel showed later than it could be predicted (a late one that met the
    /// panel's own refresh at its longest interval, then waited its shortest refresh) pushes the
    /// frames queued behind it back, and the links' next targets with them, so that the first is
    /// aimed no sooner than the panel's shortest refresh after it and the link keeps its cadence
    /// from there: as at latency 1, where the next callback waits for the frame to be shown. Their
    /// delay is the late frame's, already charged to it; aimed at their old targets they were
    /// each a second drop event behind it (latency 2, 90 Hz on 48–144 Hz, a frame 2 refreshes
    /// late: the next one 2.1 ms late, flip-late). Frames with a time of their own (`present(at:)`,
    /// a minimum duration) keep it.
    ///
    /// The first of them is then committed at once when the rate is inside the panel's range
    /// (`trySubmit`: the panel holds it until then).
    func pushBackQueuedVRRFrames(behindFrameShownAt shown: Nanoseconds) {
        guard vrrRange != nil, count > 0, ring[head].intent == .nextOpportunity else { return }
        let shift = shown &+ Nanoseconds(refreshInterval.rounded()) &- ring[head].targetTime
        guard shift > 0 else { return }
        // (At a rate below the panel's minimum the commits keep the frame's own cadence: the
        // panel's low-framerate compensation learns the frame's duration from them.)
        if let vrr = vrrRange, ring[head].effectiveRateHz >= vrr.lowerBound { vrrHeldFrame = ring[head].id }
        for i in 0..<count {
            let slot = (head + i) % ring.count
            guard ring[slot].intent == .nextOpportunity else { continue }
            ring[slot].targetTime &+= shift
            ring[slot].deadline &+= shift
            predicted[slot] = UInt64(bitPattern: Nanoseconds(bitPattern: predicted[slot]) &+ shift)
        }
        for l in links where l.rate.isVariable && !l.needsReanchor { l.nextTargetTime &+= shift }
    }

    /// A ``BackendFailure/deviceLost(_:)`` or ``BackendFailure/disconnected(_:)`` ends the
    /// display (true); any other failure is left to the caller (false).
    func loseDisplay(_ f: BackendFailure) -> Bool {
        switch f {
        case .deviceLost(let why): loseDevice(why)
        case .disconnected(let why): loseDevice(why, cause: .disconnected)
        default: return false
        }
        return true
    }

    /// The display is gone: every frame not yet completed fails with `cause` (``DropCause/deviceLost``
    /// or ``DropCause/disconnected``).
    func loseDevice(_ why: String, cause: DropCause = .deviceLost) {
        if deviceLost == nil {
            deviceLost = why
            if cause == .disconnected { outputDisconnected = why }
        }
        inFlight = false
        while count > 0 {
            var r = ring[head]
            r.outcome = .failed
            r.cause = cause
            complete(r)
        }
    }

    /// Discards the waiting frame at ring offset `offset` (0 = head).
    /// `superseded`: a newer frame due at or before its own vblank, which has not passed, hides
    /// it (content ahead of the panel): nothing was late, so it has no cause.
    func discardWaiting(at offset: Int, superseded: Bool = false) {
        let slot = (head + offset) % ring.count
        var r = ring[slot]
        r.outcome = .discarded
        r.cause = superseded ? nil : lateCause(r)
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
            deliver(r)
        }
    }

    func noteDiscarded(_ r: FrameReport) {
        if vrrRange == nil {
            if intendedSince == nil || r.targetSequence < intendedSince! {
                intendedSince = r.targetSequence
                discardedSinceTime = r.targetTime
            }
        } else {
            discardedSinceTime = Swift.min(discardedSinceTime ?? r.targetTime, r.targetTime)
        }
    }

    /// Removes the head frame and reports it.
    func complete(_ r: FrameReport) {
        head = (head + 1) % ring.count
        count -= 1
        deliver(r)
    }

    /// Hands a completed frame to the accounting hook and to its drawable's presented handlers.
    func deliver(_ r: FrameReport) {
        var r = r
        if !lateVBlankEvents.isEmpty {
            r.lateVBlankEvents = lateVBlankEvents
            lateVBlankEvents.removeAll(keepingCapacity: true)
        }
        if !learnedVBlanks.isEmpty {
            r.vblanks = learnedVBlanks
            learnedVBlanks.removeAll(keepingCapacity: true)
        }
        if !scriptedRenderEnds.isEmpty { scriptedRenderEnds.remove(r.id) }
        if let c = restoringAtCompletion, c.id == r.id {
            restore(c.state)
            restoringAtCompletion = nil
        }
        if recordsPacerState && vrrRange == nil { r.pacerStateAtCompletion = pacerState }
        onFrameCompleted?(r)
        if var d = drawables.removeValue(forKey: r.id) {
            d.complete(r)
            recycle(&d)
        }
    }

    // MARK: Drawables

    /// The drawable for the callback about to run: a recycled one when one is free.
    func makeDrawable(_ link: DisplayLink, _ timing: DisplayLinkUpdate.Timing) -> Drawable {
        let d = spareDrawables.popLast() ?? Drawable()
        nextDrawableID &+= 1
        d.bind(
            pacer: self, id: nextDrawableID, canvas: backend.surface ?? .empty, timing: timing,
            frameIndex: link.callbacks, renderStart: backend.now())
        return d
    }

    /// Keeps `d` for reuse when nothing but the pacer holds it any more (the application let go
    /// of it), so that a steady run allocates no drawable per frame.
    func recycle(_ d: inout Drawable) {
        guard isKnownUniquelyReferenced(&d), spareDrawables.count < 8 else { return }
        d.pacer = nil
        spareDrawables.append(d)
    }

    /// Lateness, drops, hitch, interval and cause of a frame that was just shown.
    ///
    /// Hitch: the time the screen showed stale content before this frame, i.e. its presentation
    /// minus the expected presentation of the first dropped refresh, so that every dropped
    /// refresh counts whether the frame behind it was late or discarded. Fixed refresh: that
    /// refresh is this frame's target (a late frame: hitch = its presentation − its target) or
    /// the earliest discarded frame's target, else the vblank after the previous shown frame;
    /// either way about droppedRefreshes × refresh. VRR: presentation − the earliest target.
    func account(_ r: inout FrameReport) {
        var hitch: Nanoseconds = 0
        var cadenceMissCause: DropCause? = nil
        if vrrRange == nil {
            // Late from the first vblank the frame could take: one whose target vblank a late
            // frame before it took is not late itself (that delay is charged to the late frame,
            // as a link's next target is pushed behind it).
            let firstFree = havePresented ? Swift.max(r.targetSequence, lastPresentedSeq &+ 1) : r.targetSequence
            let late = Int64(bitPattern: r.sequence &- firstFree)
            r.lateRefreshes = Int(Swift.max(0, late))
            var from = Swift.min(intendedSince ?? r.targetSequence, r.targetSequence)
            // A steadily presenting link's frame was due one frame interval after the previous
            // shown frame, even when its callback then aimed later (the loop woke late, or waited
            // for a flip completion that came late): the refreshes in between repeated a frame.
            var cadenceMiss = false
            if r.cadenceRefreshes > 0 && havePresented {
                let due = lastPresentedSeq &+ UInt64(r.cadenceRefreshes)
                if due < from { from = due; cadenceMiss = r.sequence > due }
            }
            let floor = havePresented ? Swift.max(from, lastPresentedSeq &+ 1) : from
            r.droppedRefreshes = r.sequence > floor ? Int(r.sequence &- floor) : 0
            if cadenceMiss && r.lateRefreshes == 0 && r.busyRetries == 0 {
                cadenceMissCause = r.waitedOnLateFlip ? .flipLate : .schedulerLate
            }
            if r.droppedRefreshes > 0 {
                let expected: Nanoseconds
                if floor == r.targetSequence {
                    expected = r.targetTime
                } else if floor == intendedSince, let t = discardedSinceTime {
                    expected = t
                } else {
                    expected =
                        r.presentedTime &- clampedNanoseconds((Double(r.droppedRefreshes) * refreshInterval).rounded())
                }
                hitch = Swift.max(0, r.presentedTime &- expected)
            }
            if havePresented {
                // Signed: a backend reporting an earlier vblank (a corrupt log being replayed,
                // a 32-bit counter wrapping) must not trap.
                r.intervalRefreshes = Int(Int64(bitPattern: r.sequence &- lastPresentedSeq))
            }
            lastPresentedSeq = r.sequence
        } else {
            // VRR is judged in time, not in rounded frames: a frame shown more than ε after the
            // time it was meant for (its target, or the earliest discarded frame's) is late, and
            // the screen showed stale content for exactly that long (MetricKit's hitch,
            // "actual − expected > 0"). Its dropped frame intervals are ⌈lateness / frame⌉, at
            // least 1, so that any late frame counts against a limit of 0 dropped. Rounding to whole frames
            // made anything under half a frame vanish.
            let frame = r.effectiveRateHz > 0 ? 1e9 / r.effectiveRateHz : refreshInterval
            let eps = timestampUncertainty
            let lateNs = r.presentedTime &- r.targetTime
            r.lateRefreshes = lateNs > eps ? Swift.max(1, Int((Double(lateNs) / frame).rounded(.up))) : 0
            let from = Swift.min(discardedSinceTime ?? r.targetTime, r.targetTime)
            let stale = r.presentedTime &- from
            r.droppedRefreshes = stale > eps ? Swift.max(1, Int((Double(stale) / frame).rounded(.up))) : 0
            if r.droppedRefreshes > 0 { hitch = stale }
            if havePresented {
                r.intervalRefreshes = Int((Double(r.presentedTime &- lastPresentedTime) / refreshInterval).rounded())
            }
        }
        if havePresented { r.interval = r.presentedTime &- lastPresentedTime }
        r.hitch = hitch
        lastPresentedTime = r.presentedTime
        lastShownIntent = r.intent
        havePresented = true
        intendedSince = nil
        discardedSinceTime = nil
        if r.lateRefreshes > 0 || r.droppedRefreshes > 0 {
            r.outcome = r.lateRefreshes > 0 ? .late : .onTime
            // Shown at its own target but aimed past its due vblank: the link's callback came late.
            r.cause = cadenceMissCause ?? lateCause(r)
        } else {
            r.outcome = .onTime
        }
    }

    /// Why a frame missed its target (also used for discarded frames).
    func lateCause(_ r: FrameReport) -> DropCause {
        if r.busyRetries > 0 { return .busy }
        if r.waitedOnLateFlip { return .flipLate }
        if r.renderEnd > r.deadline {
            // Would it have made the deadline had the loop woken on time? Not a render scripted
            // to end past it: a late wake-up did not move that end.
            let heldUp = r.schedulerDelay > 0 && r.renderEnd &- r.schedulerDelay <= r.deadline
            if heldUp && !scriptedRenderEnds.contains(r.id) { return .schedulerLate }
            return .renderLate
        }
        if r.copyEnd > r.deadline {
            // Rendered in time; the copy into the scanout buffer ended after the deadline.
            if r.schedulerDelay > 0 && r.copyEnd &- r.schedulerDelay <= r.deadline { return .schedulerLate }
            return .copyLate
        }
        if r.commitTime != 0 && r.commitTime > r.deadline {
            // Rendered in time, committed late: the previous flip's completion came late (after
            // the deadline, itself late, vblank events on time), or we did.
            return r.committedBehindLateFlipEvent ? .flipLate : .schedulerLate
        }
        return .flipLate
    }
}
