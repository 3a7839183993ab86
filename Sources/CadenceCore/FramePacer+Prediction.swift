/// Prediction: where the pacer expects vblanks (``FramePacer/time(ofSequence:)``), which vblank a
/// time falls at (``FramePacer/sequence(at:nearest:)``, from the fitted `VBlankGrid`), the
/// refreshes a minimum duration takes, and where a frame presented now is aimed (`plan`).
extension FramePacer {
    /// Whether ``sequence(at:nearest:)`` predicts from the fitted vblank grid (`VBlankGrid`):
    /// fixed refresh with hardware vblank, once the fit is established.
    var usesFittedGrid: Bool { vrrRange == nil && backend.hasHardwareVBlank && grid.isEstablished }

    /// Predicted time of vblank `sequence` from the last known vblank and the nominal refresh:
    /// the frame's target time and deadline. It depends on the last vblank alone, so a log
    /// segment replays to the same numbers without the history before it.
    public func time(ofSequence sequence: UInt64) -> Nanoseconds {
        let d = Int64(bitPattern: sequence &- lastVBlank.sequence)
        return lastVBlank.timestamp &+ clampedNanoseconds((Double(d) * refreshInterval).rounded())
    }

    /// The vblank `present(at: t)` aims at: "not before" (`nearest` false) the first one predicted
    /// at or after `t − ε`; `nearest` the one nearest to `t`, an exact tie going to the later one.
    ///
    /// The vblanks are predicted from the fitted grid of the recent vblank timestamps
    /// (`VBlankGrid`: their own period, their jitter averaged out), so that the vblank a time
    /// falls at is the same at every callback that asks: predicted from the last raw timestamp
    /// and the nominal refresh, a drifting or jittery panel moved a content time due at a vblank
    /// from "not yet" at one callback to "already passed" at the next (24 fps at 200 ppm). A
    /// vblank that has happened is known, not predicted: "not before" a time after the last
    /// vblank's own timestamp (plus ε) is never that vblank or an earlier one. An answer once
    /// given for a time is not revised to an earlier vblank later: at an exact tie a fresh
    /// residual (ε, the fit) can tip the answer, and a callback that was told "not yet" for a
    /// vblank must not find its frame due at that vblank one callback later (already passed).
    public func sequence(at t: Nanoseconds, nearest: Bool = false) -> UInt64 {
        let answer = predictedSequence(at: t, nearest: nearest)
        if let m = lastAnswer, m.time == t, m.nearest == nearest, m.sequence > answer, m.sequence > lastVBlank.sequence
        {
            return m.sequence
        }
        lastAnswer = PacerState.Answer(time: t, nearest: nearest, sequence: answer)
        return answer
    }

    /// The vblank ``sequence(at:nearest:)`` would give a "not before" time `t`, without keeping
    /// the answer: a look ahead (the next content frame's time) must not replace the answer kept
    /// for the frame being decided.
    func peekSequence(at t: Nanoseconds) -> UInt64 {
        let answer = predictedSequence(at: t, nearest: false)
        if let m = lastAnswer, m.time == t, !m.nearest, m.sequence > answer, m.sequence > lastVBlank.sequence {
            return m.sequence
        }
        return answer
    }

    /// The vblank a "not before" frame at `t` presented now would be aimed at (`plan`'s
    /// target: its own vblank, or the one after a tie the frame before took), without keeping
    /// the answer.
    ///
    /// The frame before is the newest queued one, else the last shown one (at latency 1 it has
    /// usually been shown by the next callback: its vblank has passed, and the frame is shown
    /// at the vblank after without being late).
    func notBeforeTarget(_ t: Nanoseconds) -> UInt64 {
        let target = peekSequence(at: t)
        let p: UInt64, before: PresentIntent
        if let q = newestQueued {
            (p, before) = q
        } else if havePresented {
            (p, before) = (lastPresentedSeq, lastShownIntent)
        } else {
            return target
        }
        guard target <= p, case .at(let tp, false) = before else { return target }
        return tookTheLaterOfATie(tp, at: p) && isTiedTo(t, p) ? p &+ 1 : target
    }

