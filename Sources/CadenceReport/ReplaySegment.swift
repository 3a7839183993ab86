import CadenceCore
import Foundation

/// Replay of a later file of a rotated run log (one with a ``LogContinuation``).
///
/// The file starts in the middle of a run, and a `PacingRun` cannot be started in the middle:
/// the replay starts a fresh run at the first frame the continuation line carries from the
/// file before (frames and ids renumbered from 0, `--inject-late` shifted with them), so that
/// those frames, played again and not compared, rebuild what the pacer held at the cut — the
/// frames in flight, the display link's phase, the previous shown frame that the first frame's
/// interval, dropped refreshes and hitch count from, the previous presentation
/// `--min-duration` counts from; `--content-rate`'s content clock is picked up from the first
/// carried frame's requested time. Then every frame of this file is compared, frame by frame
/// (vblank, kernel timestamp, outcome, dropped refreshes) and as a summary.
///
/// A display link held back by a late frame at latency ≥ 2 is rebuilt by starting the replay
/// earlier (see ``heldBack(_:header:)``; under VRR the replay display starts the link where it
/// aims the first carried frame at its recorded target, less than the link's lead before the
/// frame's callback). The pacer's prediction state (its fitted vblank grid
/// and ε's window of residuals, fitted from every vblank of the run) is restored from the
/// continuation line when the callback of the first carried frame begins (``LogContinuation/pacer``);
/// a log written before it was kept refits them from the carried frames, and a file of a jittery
/// display may then replay other tie decisions. The run's status clock (its loop's once-a-second
/// wake) starts where the run's stood (``LogContinuation/statusNs``). Some state is not rebuilt, and a replay of a
/// file of such a run may differ (its note names which): `--adapt`'s rate and window (a fresh
/// run starts at the preferred rate).
enum ReplaySegment {
    static func run(_ log: RunLog, continuation c: LogContinuation, forceWhole: Bool = false) throws -> ReplayResult {
        guard var header = log.header, let firstOwn = log.records.min(by: { $0.frame < $1.frame }) else {
            throw ReplayDisplay.Unreplayable(description: "the log has no run header or no frames")
        }
        // Carried: the frames the file before logged, also those after this file's first (a run
        // that completed frames out of order across the cut: a stall's discarded frames logged
        // before the late frame before them).
        let ownFrames = Set(log.records.map(\.frame))
        let carried = c.carried.filter { !ownFrames.contains($0.frame) }
        // The lowest carried frame: a frame discarded behind a late one is logged before it (75
        // fps on bochs, frame 3 late by 2 refreshes: frame 4 carried first, and frame 3 was
        // renumbered −1, which the replay refused).
        let start = carried.min(by: { $0.frame < $1.frame }) ?? firstOwn
        let base = start.frame
        let idShift = start.id &- 1
        var inj: [String: Int] = [:]
        for (k, v) in header.injectLate { if let f = Int(k), f >= base { inj[String(f - base)] = v } }
        header.injectLate = inj
        header.renderCost = header.renderCost.map {
            $0.compactMap { rc -> RenderCost? in
                if let l = rc.last, l < base { return nil }
                return RenderCost(
                    first: Swift.max(0, rc.first - base), last: rc.last.map { $0 - base }, costNs: rc.costNs)
            }
        }
        header.frames = header.frames.map { Swift.max(1, $0 - base) }
        var records = carried + log.records
        for i in records.indices {
            records[i].frame -= base
            records[i].id &-= idShift
        }
        // The vblanks frames before the carried ones were shown at after the replay's first
        // callback: the replay display has them with the first carried frame's, as the run's
        // pacer learned them (from those frames' flips), not interpolated.
        if let v = c.vblanks, !v.isEmpty, let i = records.firstIndex(where: { $0.id == start.id &- idShift }) {
            records[i].vblanks = (records[i].vblanks ?? []) + v
        }
        var fresh = RunLog(header: header, records: records, end: nil)
        fresh.rotated = log.rotated
        // Seat-session gaps: this file's, and those among the carried frames (repeated after
        // the continuation line).
        fresh.sessions = log.sessions
        fresh.rateSwitches = log.rateSwitches.compactMap { s in
            guard s.afterFrame >= base else { return nil }
            var t = s
            t.frame -= base
            t.afterFrame -= base
            return t
        }
        // --content-rate: content frame n was due at t0 + n/rate; the fresh run picks the clock
        // up at the first carried frame (t0 from its requested time, exactly as the run computed it).
        var clock: ContentClock? = nil
        if let rate = header.contentRateHz, start.intent.kind == .at || start.intent.kind == .atNearest,
            let requested = start.intent.requestedTimeNs, Double(base) * 1e9 / rate < Double(ReplayLimits.maxTime)
        {
            clock = ContentClock(
                start: requested &- clampedNanoseconds((Double(base) * 1e9 / rate).rounded()), firstFrame: base)
        }
        // The pacer's prediction state at the callback of the lowest carried frame (written at
        // the cut): restored when the replay's callback at that vblank begins, so that its vblank
        // grid and ε are the run's, fitted from every vblank before, not from the carried frames'.
        let restore = c.pacer
        // And where the run's status clock stood then: with nothing to read (a stalled process)
        // its loop woke at the status (75 Hz, latency 1, a 27 ms stall: the run woke at 2.0000 s,
        // learned of a vblank and committed a frame at its deadline, flip-late; the replay of the
        // file, its status clock started at 1.64 s, waited for the held-back vblank event and
        // committed 0.33 ms after the deadline, scheduler-late).
        let status = c.statusNs
        let adjust: (inout RunConfiguration) -> Void = {
            $0.contentClock = clock
            $0.restoredPacerState = restore
            $0.restoredStatusTime = status
        }
        let held = heldBack(start, header: header)
        let later = held == 0 ? startsLater(start, header: header) : 0
        var result: ReplayResult
        if held > 0 || later > 0 {
            // The link was held back: a fresh link started `held` vblanks before the recorded
            // callback aims its first frame at the recorded target, and the pipeline, as it
            // fills, holds it back the same way. Or a minimum duration put the first frame
            // further ahead: a fresh link started `later` vblanks after the callback aims there.
            try ReplayLimits.check(fresh)
            result = try Replay.once(
                Replay.source(fresh, forceWhole: forceWhole), startBetweenVBlanks: false,
                adjust: adjust, refreshesEarlier: held, refreshesLater: later, keep: true,
                out: nil
            ).0
        } else {
            result = try Replay.run(fresh, forceWhole: forceWhole, adjust: adjust)
        }
        // Back to the run's numbering (for --log-out), this file's frames only.
        result.records = result.records.compactMap { r in
            var t = r
            t.frame += base
            t.id &+= idShift
            return ownFrames.contains(t.frame) ? t : nil
        }
        let own = { (rs: [FrameRecord]) in RunLog(header: log.header, records: rs, end: nil) }
        // A stall's line stays (the first difference); the summary fields are compared below.
        var differences = result.stalled ? Array(result.differences.prefix(1)) : []
        let replayedByFrame = Dictionary(result.records.map { ($0.frame, $0) }, uniquingKeysWith: { a, _ in a })
        let differing = log.records.filter { r in
            guard let p = replayedByFrame[r.frame] else { return true }
            return p.sequence != r.sequence || p.flipNs != r.flipNs || p.outcome != r.outcome
                || p.droppedRefreshes != r.droppedRefreshes
        }
        if let f = differing.first {
            differences.append("\(differing.count) of \(log.records.count) frames differ (the first: frame \(f.frame))")
        }
        result.recorded = LogAnalysis.summary(of: own(log.records))
        result.replayed = LogAnalysis.summary(of: own(result.records))
        differences += LogAnalysis.replayDifferences(result.replayed, result.recorded)
        result.differences = differences
        var stateful: [String] = []
        if header.contentRateHz != nil && clock == nil { stateful.append("--content-rate") }
        if header.adapt == true { stateful.append("--adapt") }
        var how = ""
        if held > 0 {
            how =
                "; its display link was held back \(held) refresh\(held == 1 ? "" : "es") by an earlier late frame, so the replay starts that much earlier"
        } else if later > 0 {
            how =
                "; a minimum duration put its first frame \(later) refresh\(later == 1 ? "" : "es") further ahead than a fresh display link aims, so the replay starts that much later"
        }
        let last = log.records.map(\.frame).max() ?? firstOwn.frame
        var note =
            "segment \(c.segment) of a rotated log (frames \(firstOwn.frame)–\(last)): replayed from frame \(base), "
            + "the \(carried.count) frames before it carried from the previous file to rebuild the pacer's state at the cut"
            + how
        if !stateful.isEmpty {
            note +=
                "; with \(stateful.joined(separator: " and ")) that state is not all in the log, so frames may differ"
        }
        result.note = note
        return result
    }

