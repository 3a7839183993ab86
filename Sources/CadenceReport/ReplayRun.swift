import CadenceCore
import Foundation

/// The outcome of replaying a log.
public struct ReplayResult: Sendable {
    /// The summary the pacer computed on the replayed timestamps (backend "replay").
    public var replayed: RunSummary
    /// The recorded summary: the log's end line, or (for a log without one) the accounting of
    /// its frame records.
    public var recorded: RunSummary
    /// Summary fields that differ (empty when the replay reproduces the recording).
    public var differences: [String]
    /// Frames whose replay could not follow the recording (see ``ReplayDisplay``).
    public var divergences: Int
    /// The replayed frames as log records.
    public var records: [FrameRecord]
    /// The replayed `--adapt` rate switches.
    public var rateSwitches: [RateSwitch] = []
    /// One line on what was replayed when it is not a whole run (a file of a rotated log).
    public var note: String? = nil
}

/// Re-runs the pacing core on a recorded run's kernel timestamps.
public enum Replay {
    /// Replays `log`: the run's configuration (from the header) drives a `PacingRun` on a
    /// ``ReplayDisplay``; each frame's rendering ends when it ended in the recording.
    public static func run(_ log: RunLog) throws -> ReplayResult {
        try run(log, adjust: { _ in })
    }

    /// Replays `log` with its configuration changed by `adjust` (a later file of a rotated
    /// log: the content clock it picks up).
    static func run(_ log: RunLog, adjust: (inout RunConfiguration) -> Void) throws -> ReplayResult {
        guard log.header != nil else {
            throw ReplayDisplay.Unreplayable(description: "the log has no run header (written by an older or foreign tool); it can be reported but not replayed")
        }
        if let c = log.continuation { return try ReplaySegment.run(log, continuation: c) }
        try ReplayLimits.check(log)
        // Where the run started between two vblanks is not logged: try both starts, the likelier
        // first, and keep the one whose first frame is the recorded one (else the closer result).
        guard let first = log.records.min(by: { $0.id < $1.id }) else { throw ReplayDisplay.Unreplayable(description: "no frames") }
        let woke = first.wakeNs &- first.callbackNs > clampedNanoseconds(LogAnalysis.refreshIntervalNs(log) / 8)
        var best: ReplayResult? = nil
        for between in [woke, !woke] {
            let r = try run(log, startBetweenVBlanks: between, adjust: adjust)
            let replayedFirst = r.records.min { $0.id < $1.id }
            if replayedFirst?.intent.targetSequence == first.intent.targetSequence && replayedFirst?.callbackNs == first.callbackNs {
                best = r
                break
            }
            if best == nil || r.differences.count < best!.differences.count { best = r }
        }
        if log.rotated != nil { best!.note = log.segmentDescription }
        if let v = log.header?.version, v < RunLogHeader.currentVersion {
            let rules = "(VRR lateness in time, the late-commit cause), so its VRR and late-commit verdicts may differ"
            let old = "log version \(v): judged by version \(RunLogHeader.currentVersion)'s rules \(rules)"
            best!.note = best!.note.map { $0 + "; " + old } ?? old
        }
        return best!
    }

    static func run(_ log: RunLog, startBetweenVBlanks: Bool, adjust: (inout RunConfiguration) -> Void = { _ in },
                    refreshesEarlier: UInt64 = 0) throws -> ReplayResult {
        let header = log.header!
        let display = try ReplayDisplay(log: log, startBetweenVBlanks: startBetweenVBlanks, refreshesEarlier: refreshesEarlier)
        var config = header.configuration
        adjust(&config)
        // Never longer than the recording plus a second: a log the pacer cannot follow ends as
        // a replay that differs, not as one that runs forever.
        let lastEvent = log.records.map { Swift.max($0.wakeNs, $0.renderEndNs, $0.commitNs, $0.flipNs, $0.receivedNs) }.max() ?? 0
        config.duration = Swift.max(0, lastEvent &- display.now()) &+ 1_000_000_000
        // Rendering ends when it ended in the recording (below): a scripted cost is in that already.
        config.renderCost = []
        let maxFrame = log.records.map(\.frame).max() ?? 0
        // A file the run continued in the next one (``RunLog/rotated``, or a later file's
        // replay through ``ReplaySegment``): the frame after its last is made too, as in the
        // run (a late render there holds up the receipt of the file's last completion: frame
        // 17, followed by a frame 4 refreshes late, replayed flip-late), and not compared.
        let continues = log.rotated != nil && (header.frames ?? Int.max) > maxFrame + 1
        config.frames = maxFrame + (continues ? 2 : 1)
        if continues { display.pastTheLogAfter = log.records.map(\.id).max() }
        // Rendering ends when it ended in the recording (at once when the replay is already past
        // that). Frames with injected lateness are replayed as they were made: drawing (as long
        // as a typical frame's) and then the injected overrun, which looks at the display again.
        let injected = config.injectLate
        var renderEnd: [Int: Nanoseconds] = [:]
        var durations: [Double] = []
        for r in log.records where r.renderEndNs > 0 {
            renderEnd[r.frame] = r.renderEndNs
            if injected[r.frame] == nil { durations.append(Double(r.renderEndNs - r.renderStartNs)) }
        }
        let typical = clampedNanoseconds(SummaryStatistics(durations).p50)
        let run = try PacingRun(backend: display, configuration: config)
        var records: [FrameRecord] = []
        records.reserveCapacity(log.records.count)
        run.onFrame = { records.append(FrameRecord($0)) }
        run.renderer = { [unowned run] _, ctx in
            let now = run.backend.now()
            if injected[ctx.frameIndex] != nil {
                if typical > 0 { try? run.pacer.renderWork(until: Swift.min(now &+ typical, ctx.deadline)) }
            } else if let end = renderEnd[ctx.frameIndex], end > now {
                try? run.pacer.renderWork(until: end)
            }
        }
        // The loop turns up to 2.5 times per frame (measured on the replay tests) and once per 4
        // refreshes of idle time; a replay display that cannot follow a corrupt log can livelock
        // in virtual time. Bound the turns (3× that), and say so.
        let refreshes = Double(config.duration!) / display.refreshInterval
        let maxTurns = 8 * (log.records.count + 16) + Int(Swift.min(refreshes, 1e9)) / 2
        run.maxLoopTurns = maxTurns
        var replayed = try run.run()
        if continues {
            let own = records.filter { $0.frame <= maxFrame }
            replayed = LogAnalysis.summary(of: RunLog(header: header, records: own, end: nil))
            records = own
        }
        let recorded = log.end?.summary ?? LogAnalysis.summary(of: log)
        if recorded.end == .stopped && replayed.end == .completed { replayed.end = .stopped }
        var differences = LogAnalysis.replayDifferences(replayed, recorded)
        if run.stalled {
            differences.insert("the replay stalled after \(records.count) of \(log.records.count) frames (the replay display cannot follow this log)", at: 0)
        }
        // `--adapt`: the same switches at the same frames.
        let switches = { (l: [RateSwitch]) in l.map { "\($0.frame):\(RateSwitch.format($0.toHz))" }.joined(separator: ",") }
        if header.adapt == true && switches(run.rateSwitches) != switches(log.rateSwitches) {
            differences.append("rate switches: \(switches(run.rateSwitches)) vs \(switches(log.rateSwitches))")
        }
        return ReplayResult(replayed: replayed, recorded: recorded, differences: differences,
                            divergences: display.divergences, records: records, rateSwitches: run.rateSwitches)
    }
}