    /// Whether content frame "not before" `t`, about to be presented in a callback aimed at
    /// vblank `target`, would be hidden by the next content frame, "not before" `next`: the next
    /// one can be presented now (its vblank at or before `target`) and is due at or before the
    /// vblank this one would be shown at, beyond a tie (``isDue(_:clearlyBy:)``), or this one's
    /// own vblank is unavailable (taken by a frame before it other than across a tie, or passed)
    /// and the next is due at or before the vblank it would take instead. `cause`: nil when
    /// nothing was late (its vblank is still to come, or a frame before it took it: content
    /// ahead of the panel); when its vblank passed with no newer frame shown (the loop was
    /// held up, by a late frame's render or the scheduler), that lateness, as ``lateCause(_:)``
    /// would judge a frame that woke at `wake` after a scheduler delay of `schedulerDelay`.
    func hiddenByNext(
        _ t: Nanoseconds, next: Nanoseconds, target: UInt64, wake: Nanoseconds, schedulerDelay: Nanoseconds
    ) -> (hidden: Bool, cause: DropCause?) {
        let own = notBeforeTarget(t)
        var taken: UInt64 = havePresented ? lastPresentedSeq : 0
        if let q = newestQueued { taken = q.predicted }
        let earliest = Swift.max(taken, lastVBlank.sequence) &+ 1
        let shownAt = Swift.max(own, earliest)
        let nextAt = peekSequence(at: next)
        guard nextAt <= target else { return (false, nil) }
        guard isDue(next, clearlyBy: shownAt) || (own < earliest && nextAt <= shownAt) else { return (false, nil) }
        guard own <= lastVBlank.sequence && own > taken else { return (true, nil) }
        let deadline = time(ofSequence: own) &- commitMargin
        let heldUp = schedulerDelay > 0 && wake &- schedulerDelay <= deadline
        return (true, heldUp ? .schedulerLate : .renderLate)
    }

    /// Whether a "not before" time `t` falls at or before vblank `sequence` beyond any tie: at
    /// least ``tieMargin`` before that vblank's predicted time, so that neither the tolerance,
    /// nor an answer kept from a smaller one, nor the taken-tie rule could put it at the vblank
    /// after.
    func isDue(_ t: Nanoseconds, clearlyBy sequence: UInt64) -> Bool {
        Double(t &+ tieMargin) <= tieTime(ofSequence: sequence)
    }

    /// How far before a predicted vblank a "not before" time may be and still be shown there:
    /// ε, or while ε is not settled (fewer than ``TimestampUncertainty/settledObservations``
    /// residuals) four times the jitter measured so far, within half ε's cap (0.5% of a
    /// refresh): those answers come from one raw timestamp and the nominal refresh, off by the
    /// timestamp's jitter and the drift since it, and the contract's tolerance (the jitter
    /// plus ε's cap) must still hold (with the whole cap, 29.97 fps on a 60 Hz panel 500 ppm
    /// fast with 22 µs of jitter had its frame 2 shown 105 µs before its time).
    /// The first answers are predicted from one raw timestamp, off by its own jitter, and a
    /// residual is the difference of two timestamps' errors, often far smaller than either;
    /// and an answer once given is kept (``sequence(at:nearest:)``). 60 fps content on a 60 Hz
    /// panel with 3 µs of jitter had its frame 1 (due 1.2 µs before its vblank) predicted
    /// 0.3 ns after it with ε at 1.0 µs, and every later frame was shown a vblank after its own.
    /// Half the cap holds for as long as the answers come from one raw timestamp, that is until
    /// the fitted grid is established, not only while ε settles: a settled ε can reach the whole
    /// cap before the fit spans its 16 refreshes (90 fps content on a 120 Hz panel 500 ppm fast
    /// with 28 µs of jitter had its frame 12 shown 70.8 µs before its time, its vblank predicted
    /// 31.2 µs late: the last timestamp's jitter plus a refresh of drift).
    var tieTolerance: Nanoseconds {
        let e = timestampUncertainty
        guard vrrRange == nil, backend.hasHardwareVBlank else { return e }
        let cap = TimestampUncertainty.cap(refreshInterval: refreshInterval)
        let settling = uncertainty.observations < TimestampUncertainty.settledObservations
        let tolerance = settling ? Swift.max(e, Swift.min(uncertainty.measuredJitter &* 4, cap / 2)) : e
        return usesFittedGrid ? tolerance : Swift.min(tolerance, cap / 2)
    }

