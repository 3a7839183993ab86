/// Display-link callbacks: when each link fires, the update it gets, the frame it aims at.
extension FramePacer {
    // MARK: Links

    func fireDueLinks() throws {
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
                let old = link.rate
                link.rate = EffectiveRate.select(
                    for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
                link.rateDirty = false
                // Changed between callbacks (not from inside one): the next target was planned at
                // the old rate; plan it one frame of the new rate after the last one instead.
                if !link.needsReanchor && link.callbacks > 0 && old.isVariable == link.rate.isVariable {
                    if link.rate.isVariable {
                        link.nextTargetTime =
                            link.nextTargetTime &- Nanoseconds(old.frameInterval.rounded())
                            &+ Nanoseconds(link.rate.frameInterval.rounded())
                    } else {
                        link.nextTargetSequence =
                            link.nextTargetSequence &- UInt64(old.refreshesPerFrame)
                            &+ UInt64(link.rate.refreshesPerFrame)
                    }
                }
            }
            let latency = Swift.min(link.preferredFrameLatency, 1 + backend.queueCapacity)
            if link.needsReanchor {
                link.needsReanchor = false
                link.steadyCadence = false
                if link.rate.isVariable {
                    link.nextTargetTime =
                        backend.now() &+ Nanoseconds(latency) &* Nanoseconds(link.rate.frameInterval.rounded())
                } else {
                    // Start at a vblank: at once when we are at one, else at the next one, so
                    // that the first callback gets a whole frame to render.
                    let sinceVBlank = backend.now() &- lastVBlank.timestamp
                    let start =
                        sinceVBlank > Nanoseconds(refreshInterval / 8) ? lastVBlank.sequence &+ 1 : lastVBlank.sequence
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

    func fireFixed(_ link: DisplayLink, latency: Int) throws {
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
            // A timer-only link skips the callbacks it missed, staying on its grid: the fewest
            // whole frames that bring it to the last vblank, in one step however far behind (a
            // replay display that cannot follow a corrupt log saturated its vblank at 2^64 − 1,
            // which a loop of one frame at a time never reached).
            let skip = (lastVBlank.sequence &- fire &+ n &- 1) / n &* n
            link.nextTargetSequence &+= skip
            fire &+= skip
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
        let timing = DisplayLinkUpdate.Timing(
            timestamp: lastVBlank.timestamp,
            deadline: presentTime &- commitMargin,
            targetPresentationTimestamp: presentTime,
            targetSequence: target,
            frameInterval: Nanoseconds((Double(n) * refreshInterval).rounded()),
            duration: Nanoseconds(refreshInterval.rounded()),
            rate: link.rate,
            callbackIndex: link.callbacks,
            latency: link.plannedLatency,
            firedLate: lastVBlank.sequence > fire)
        let presentedSlot = try invoke(link, timing, plannedAt: planned)
        // A range change takes effect from this callback on.
        if link.rateDirty {
            link.rate = EffectiveRate.select(
                for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
            link.rateDirty = false
        }
        let n2 = UInt64(link.rate.refreshesPerFrame)
        var next = target &+ n2
        link.pushedBy = nil
        if let slot = presentedSlot {
            try refreshLastVBlank()
            // The frame can latch no sooner than the next vblank; the next one follows it.
            let latch = Swift.max(predicted[slot], lastVBlank.sequence &+ 1)
            if latch &+ n2 > next && slot < ring.count && count > 0 {
                link.pushedBy = (ring[slot].id, next, latch, latch &+ n2)
            }
            next = Swift.max(next, latch &+ n2)

        }
        link.plannedLatency = latency
        link.nextTargetSequence = next
    }

    func fireVariable(_ link: DisplayLink, latency: Int) throws {
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
            // The fewest whole frames after which `fire` is no more than half a frame behind.
            let skip = (nowT &- fire &- d / 2 &+ d &- 1) / d &* d
            link.nextTargetTime &+= skip
            fire &+= skip
        }
        if link.lastCallbackPresented {
            // As on a fixed refresh: a frame shown later than planned (a late render that met a
            // forced refresh) or still pending pushes this one back to the first time the panel
            // can show it, its shortest refresh after them; their delay is charged to them.
            let minGap = Nanoseconds(refreshInterval.rounded())
            var floor = havePresented ? lastPresentedTime &+ minGap : Nanoseconds.min
            if count > 0 {
                floor = Swift.max(floor, Nanoseconds(bitPattern: predicted[(head + count - 1) % ring.count]) &+ minGap)
            }
            if link.nextTargetTime < floor {
                // Aimed at the panel's shortest refresh after a frame it showed late: committed
                // at once (`pushBackQueuedVRRFrames`).
                let behindShown = count == 0 && havePresented && floor == lastPresentedTime &+ minGap
                heldBehindLateFrame = behindShown && link.rate.refreshesPerFrame == 1
                link.nextTargetTime = floor
            }
        }
        let target = link.nextTargetTime
        let timing = DisplayLinkUpdate.Timing(
            timestamp: nowT,
            deadline: target &- commitMargin,
            targetPresentationTimestamp: target,
            targetSequence: lastVBlank.sequence &+ UInt64(link.plannedLatency),
            frameInterval: d,
            duration: Nanoseconds((1e9 / (vrrRange?.upperBound ?? 1e9 / refreshInterval)).rounded()),
            rate: link.rate,
            callbackIndex: link.callbacks,
            latency: link.plannedLatency,
            firedLate: late)
        let presentedSlot = try invoke(link, timing, plannedAt: planned)
        if heldBehindLateFrame, let slot = presentedSlot, slot < ring.count, ring[slot].intent == .nextOpportunity {
            vrrHeldFrame = ring[slot].id
        }
        heldBehindLateFrame = false
        if link.rateDirty {
            link.rate = EffectiveRate.select(
                for: link.preferredFrameRateRange, refreshHz: 1e9 / refreshInterval, vrr: vrrRange)
            link.rateDirty = false
        }
        let d2 = Nanoseconds(link.rate.frameInterval.rounded())
        var next = target &+ d2
        if let slot = presentedSlot {
            let latch = Swift.max(Nanoseconds(bitPattern: predicted[slot]), backend.now())
            next = Swift.max(next, latch &+ d2)
            // A frame with a time of its own (`present(at:)`, a content frame) sets the link's
            // phase: the next callback is aimed a frame after the time that frame is predicted to
            // be shown, even when that is sooner than a frame after this callback's target. Behind
            // a frame shown late the callbacks come from its handover, later than the content
            // clock, and the frame they draw is aimed back at its own time: kept on the
            // callbacks' phase, every content frame after it was drawn after its own time and
            // shown late (48 fps content on a 48 Hz link, 48–144 Hz, latency 1, frame 2 four
            // refreshes late: frames 4–6 each 3.47 ms late, flip-late). PacingModel.md: "each
            // display-link callback shows the newest content frame due at or before its target".
            if case .at = ring[slot].intent { next = latch &+ d2 }
        }
        link.plannedLatency = latency
        link.nextTargetTime = next
    }

    /// The last flip completion arrived late while vblank events came on time: the flip (its
    /// event) was late, not the whole process (that would be scheduler-late).
    func flipEventWasLate() -> Bool {
        let limit = Nanoseconds(refreshInterval / 4)
        return lastCompletionDelay > limit && lastVBlankEventDelay <= limit
    }

    /// The first vblank a newly presented frame could be shown at after the pending ones (0 when
    /// none is pending).
    func earliestFreeSequence() -> UInt64 {
        if count == 0 { return 0 }
        var running = lastVBlank.sequence
        var i = 0
        while i < count {
            let slot = (head + i) % ring.count
            if i == 0 && inFlight && predicted[slot] <= running && ring[slot].commitTime != 0
                && ring[slot].commitTime < time(ofSequence: predicted[slot])
            {
                // Committed before its vblank, which has passed: it latched there and its
                // completion event is on its way (the loop woke between the two, e.g. at a status
                // tick). Counting it as latching at the next vblank would aim the following
                // frames a refresh late and leave a refresh without a new frame.
                i += 1
                continue
            }
            running = Swift.max(predicted[slot], running &+ 1)
            i += 1
        }
        return running &+ 1
    }

    /// Runs the link's handler; returns the ring slot of the frame it presented, if any.
    func invoke(_ link: DisplayLink, _ timing: DisplayLinkUpdate.Timing, plannedAt planned: Nanoseconds) throws -> Int?
    {
        currentUpdate = timing
        currentLink = link
        currentWake = backend.now()
        // Late through no fault of this link's own previous frame: the loop woke late.
        currentSchedulerDelay = link.lastHandlerEnd > planned ? 0 : Swift.max(0, currentWake &- planned)
        presentedInCallback = -1
        // The callback at the vblank the run's began at: its timestamp may be the vblank event's
        // nanoseconds where the run's was the flip's microseconds, or the other way round.
        let halfRefresh = Nanoseconds(refreshInterval / 2)
        if let p = pendingPacerStateRestore, timing.timestamp &+ halfRefresh >= p.callbackTime {
            if timing.timestamp &- halfRefresh < p.callbackTime {
                restore(p.state)
                restoringAtCompletion = p.completed.map { (nextID, $0) }
                if count == 0 { restoredQueued = p.state.lastQueued }
            }
            pendingPacerStateRestore = nil
        }
        callbackPacerState = recordsPacerState && vrrRange == nil ? pacerState : nil
        callbackStatusTime = recordsPacerState ? loopStatusTime : nil
        var drawable = makeDrawable(link, timing)
        link.callbacks += 1
        link.handler(DisplayLinkUpdate(timing: timing, drawable: drawable))
        restoredQueued = nil
        if !drawable.isPresented { recycle(&drawable) }
        link.lastHandlerEnd = presentedInCallback >= 0 ? presentedCopyEnd : backend.now()
        currentUpdate = nil
        currentLink = nil
        let slot = presentedInCallback
        presentedInCallback = -1
        // The slot may have completed already (frame shown or discarded within the callback).
        link.lastCallbackPresented = slot >= 0
        link.steadyCadence = slot >= 0
        return slot >= 0 ? slot : nil
    }
}
