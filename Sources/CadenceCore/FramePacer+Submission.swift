/// Submission, one flip in flight at a time: the frame at the head of the queue is flipped when
/// its vblank is the next one a flip can latch at (fixed refresh) or its time minus the commit
/// margin has come (VRR); a frame a newer one would hide at the same vblank is discarded; EBUSY
/// retries; a flip whose completion never arrives is given up as unconfirmed.
extension FramePacer {
    // MARK: Submission

    func trySubmit() throws {
        while sessionPausedAt == nil && count > 0 && !inFlight && deviceLost == nil {
            var r = ring[head]
            if vrrRange == nil {
                if case .afterMinimumDuration(let d) = r.intent, havePresented {
                    // From the previous frame's actual vblank, now that it is known.
                    let minSeq = lastPresentedSeq &+ minimumDurationRefreshes(d)
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
                // Without hardware vblank the vblank counter is a timer that is already at the
                // head's target when its commit time comes: the newer frame hides it only when
                // its own commit time has come too (else every frame at latency 2-3 was
                // discarded behind the next one).
                if count > 1 {
                    let n = ring[(head + 1) % ring.count]
                    let newerDue = backend.hasHardwareVBlank
                        ? n.targetSequence <= due
                        : backend.now() >= time(ofSequence: n.targetSequence) &- softwareCommitLead
                    if newerDue && !isMinDuration(n.intent) {
                        // Superseded, nothing late: the newer frame is due at or before this
                        // one's own vblank, which has not passed (content ahead of the panel).
                        let superseded = n.targetSequence <= r.targetSequence && r.targetSequence >= due
                        discardWaiting(at: 0, superseded: superseded)
                        continue
                    }
                }
            } else {
                let notBefore = vrrNotBefore(r)
                if isMinDuration(r.intent), let last = vrrLastSubmittedTarget, r.effectiveRateHz > 0 {
                    // The link's cadence from the frame before's own target: a frame whose time
                    // moved later while this one was rendered (latency 3, a late render) planned
                    // this one from its old time (40–60 Hz, 51.5 Hz link, 16.67 ms: frame 4 shown
                    // 16.67 ms after frame 3, not the link's 19.42 ms).
                    let cadence = last &+ Nanoseconds((1e9 / r.effectiveRateHz).rounded())
                    if cadence > r.targetTime { aimHead(&r, later: cadence) }
                }
                if case .afterMinimumDuration = r.intent, notBefore > r.targetTime {
                    // Its deadline is its own (`plan(intent:update:)`): committed at its time,
                    // it was not late to commit (a frame the panel then held is flip-late, not
                    // scheduler-late).
                    // The frames queued behind it and the link keep the link's cadence from its
                    // new target, as behind a frame the panel showed late: planned from its old
                    // one, the frames after a late frame at latency 2–3 came its minimum duration
                    // apart, sooner than the link's frame (48 Hz, 20.831 ms: 3 µs a frame).
                    aimHead(&r, later: notBefore)
                    // Its prediction moves with it, as on a fixed refresh: the frames presented
                    // after it (`plan`) and the link's next target count from it. Left at the
                    // time chained from the predictions before it at its callback, the frames
                    // after it were aimed from a phase set by the run's first frame, which no
                    // log line holds: a rotated log's later file, replayed from its first
                    // carried frame, aimed them from another (an injected late render 3.78 ms
                    // later at 90 Hz with a 12 ms minimum duration, latency 2).
                    keepTheLinksCadenceBehindHead()
                }
                if notBefore != .min && havePresented {
                    // A timed frame the panel cannot show at its time (the frame before was shown
                    // late, less than the panel's shortest refresh before it) is aimed at that
                    // refresh: the delay is the late frame's ("the next frame is aimed no sooner
                    // than that", as `pushBackQueuedVRRFrames` does for the link's own frames).
                    // Judged against its content time, the frame after a late one was a second
                    // drop event (48 fps content on a 48 Hz link, frame 2 three refreshes late:
                    // frame 3 3.47 ms late, flip-late).
                    let floor = lastPresentedTime &+ Nanoseconds(refreshInterval.rounded())
                    if floor > r.targetTime {
                        aimHead(&r, later: floor)
                        if isMinDuration(r.intent) { keepTheLinksCadenceBehindHead() }
                    }
                }
                let nowT = backend.now()
                // The frame aimed at the panel's shortest refresh after a frame the panel showed
                // late is committed at once: the panel holds it until then. Committed at its
                // target, its commit interval was the late frame's delay plus a refresh, after a
                // long one (the late frame's): the panel's low-framerate compensation took the two
                // long intervals for a long frame and repeated it just before the next commit,
                // which then waited a refresh, and so on: every frame after was late (59.94 Hz on
                // a 40–60 Hz panel at frame latency 2, a frame 4 refreshes late).
                let held = r.id == vrrHeldFrame
                if (r.targetTime &- commitMargin > nowT && !held) || vrrCommitNotBefore(r) > nowT { return }
                if count > 1 {
                    let n = ring[(head + 1) % ring.count]
                    if n.targetTime &- commitMargin <= nowT && !isMinDuration(n.intent) {
                        discardWaiting(at: 0)
                        continue
                    }
                }
            }
            do {
                let start = backend.now()
                try backend.submit(frame: r.id)
                if vrrRange != nil { vrrLastSubmittedTarget = ring[head].targetTime }
                let end = backend.now()
                ring[head].commitTime = end
                let deadline = ring[head].deadline
                ring[head].committedBehindLateFlipEvent =
                    end > deadline && lastCompletionReceived > deadline && flipEventWasLate()
                inFlight = true
                retryAfterBusy = false
                // A commit that returns a refresh or more late: the process was held up inside it.
                if Double(end &- start) > refreshInterval { heldUpInSubmit = true }
            } catch BackendFailure.busy {
                ring[head].busyRetries += 1
                retryAfterBusy = true
                return
            } catch BackendFailure.deviceLost(let why) {
                loseDevice(why)
                return
            } catch BackendFailure.disconnected(let why) {
                loseDevice(why, cause: .disconnected)
                return
            }
        }
    }

    /// VRR: a flip starts a refresh when committed, so a frame that must not show before a time
    /// (minimum duration after the previous frame's actual presentation, present(at:) "not
    /// before") is not committed before that time − ε, commit margin or not.
    func vrrNotBefore(_ r: FrameReport) -> Nanoseconds {
        switch r.intent {
        case .afterMinimumDuration(let d) where havePresented: return lastPresentedTime &+ d &- timestampUncertainty
        case .at(let t, false): return t &- timestampUncertainty
        default: return .min
        }
    }

    /// VRR: when a frame held by ``vrrNotBefore(_:)`` may be committed: that time less the
    /// panel's response (the shortest commit-to-refresh time seen, ``vrrResponse``; before the
    /// first flip is shown, the display's recommended commit margin: KMS's is the response,
    /// the fake display's 0), never more than the commit margin, so that it is shown at that
    /// time and never before it. Held until the time itself, every present(at:)
    /// and minimum-duration frame on KMS was shown the response (100 µs) late (24 fps content on
    /// a 48–144 Hz panel: 60 drop events in 60 frames; a 30 ms minimum duration: 119 in 120);
    /// held the whole margin before it, the fake display (no response) with a 2 ms margin showed
    /// them 2 ms early. `.min` (nothing to hold) stays `.min`.
    func vrrCommitNotBefore(_ r: FrameReport) -> Nanoseconds {
        let t = vrrNotBefore(r)
        return t == .min ? .min : t &- Swift.min(commitMargin, vrrResponse ?? backend.recommendedCommitMargin)
    }

    /// VRR: aims the head frame `r` at `t`, later than its target: its deadline no sooner than
    /// `t` less the commit margin, and its prediction (what the frames after it, the link and
    /// the loop's wake count from) moved with it.
    func aimHead(_ r: inout FrameReport, later t: Nanoseconds) {
        r.targetTime = t
        r.deadline = Swift.max(r.deadline, t &- commitMargin)
        ring[head] = r
        predicted[head] = UInt64(bitPattern: Swift.max(Nanoseconds(bitPattern: predicted[head]), t))
    }

    /// VRR: the minimum-duration frames queued behind the head, and the links, are aimed no
    /// sooner than one frame of the link after the frame before them ("the frame after a late one
    /// keeps the link's cadence from it"), once the head's time moved later.
    func keepTheLinksCadenceBehindHead() {
        var before = ring[head].targetTime
        for i in 1..<Swift.max(1, count) {
            let slot = (head + i) % ring.count
            guard isMinDuration(ring[slot].intent), ring[slot].effectiveRateHz > 0 else { break }
            let want = before &+ Nanoseconds((1e9 / ring[slot].effectiveRateHz).rounded())
            if ring[slot].targetTime < want {
                let shift = want &- ring[slot].targetTime
                ring[slot].targetTime = want
                ring[slot].deadline &+= shift
                predicted[slot] = UInt64(bitPattern: Swift.max(Nanoseconds(bitPattern: predicted[slot]), want))
            }
            before = ring[slot].targetTime
        }
        for l in links where l.rate.isVariable && !l.needsReanchor {
            l.nextTargetTime = Swift.max(l.nextTargetTime, before &+ Nanoseconds(l.rate.frameInterval.rounded()))
        }
    }

    func isMinDuration(_ i: PresentIntent) -> Bool {
        if case .afterMinimumDuration = i { return true }
        return false
    }

    /// Gives up the flip in flight as ``FrameOutcome/unconfirmed`` when its completion has not
    /// arrived ``completionTimeoutRefreshes`` refreshes after it was due. Events that are already
    /// waiting are read first: a completion that arrived while the loop was busy (a long render
    /// at frame latency 2–3 keeps the loop away from the events for refreshes) is a shown frame,
    /// not a timeout. Returns false when the device was lost while reading them.
    @discardableResult
    func checkCompletionTimeout() throws -> Bool {
        guard inFlight, count > 0, backend.now() >= completionLimit(ring[head]) else { return true }
        // Past the limit: read what has arrived (without waiting) before judging.
        guard try waitAndHandleEvents(until: backend.now()) else { return false }
        guard inFlight, count > 0, backend.now() >= completionLimit(ring[head]) else { return true }
        var done = ring[head]
        done.outcome = .unconfirmed
        done.cause = .flipLate
        inFlight = false
        complete(done)
        return true
    }

    /// When the flip in flight is given up: ``completionTimeoutRefreshes`` refreshes after the
    /// later of its due time and its commit.
    func completionLimit(_ r: FrameReport) -> Nanoseconds {
        let due = vrrRange == nil ? time(ofSequence: r.targetSequence) : r.targetTime
        return Swift.max(due, r.commitTime) &+ Nanoseconds(Double(completionTimeoutRefreshes) * refreshInterval)
    }
}