    /// How far before a vblank a "not before" time may be and still count as tied to it once a
    /// frame before took the vblank before across a tie (``isDue(_:clearlyBy:)``, the taken-tie
    /// rule of `plan`): ε's cap (0.5% of a refresh), at least the tie tolerance. The tie
    /// tolerance is measured and moves, and the vblank a time is compared with is predicted
    /// (under jitter, off by up to the jitter): at a tie tolerance, content at the refresh rate
    /// whose first tie went to the later vblank left its chain of ties, frame by frame a vblank
    /// late, at the first frame whose time the noise put a few µs more than the tolerance before
    /// its vblank, and that frame and the one before were due at one vblank (one discarded). The
    /// contract's tolerance (the jitter plus ε's cap) allows the later vblank up to there.
    var tieMargin: Nanoseconds {
        Swift.max(tieTolerance, TimestampUncertainty.cap(refreshInterval: refreshInterval))
    }

    /// Where ``sequence(at:nearest:)`` puts vblank `sequence`: on the fitted grid once it is
    /// established, else from the last vblank and the nominal refresh.
    func tieTime(ofSequence sequence: UInt64) -> Double {
        let (anchor, period) = predictionAnchor()
        return Double(anchor) + Double(Int64(bitPattern: sequence &- lastVBlank.sequence)) * period
    }

    /// Whether a "not before" frame at `t` follows the newest queued frame, aimed at vblank `p`,
    /// across a tie that frame took: its own time was within the tie tolerance of vblank p − 1
    /// and `t` is within ``tieMargin`` of vblank p, or after it.
    func followsATakenTie(_ t: Nanoseconds, predecessorAt p: UInt64) -> Bool {
        guard p > 0, let q = newestQueued else { return false }
        guard case .at(let tp, false) = q.intent else { return false }
        return tookTheLaterOfATie(tp, at: p) && isTiedTo(t, p)
    }

    /// Whether a "not before" frame at `tp` aimed at vblank `p` took the later vblank of a tie:
    /// its time was within the tie tolerance of vblank p − 1.
    private func tookTheLaterOfATie(_ tp: Nanoseconds, at p: UInt64) -> Bool {
        p > 0 && Double(tp &- tieTolerance) <= tieTime(ofSequence: p &- 1)
    }

    /// Whether a "not before" time `t` is within ``tieMargin`` of vblank `p`, or after it.
    private func isTiedTo(_ t: Nanoseconds, _ p: UInt64) -> Bool {
        tieTime(ofSequence: p) <= Double(t &+ tieMargin)
    }

    /// The vblank and period ``sequence(at:nearest:)`` predicts from: the fitted grid's once it
    /// is established, else the last vblank's and the nominal refresh.
    private func predictionAnchor() -> (Nanoseconds, Double) {
        if usesFittedGrid, let a = grid.time(of: lastVBlank.sequence) { return (a, grid.period) }
        return (time(ofSequence: lastVBlank.sequence), refreshInterval)
    }

    private func predictedSequence(at t: Nanoseconds, nearest: Bool) -> UInt64 {
        let (anchor, period) = predictionAnchor()
        let tolerance = nearest ? 0 : tieTolerance
        let steps: Double
        if nearest {
            steps = (Double(t &- anchor) / period + 0.5).rounded(.down)
        } else {
            steps = (Double(t &- tolerance &- anchor) / period).rounded(.up)
        }
        var s = Int64(bitPattern: lastVBlank.sequence) &+ Int64(steps)
        if !nearest && t &- tolerance > lastVBlank.timestamp {
            s = Swift.max(s, Int64(bitPattern: lastVBlank.sequence &+ 1))
        }
        return UInt64(Swift.max(0, s))
    }

    /// Fixed refresh: how many refreshes after the previous shown frame a frame presented with
    /// `present(afterMinimumDuration: d)` is shown (the smallest n ≥ 1 with n·refresh ≥ d − ε).
    public func minimumDurationRefreshes(_ d: Nanoseconds) -> UInt64 {
        TimestampUncertainty.refreshes(
            forMinimumDuration: d, refreshInterval: refreshInterval, epsilon: timestampUncertainty)
    }

