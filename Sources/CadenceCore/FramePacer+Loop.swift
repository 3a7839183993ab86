/// The pacer's loop: one turn fires due link callbacks, submits due frames, waits for the next
/// event or wake, and accounts for what completed; draining ends a run. The pacer's state and
/// presenting are in FramePacer.swift.
extension FramePacer {
    /// One turn of the loop: fire due link callbacks, submit due frames, wait for the next event
    /// (or `deadline`), and account for what completed.
    public func runOnce(until deadline: Nanoseconds) throws {
        if deviceLost != nil { return }
        if sessionPausedAt != nil {
            // Nothing is drawn or submitted while the session is away: wait for it to come back.
            _ = try waitAndHandleEvents(until: deadline)
            return
        }
        try refreshLastVBlank()
        try trySubmit()
        if heldUpInSubmit {
            // Flips may have completed while the submit was held up: read their events before
            // the links plan behind predictions that are stale.
            heldUpInSubmit = false
            try refreshLastVBlank()
            guard try waitAndHandleEvents(until: backend.now()) else { return }
        }
        try fireDueLinks()
        // A callback that rendered across a vblank learnt of it afterwards: its frame may be due
        // now (an EBUSY retry still waits for the next vblank).
        if deviceLost == nil && !retryAfterBusy { try trySubmit() }
        guard try checkCompletionTimeout(), deviceLost == nil else { return }
        guard try waitAndHandleEvents(until: try planWake(limit: deadline)) else { return }
        if deviceLost == nil { try trySubmit() }
    }

    /// Waits until every presented frame is complete (or `deadline`, or `maxTurns` turns of the
    /// loop: a virtual-time backend fed a corrupt recording may never advance), firing no link
    /// callbacks. Returns the turns taken. The first turn is taken even when `deadline` has
    /// passed, so that events already read (on a shared device, by another output's wait) are
    /// handled by a drain that must not wait.
    @discardableResult
    public func drain(until deadline: Nanoseconds, maxTurns: Int = .max) throws -> Int {
        var turns = 0
        while count > 0 && deviceLost == nil && (turns == 0 || backend.now() < deadline) && turns < maxTurns {
            turns += 1
            if sessionPausedAt != nil { flushForPause(); break }
            try advanceQueue()
            if count == 0 { break }
            guard try waitAndHandleEvents(until: try planWake(limit: deadline, links: false)) else { return turns }
        }
        return turns
    }

    /// Occupies the time until `deadline` as rendering work would (``WorkSimulating/spin(until:)``;
    /// a plain wait on a display that cannot simulate work) while keeping earlier frames flowing:
    /// with frame latency 2–3 the frames queued before the one being drawn are still submitted at
    /// their vblanks, as a separate render thread allows. Fires no link callbacks.
    package func renderWork(until deadline: Nanoseconds) throws {
        var stillTurns = 0
        var last = backend.now()
        while deviceLost == nil && backend.now() < deadline {
            try advanceQueue()
            let waiting = count - (inFlight ? 1 : 0)
            // A display on virtual time whose clock stops moving, every wait answered at once
            // (the replay of a corrupt log: the replay fuzz target found one that never ended),
            // has the work take its time anyway.
            if waiting <= 0 || stillTurns >= Self.stillTurnLimit, let worker = backend as? any WorkSimulating {
                worker.spin(until: deadline)
                break
            }
            guard try waitAndHandleEvents(until: try planWake(limit: deadline, links: false)) else { return }
            let now = backend.now()
            stillTurns = now == last ? stillTurns + 1 : 0
            last = now
        }
    }

    /// Turns of ``renderWork(until:)`` in a row at one instant of a virtual clock after which it
    /// stops waiting (a few events can share an instant; hundreds cannot).
    static let stillTurnLimit = 256

    /// One step of the loops that wait without firing link callbacks (``drain(until:maxTurns:)``,
    /// ``renderWork(until:)``): reads the vblank, submits what is due, and times out a flip that
    /// never completed. Each such wait is planned after this step, so it is never planned for a
    /// completion timeout that has already passed (a wait that returns at once forever: the
    /// replay fuzz target found one in rendering work).
    func advanceQueue() throws {
        try refreshLastVBlank()
        try trySubmit()
        try checkCompletionTimeout()
    }

    /// Waits for backend events until `wake` and handles them; false when the device was lost.
    func waitAndHandleEvents(until wake: Nanoseconds) throws -> Bool {
        events.removeAll(keepingCapacity: true)
        do {
            try backend.waitForEvents(until: wake, into: &events)
        } catch let f as BackendFailure {
            if loseDisplay(f) { return false }
            throw f
        }
        eventsHandled &+= events.count
        noteLateVBlankEvents(events)
        for e in events { handle(e) }
        return true
    }

    /// Keeps the vblank events of `events` that came over a quarter refresh late, before any of
    /// them is handled: a frame completed by the same read carries them. Noted as each was
    /// handled, a late vblank event read with the last frame's completion, and after it, went
    /// into no frame's report, and its log lost it (a stalled client: the run's last frame,
    /// received 5 refreshes late behind a late vblank event, was on time; its replay, the vblank
    /// event on time, timed the flip out as unconfirmed).
    func noteLateVBlankEvents(_ events: [BackendEvent]) {
        let receivedAt = backend.now()
        for case .vblank(let vb) in events
        where receivedAt &- vb.timestamp > Nanoseconds(refreshInterval / 4) && lateVBlankEvents.count < 64 {
            lateVBlankEvents.append(VBlankReceipt(sequence: vb.sequence, receivedAt: receivedAt))
        }
    }

    func refreshLastVBlank() throws {
        do {
            let vb = try backend.lastVBlank()
            if vb.sequence > lastVBlank.sequence {
                observe(vb)
                lastVBlank = vb
            }
        } catch let f as BackendFailure {
            if !loseDisplay(f) { throw f }
        }
    }

    func planWake(limit: Nanoseconds, links withLinks: Bool = true) throws -> Nanoseconds {
        var wake = limit
        var needVBlankAfter: UInt64 = .max
        if withLinks {
            for link in links where link.isValid && !link.isPaused {
                if link.rate.isVariable {
                    // Held back by its pending frames: their completion wakes the loop, not the
                    // (already passed) fire time.
                    if link.lastCallbackPresented && count >= link.plannedLatency { continue }
                    let fire = link.nextTargetTime &- Nanoseconds(link.plannedLatency) &* Nanoseconds(link.rate.frameInterval.rounded())
                    wake = Swift.min(wake, fire)
                } else {
                    let fire = link.nextTargetSequence &- UInt64(link.plannedLatency * link.rate.refreshesPerFrame)
                    if fire > lastVBlank.sequence {
                        needVBlankAfter = Swift.min(needVBlankAfter, fire &- 1)
                    } else if !(link.lastCallbackPresented && count >= link.plannedLatency) {
                        // Due already (a callback that came late, pushed behind a late frame,
                        // planned the next one at the vblank we are at): fire it at once rather
                        // than sleep until the loop's tick and skip the callbacks missed.
                        wake = Swift.min(wake, backend.now())
                    }
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
                wake = Swift.min(wake, Swift.max(Nanoseconds(bitPattern: predicted[head]) &- commitMargin, vrrCommitNotBefore(ring[head])))
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
                    if loseDisplay(f) { return limit }
                    throw f
                }
                outstandingRequest = needVBlankAfter
            }
        }
        return wake
    }
}
