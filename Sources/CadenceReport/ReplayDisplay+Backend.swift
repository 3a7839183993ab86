import CadenceCore
import Foundation

/// The replay display as a display (`DisplayBackend`): the clock, vblanks, submitted frames
/// completing as they did in the recording, and the events delivered when the run received
/// them. Its stored state and where a replay starts are in Replay.swift; its window on the log
/// in ReplayDisplay+Window.swift.
extension ReplayDisplay {
    public func now() -> Nanoseconds { clock }

    public func lastVBlank() throws -> VBlank {
        try fill(until: clock &+ near)
        var vb = timeline.vblank(atOrBefore: clock)
        // The next vblank, ticked before its flip completed (the fake display without vblank).
        if ticksBeforeFlips, case let t = tickTime(of: vb.sequence &+ 1), t <= clock {
            vb = VBlank(sequence: vb.sequence &+ 1, timestamp: t)
        }
        // The next vblank, when the recorded run already knew of it (before its timestamp).
        if let k = knownEarly[vb.sequence &+ 1], k <= clock {
            vb = VBlank(sequence: vb.sequence &+ 1, timestamp: time(of: vb.sequence &+ 1))
        }
        if vb.sequence < startSequence { return VBlank(sequence: startSequence, timestamp: time(of: startSequence)) }
        return stepsFromReadCompletions ? softwareVBlank(at: clock) : vb
    }

    /// Without a vblank interrupt the recorded run's vblanks were its KMS display's software
    /// grid: the last flip completion it had read (or the vblank it started at), plus whole
    /// nominal intervals. A completion the run had not read yet (its loop held by a late render)
    /// did not move that grid, nor did one whose flip came later than the grid's vblank (a flip
    /// completes its commit latency after the commit): the replay steps from the completions it
    /// has delivered, as the run's display did (bochs at latency 2, frame 3 late by a refresh:
    /// frame 4's callback 427 ns apart; 50 fps content: a callback woken at the flip, 0.7 µs
    /// after the software vblank the run woke at). Before the first, a rotated log's later file
    /// steps from the flip shown before its first frame (``priorFlip``, in the file before) for
    /// times from that flip's on (`at`) and vblanks from its on (`of`).
    func softwareAnchor(at t: Nanoseconds = .min, of s: UInt64 = 0) -> VBlank {
        if let d = lastDeliveredFlip { return d }
        if let p = priorFlip, t >= p.timestamp || s >= p.sequence { return p }
        return VBlank(sequence: startSequence, timestamp: time(of: startSequence))
    }

    /// Vblank `s` on the software grid (``softwareAnchor(at:of:)``); the anchor's own time at or before it.
    func softwareTime(of s: UInt64) -> Nanoseconds {
        ReplayTimeline.time(of: s, steppedFrom: softwareAnchor(of: s), refreshInterval)
    }

    /// The last vblank of the software grid at or before `t`.
    func softwareVBlank(at t: Nanoseconds) -> VBlank {
        let d = softwareAnchor(at: t)
        guard refreshInterval > 0, t > d.timestamp else { return d }
        let at = { (k: UInt64) in ReplayTimeline.time(of: d.sequence &+ k, steppedFrom: d, self.refreshInterval) }
        var k = UInt64((Double(t &- d.timestamp) / refreshInterval).rounded(.down))
        while at(k &+ 1) <= t { k &+= 1 }
        while k > 0 && at(k) > t { k &-= 1 }
        return VBlank(sequence: d.sequence &+ k, timestamp: at(k))
    }

    /// Vblank `s` as the simulator's display without a vblank interrupt ticked it
    /// (``ticksBeforeFlips``): a flip's vblank ticked on the grid stepped from the completion
    /// before, when that was before the flip completed. The fake display at 60 Hz with a 1 ms
    /// commit latency, 48 fps content at latency 2: frame 0, committed at its target vblank's
    /// tick (1,033.333 ms), completed 1 ms later with that vblank's sequence, and the run's
    /// next callback ran at the tick; the replay, which had the vblank at the completion, ran
    /// it 1 ms later and aimed frame 1 1 ms later (on-time error p99 410.0 µs against 1,000).
    func tickTime(of s: UInt64) -> Nanoseconds {
        let t = time(of: s)
        guard ticksBeforeFlips, let g = timeline.stepped(s), g < t else { return t }
        return g
    }

    /// The recorded run finished keeping the frame's pixels (its copy) at `copyEndNs`: so does the replay.
    public func finish(frame: FrameID) throws {
        if let r = try record(frame), r.copyEndNs > clock { clock = r.copyEndNs }
    }