    /// Learns a vblank newer than (or a second timestamp of) ``lastVBlank``: its residual against
    /// the nominal grid feeds ε. One not from a flip completion (`flip`) is kept for the next
    /// completed frame's report (``FrameReport/vblanks``), a log's record of it.
    func observe(_ vb: VBlank, flip: Bool = false) {
        guard vrrRange == nil, backend.hasHardwareVBlank, vb.sequence >= lastVBlank.sequence else { return }
        if !flip && vb != lastVBlank && learnedVBlanks.count < 256 { learnedVBlanks.append(vb) }
        guard gridAnchored else {
            gridAnchored = vb.sequence > lastVBlank.sequence
            return
        }
        let step = vb.sequence &- lastVBlank.sequence
        if step == 0 && vb.timestamp == lastVBlank.timestamp { return }
        if step <= TimestampUncertainty.maxStep { uncertainty.record(vb.timestamp &- time(ofSequence: vb.sequence)) }
        grid.add(sequence: vb.sequence, timestamp: vb.timestamp)
    }

    /// Where a frame presented now with `intent` from a callback with `update` is aimed: its
    /// target vblank (fixed refresh; the callback's under VRR) and time, its deadline, and the
    /// sequence (fixed) or time bit pattern (VRR) it is predicted to latch at.
    ///
    /// The deadline is the frame's *own*: its target minus the commit margin, never earlier than
    /// the callback's (a frame whose minimum duration or `present(at:)` time puts it after the
    /// callback's target has until then; lateness and its cause are judged from it).
    func plan(
        intent: PresentIntent, update: DisplayLinkUpdate.Timing?
    ) -> (targetSequence: UInt64, targetTime: Nanoseconds, deadline: Nanoseconds, predicted: UInt64) {
        let prev = newestQueued?.predicted
        if vrrRange != nil {
            // Times stored as UInt64 bit patterns of Nanoseconds.
            let nowT = backend.now()
            let prevT =
                prev.map { Nanoseconds(bitPattern: $0) } ?? (havePresented ? lastPresentedTime : lastVBlank.timestamp)
            let minGap = Nanoseconds(refreshInterval.rounded())
            let earliest = Swift.max(nowT, prevT &+ minGap)
            var target: Nanoseconds
            switch intent {
            case .nextOpportunity: target = update?.targetPresentationTimestamp ?? earliest
            case .at(let t, _): target = t
            case .afterMinimumDuration(let d):
                target = Swift.max(update?.targetPresentationTimestamp ?? earliest, prevT &+ d &- timestampUncertainty)
            }
            let own = target &- commitMargin
            return (
                update?.targetSequence ?? 0, target, update.map { Swift.max($0.deadline, own) } ?? own,
                UInt64(bitPattern: Swift.max(target, earliest))
            )
        }
        let prevSeq = prev ?? (havePresented ? Swift.max(lastPresentedSeq, lastVBlank.sequence) : lastVBlank.sequence)
        let earliest = Swift.max(lastVBlank.sequence &+ 1, prevSeq &+ 1)
        var target: UInt64
        switch intent {
        case .nextOpportunity: target = update?.targetSequence ?? earliest
        case .at(let t, let nearest):
            target = sequence(at: t, nearest: nearest)
            // A tie the frame before already took: when it was aimed a vblank later than its
            // own time needed (its time within the tie tolerance of the vblank before) and this
            // frame's time is within it of that vblank or after it, this frame is shown at the
            // vblank after, not aimed at the taken one (reported late by 1, or hiding the frame
            // before). The tolerance is measured and grows with the jitter it sees, so two
            // callbacks can resolve neighbouring ties differently. Frames due at one vblank
            // otherwise (the same time, a content rate above the panel's real rate by more than
            // the tolerance) still leave only the newest visible: a drifting panel catches up.
            if !nearest, let p = prev, target <= p, followsATakenTie(t, predecessorAt: p) { target = p &+ 1 }
        case .afterMinimumDuration(let d):
            target = Swift.max(update?.targetSequence ?? earliest, prevSeq &+ minimumDurationRefreshes(d))
        }
        let time = time(ofSequence: target)
        let own = time &- commitMargin
        return (target, time, update.map { Swift.max($0.deadline, own) } ?? own, Swift.max(target, earliest))
    }

    /// The deadline of a frame about to be drawn in the callback `update` and presented with
    /// `intent` (`plan(intent:update:)`): scripted lateness is measured from it.
    func deadline(of intent: PresentIntent, update: DisplayLinkUpdate.Timing) -> Nanoseconds {
        plan(intent: intent, update: update).deadline
    }
}