    /// How many refreshes later than `r`'s callback a fresh link must start for its first frame
    /// to be aimed at `r`'s target (0: none), when `r` was presented after a minimum duration
    /// and aimed further ahead than a fresh link's first frame: its predecessor (not carried)
    /// pushed it. At 120 Hz, latency 3, two-refresh frames run 4 refreshes ahead of their
    /// callbacks, and a fresh link aims its first frame 3 ahead (the later of its latency and the
    /// minimum duration after the vblank it starts at); started at the callback, the replay's
    /// link called back a refresh early from then on, and a seat-session pause then came after
    /// a callback the run made after the resume.
    static func startsLater(_ r: FrameRecord, header: RunLogHeader) -> UInt64 {
        guard header.vrrRangeHz == nil, r.intent.kind == .afterMinimumDuration,
            let d = r.intent.minDurationNs ?? header.minDurationNs, r.latency >= 1, r.callbackNs > 0,
            r.intent.targetTimeNs > r.callbackNs, r.effectiveRateHz > 0, header.refreshIntervalNs > 0
        else { return 0 }
        let refreshes = (Double(r.intent.targetTimeNs &- r.callbackNs) / header.refreshIntervalNs).rounded()
        let perFrame = Swift.max(1, (header.refreshHz / r.effectiveRateHz).rounded())
        let minimum = TimestampUncertainty.refreshes(
            forMinimumDuration: d, refreshInterval: header.refreshIntervalNs, epsilon: TimestampUncertainty.resolution)
        let fresh = Swift.max(Double(r.latency) * perFrame, Double(minimum))
        return refreshes > fresh && refreshes - fresh < 64 ? UInt64(refreshes - fresh) : 0
    }

    /// How many refreshes fewer than its latency `r`'s callback fired before its target (0: none).
    /// After a frame that missed at latency ≥ 2, the link's back-pressure holds its callbacks
    /// back, and they stay in that phase; a fresh `PacingRun` starts a link `latency` frames
    /// ahead, so a replay started this many vblanks before the recorded callback aims its first
    /// frame at the recorded target.
    static func heldBack(_ r: FrameRecord, header: RunLogHeader) -> UInt64 {
        guard header.vrrRangeHz == nil, r.latency >= 2, r.callbackNs > 0, r.intent.targetTimeNs > r.callbackNs,
            r.effectiveRateHz > 0
        else { return 0 }
        let refreshes = (Double(r.intent.targetTimeNs &- r.callbackNs) / header.refreshIntervalNs).rounded()
        let perFrame = Swift.max(1, (header.refreshHz / r.effectiveRateHz).rounded())
        let ahead = Double(r.latency) * perFrame
        return refreshes < ahead && refreshes >= 0 ? UInt64(ahead - refreshes) : 0
    }
}