    public func submit(frame: FrameID) throws {
        if pending != nil { throw BackendFailure.busy }
        let recorded = try record(frame)
        if let n = busyLeft[frame], n > 0 {
            busyLeft[frame] = n - 1
            throw BackendFailure.busy
        }
        let next = try lastVBlank().sequence &+ 1
        // The recorded run committed at commitNs (after copying the frame, say): so does the replay.
        if let r = recorded, r.commitNs > clock { clock = r.commitNs }
        var target = VBlank(sequence: next, timestamp: time(of: next))
        var received = target.timestamp
        var deliver = received
        var kind = 0  // 0 presented, 1 discarded, 2 failed, 3 never confirmed
        if let r = recorded {
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
            case .discarded where r.sessionPaused: kind = 3
            case .discarded: kind = 1
            case .failed: kind = 2
            case .unconfirmed: kind = 3
            }
        } else if !(pastTheLogAfter.map { frame > $0 } ?? false) && !inAnotherFile.contains(frame) {
            divergences += 1
        }
        pending = (frame, target, received, kind)
        switch kind {
        case 0:
            enqueue(.presented(frame: frame, vblank: target, receivedAt: received), at: deliver, order: 0)
            holdPauses(behindFlipAt: target.timestamp, readAt: deliver)
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
            let t = stepsFromReadCompletions ? softwareTime(of: s) : tickTime(of: s)
            let wake = loggedDelays ? wakeAtSequence[s] : wakeAt[t]
            // Early when the recorded run knew of it early, late when it woke late.
            var on = wake == nil ? Swift.min(t, knownEarly[s] ?? t) : t
            // Read with the flip completion shown at it, when the run made no callback at it.
            if readsVBlankWithFlip, wake == nil, !callbackPinned.contains(s), let r = flipReceivedAt[s], r > on,
                r &- t < clampedNanoseconds(refreshInterval / 4)
            {
                on = r
            }
            let at = Swift.max(on, wake ?? on, lateVBlankEventAt[s] ?? on)
            enqueue(.vblank(VBlank(sequence: s, timestamp: t)), at: at, order: 1)
        }
    }

    public func waitForEvents(until deadline: Nanoseconds, into events: inout [BackendEvent]) throws {
        try fill(until: clock &+ near)
        // Events already due are delivered even when `deadline` has passed (as a kernel's are).
        if outbox.isEmpty || outbox[0].at > Swift.max(deadline, clock) {
            // A never-confirmed flip stops occupying the display at its vblank.
            if let p = pending, p.kind == 3, p.at.timestamp <= deadline { pending = nil }
            clock = Swift.max(clock, deadline)
            return
        }
        clock = Swift.max(clock, outbox[0].at)
        // A seat session paused at a vblank: the run read the pause with that vblank's event.
        // The timestamp the timeline gives a vblank no frame was shown at (interpolated between
        // shown ones) may be a nanosecond or two before the recorded pause; read apart, the
        // vblank fired a callback the run never made (60 fps content on 120 Hz: its frame was
        // flushed session-paused, where the run's callback came after the resume, render-late).
        if let p = outbox.first(where: { if case .sessionPaused = $0.event { true } else { false } })?.at,
            p > clock && p &- clock <= 2
        {
            clock = p
        }
        try fill(until: clock &+ near)
        var n = 0
        var notYet: [UInt64] = []
        while n < outbox.count && outbox[n].at <= clock {
            var e = outbox[n].event
            if case .sessionResumed(let at, _) = e {
                e = .sessionResumed(at: at, vblank: timeline.vblank(atOrBefore: at))
            }
            // A software vblank is the grid's as of now: a completion delivered since it was
            // requested moved the grid (KMSDisplay looks at its grid after reading its events).
            if stepsFromReadCompletions, case .vblank(let vb) = e {
                let current = softwareVBlank(at: clock)
                if current.sequence < vb.sequence {
                    notYet.append(vb.sequence)
                    n += 1
                    continue
                }
                e = .vblank(current)
            }
            switch e {
            case .presented(let id, let vb, _):
                if pending?.id == id { pending = nil }
                if vb.sequence >= (lastDeliveredFlip?.sequence ?? 0) { lastDeliveredFlip = vb }
            case .discarded(let id):
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
        for s in notYet {
            let t = softwareTime(of: s)
            enqueue(.vblank(VBlank(sequence: s, timestamp: t)), at: t, order: 1)
        }
    }

    /// Nothing to restore: a replay shows nothing.
    public func close() {}

    package func spin(until deadline: Nanoseconds) {
        clock = Swift.max(clock, deadline)
    }

    /// A seat session paused at or after the vblank a flip was shown at is read no earlier than
    /// that flip's completion, received at `read`: KMSDisplay waits for the flip in flight and
    /// reports its completion before the pause, and the fake display queues it first. Replayed
    /// at its own time, a pause before the completion's receipt (the run was drawing until
    /// then) flushed the frame as session-paused that the run showed (latency 2 at 30 Hz, frame
    /// 4 late: discarded 2 vs 1).
    /// A resume due before that receipt is read with it, after the pause: delivered at its own
    /// time it came before the held pause, and the replay stayed paused to its end (30 Hz,
    /// latency 2, frame 3 late by 5, a pause at 1.2 s for 0.1 s during its render: 4 frames
    /// replayed of 60).
    func holdPauses(behindFlipAt flip: Nanoseconds, readAt read: Nanoseconds) {
        var held: [BackendEvent] = []
        var kept: [(at: Nanoseconds, order: Int, event: BackendEvent)] = []
        kept.reserveCapacity(outbox.count)
        for e in outbox {
            switch e.event {
            case .sessionPaused(let at) where at >= flip && e.at < read: held.append(e.event)
            case .sessionResumed where !held.isEmpty && e.at < read: held.append(e.event)
            default: kept.append(e)
            }
        }
        guard !held.isEmpty else { return }
        outbox = kept
        for e in held { enqueue(e, at: read, order: 2) }
    }

    func enqueue(_ e: BackendEvent, at t: Nanoseconds, order: Int) {
        let at = Swift.max(t, clock)
        var i = outbox.count
        while i > 0 && (outbox[i - 1].at > at || (outbox[i - 1].at == at && outbox[i - 1].order > order)) { i -= 1 }
        outbox.insert((at, order, e), at: i)
    }
}
