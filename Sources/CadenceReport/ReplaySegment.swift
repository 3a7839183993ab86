import CadenceCore
import Foundation

/// Replay of a later file of a rotated run log (one with a ``LogContinuation``).
///
/// The file starts in the middle of a run, and the pacing core's state at that point is not in
/// the log: the frames in flight and the display link's phase, the ε window (the last 64 vblank
/// residuals), the previous shown frame that the first frame's interval, dropped refreshes and
/// hitch count from, the content clock of `--content-rate` (its t0 and frame number), the
/// previous presentation `--min-duration` counts from, and `--adapt`'s rate and window. A
/// `PacingRun` cannot be started in that state, so the replay starts the file as a fresh run
/// at its first frame (frames and ids renumbered from 0, `--inject-late` shifted with them) and
/// compares the accounting of the frames after the first `latency + 1`, which hold the state
/// that crossed the cut. With `--content-rate`, `--min-duration` or `--adapt` the later frames
/// depend on that state too and may differ; the note says so.
enum ReplaySegment {
    static func run(_ log: RunLog, continuation c: LogContinuation) throws -> ReplayResult {
        guard var header = log.header, let first = log.records.min(by: { $0.frame < $1.frame }) else {
            throw ReplayDisplay.Unreplayable(description: "the log has no run header or no frames")
        }
        let base = first.frame
        let idShift = first.id &- 1
        var inj: [String: Int] = [:]
        for (k, v) in header.injectLate { if let f = Int(k), f >= base { inj[String(f - base)] = v } }
        header.injectLate = inj
        header.renderCost = header.renderCost.map {
            $0.compactMap { rc -> RenderCost? in
                if let l = rc.last, l < base { return nil }
                return RenderCost(first: Swift.max(0, rc.first - base), last: rc.last.map { $0 - base }, costNs: rc.costNs)
            }
        }
        header.frames = header.frames.map { Swift.max(1, $0 - base) }
        var records = log.records
        for i in records.indices {
            records[i].frame -= base
            records[i].id &-= idShift
        }
        var fresh = RunLog(header: header, records: records, end: nil)
        fresh.rateSwitches = log.rateSwitches.compactMap { s in
            guard s.afterFrame >= base else { return nil }
            var t = s
            t.frame -= base
            t.afterFrame -= base
            return t
        }
        var result = try Replay.run(fresh)
        // Back to the run's numbering (for --log-out).
        for i in result.records.indices {
            result.records[i].frame += base
            result.records[i].id &+= idShift
        }
        let skip = header.latency + 1
        let compared = { (rs: [FrameRecord]) in RunLog(header: header, records: rs.filter { $0.frame >= base + skip }, end: nil) }
        let recorded = compared(log.records), replayed = compared(result.records)
        var differences = result.differences.filter { $0.hasPrefix("the replay stalled") }
        if recorded.records.isEmpty {
            differences.append("the segment has only \(log.records.count) frames, all of them before the compared ones")
        } else {
            differences += LogAnalysis.differences(LogAnalysis.summary(of: replayed), LogAnalysis.summary(of: recorded))
        }
        result.recorded = LogAnalysis.summary(of: recorded)
        result.replayed = LogAnalysis.summary(of: replayed)
        result.differences = differences
        var stateful: [String] = []
        if header.contentRateHz != nil { stateful.append("--content-rate") }
        if header.minDurationNs != nil { stateful.append("--min-duration") }
        if header.adapt == true { stateful.append("--adapt") }
        let last = log.records.map(\.frame).max() ?? base
        var note = "segment \(c.segment) of a rotated log (frames \(base)–\(last)): replayed as a fresh run from frame \(base), "
            + "since the pacer's state at the cut is not in the log; frames \(base)–\(base + skip - 1) are not compared"
        if !stateful.isEmpty {
            note += ", and with \(stateful.joined(separator: ", ")) later frames may differ too"
        }
        result.note = note
        return result
    }
}
