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
    /// The replayed frames as log records (empty for a replay of a file, ``Replay/run(path:allowPartialLastLine:replayedFrames:)``,
    /// which hands them on instead).
    public var records: [FrameRecord]
    /// The replayed `--adapt` rate switches.
    public var rateSwitches: [RateSwitch] = []
    /// One line on what was replayed when it is not a whole run (a file of a rotated log).
    public var note: String? = nil
    /// The log replayed: its header, end line, rate switches and sessions (its ``RunLog/records``
    /// empty in a replay of a file), and ``RunLog/frameCount``.
    public var log: RunLog? = nil
    /// The most records the replay display held at once (the whole log when it read every record first).
    var window = 0
    /// The replay stalled: the replay display could not follow the log (the first of
    /// ``differences`` says after how many frames).
    public var stalled = false
}

/// Re-runs the pacing core on a recorded run's kernel timestamps.
public enum Replay {
    /// Replays `log`: the run's configuration (from the header) drives a `PacingRun` on a
    /// ``ReplayDisplay``; each frame's rendering ends when it ended in the recording.
    public static func run(_ log: RunLog) throws -> ReplayResult {
        try run(log, adjust: { _ in })
    }

    /// Replays the log at `path` (plain or zstd-compressed) reading it record by record, in
    /// memory that does not grow with the log: one pass over it gathers what the replay needs
    /// of the whole run (counts, extremes, the recorded summary, and every check of
    /// ``RunLog/read(path:allowPartialLastLine:)``, with the same one-line errors), and the
    /// replay then reads it again as the replayed run reaches each record (a window of the
    /// records near the replay's clock). The replayed frames go to `replayedFrames`, in
    /// completion order; when the replay has to start again (the run's start between two
    /// vblanks is tried both ways), `replayedFrames`' `restart` is called first, and the frames
    /// come again. The result's ``ReplayResult/records`` are empty.
    ///
    /// A log not in the order a run writes it (edited, fuzzed), one that may be outside
    /// ``ReplayDisplay/Unreplayable``'s limits, and a later file of a rotated log are read
    /// whole and replayed as by ``run(_:)``.
    public static func run(
        path: String, allowPartialLastLine: Bool = false, replayedFrames: ReplayedFrames? = nil
    ) throws -> ReplayResult {
        let cursor = try RunLogCursor(path: path, allowPartialLastLine: allowPartialLastLine, keepsContext: false)
        var survey: ReplaySurvey? = nil
        while let r = try cursor.next() {
            if survey == nil {
                let h = cursor.log.header
                survey = ReplaySurvey(
                    header: h, refreshInterval: h?.refreshIntervalNs ?? 0,
                    injectLate: h?.configuration.injectLate ?? [:])
            }
            survey!.add(r)
        }
        let log = cursor.log
        func whole() throws -> ReplayResult {
            var full = try RunLog.read(path: path, allowPartialLastLine: allowPartialLastLine)
            var result = try run(full, adjust: { _ in })
            if let out = replayedFrames {
                try out.restart()
                for r in result.records { try out.frame(r) }
            }
            result.records = []
            full.records = []
            full.frameCount = log.frameCount
            full.frameSpan = log.frameSpan
            result.log = full
            return result
        }
        guard let h = log.header, log.continuation == nil, let survey else { return try whole() }
        try ReplayLimits.check(header: h)
        guard survey.streamable && survey.surelyWithinLimits else { return try whole() }
        let source = Source(log: log, survey: survey, whole: false) {
            let c = try RunLogCursor(path: path, allowPartialLastLine: allowPartialLastLine, keepsContext: false)
            return { try c.next() }
        }
        var result = try run(source, adjust: { _ in }, keep: false, out: replayedFrames)
        result.log = log
        return result
    }

    /// Where the frames of a replay of a file go (``run(path:allowPartialLastLine:replayedFrames:)``).
    public struct ReplayedFrames {
        /// Called before the frames of each try come (forget those of an earlier try).
        public var restart: () throws -> Void
        /// Each replayed frame, in completion order.
        public var frame: (FrameRecord) throws -> Void
        /// Frames go to `frame`; `restart` is called before each try.
        public init(restart: @escaping () throws -> Void, frame: @escaping (FrameRecord) throws -> Void) {
            self.restart = restart
            self.frame = frame
        }
    }

    /// A log to replay: the lines besides its frame records, their survey, and a reader of the
    /// records in log order (a new one for each try).
    struct Source {
        var log: RunLog
        var survey: ReplaySurvey
        /// Read all records before replaying (a log not in the order a run writes it).
        var whole: Bool
        var open: () throws -> () throws -> FrameRecord?
    }

    /// The records of `log`, in memory, as a ``Source``.
    static func source(_ log: RunLog, forceWhole: Bool = false) -> Source {
        let survey = ReplaySurvey(log)
        let records = log.records
        var rest = log
        rest.records = []
        return Source(log: rest, survey: survey, whole: forceWhole || !survey.streamable) {
            var i = 0
            return {
                guard i < records.count else { return nil }
                i += 1
                return records[i - 1]
            }
        }
    }

    /// Replays `log` with its configuration changed by `adjust` (a later file of a rotated
    /// log: the content clock it picks up). `forceWhole` reads every record before replaying (the
    /// tests compare it with the replay reading record by record).
    static func run(
        _ log: RunLog, forceWhole: Bool = false, adjust: (inout RunConfiguration) -> Void
    ) throws -> ReplayResult {
        guard log.header != nil else {
            throw ReplayDisplay.Unreplayable(
                description:
                    "the log has no run header (written by an older or foreign tool); it can be reported but not replayed"
            )
        }
        if let c = log.continuation { return try ReplaySegment.run(log, continuation: c, forceWhole: forceWhole) }
        try ReplayLimits.check(log)
        var result = try run(source(log, forceWhole: forceWhole), adjust: adjust, keep: true, out: nil)
        result.log = log
        return result
    }

    /// Replays `source`: where the run started between two vblanks is not logged, so both
    /// starts are tried, the likelier first, and the one whose first frame is the recorded one
    /// is kept (else the closer result). `keep` keeps the replayed records in the result; `out`
    /// gets them as they come.
    static func run(
        _ source: Source, adjust: (inout RunConfiguration) -> Void, keep: Bool, out: ReplayedFrames?
    ) throws -> ReplayResult {
        let log = source.log
        guard let first = source.survey.first else { throw ReplayDisplay.Unreplayable(description: "no frames") }
        let woke = first.wakeNs &- first.callbackNs > clampedNanoseconds(source.survey.refreshInterval / 8)
        var best: (result: ReplayResult, between: Bool)? = nil
        var last: Bool? = nil
        for between in [woke, !woke] {
            try out?.restart()
            let (r, replayedFirst) = try once(
                source, startBetweenVBlanks: between, adjust: adjust, keep: keep, out: out)
            last = between
            if replayedFirst?.intent.targetSequence == first.intent.targetSequence
                && replayedFirst?.callbackNs == first.callbackNs
            {
                best = (r, between)
                break
            }
            if best == nil || r.differences.count < best!.result.differences.count { best = (r, between) }
        }
        if let out, let b = best, b.between != last {
            // The frames handed on are the other try's: replay the kept one again.
            try out.restart()
            _ = try once(source, startBetweenVBlanks: b.between, adjust: adjust, keep: false, out: out)
        }
        var result = best!.result
        if log.rotated != nil { result.note = log.segmentDescription }
        if let v = log.header?.version, v < RunLogHeader.currentVersion {
            let rules = "(VRR lateness in time, the late-commit cause), so its VRR and late-commit verdicts may differ"
            let old = "log version \(v): judged by version \(RunLogHeader.currentVersion)'s rules \(rules)"
            result.note = result.note.map { $0 + "; " + old } ?? old
        }
        return result
    }

    /// One replay of `source`, and its replayed frame with the lowest id.
    static func once(
        _ source: Source, startBetweenVBlanks: Bool, adjust: (inout RunConfiguration) -> Void = { _ in },
        refreshesEarlier: UInt64 = 0, refreshesLater: UInt64 = 0, keep: Bool, out: ReplayedFrames?
    ) throws -> (ReplayResult, FrameRecord?) {
        let log = source.log
        let survey = source.survey
        let header = log.header!
        let display = try ReplayDisplay(
            log: log, survey: survey, records: try source.open(), whole: source.whole,
            startBetweenVBlanks: startBetweenVBlanks, refreshesEarlier: refreshesEarlier,
            refreshesLater: refreshesLater)
        var config = header.configuration
        adjust(&config)
        // Never longer than the recording plus a second: a log the pacer cannot follow ends as
        // a replay that differs, not as one that runs forever.
        config.duration = Swift.max(0, survey.lastEvent &- display.now()) &+ 1_000_000_000
        // Rendering ends when it ended in the recording (below): a scripted cost is in that already.
        config.renderCost = []
        let maxFrame = survey.maxFrame
        // A file the run continued in the next one (``RunLog/rotated``, or a later file's
        // replay through ``ReplaySegment``): the frames after its last are made too, as in the
        // run, until every frame of the file has completed (below), and not compared. A late
        // render of the frame after the file's last holds up the receipt of the file's last
        // completion (frame 17, followed by a frame 4 refreshes late, replayed flip-late). And
        // the run's loop went on waiting as a producing loop does (no more than 4 refreshes at
        // a time), not as a draining one: a 30 Hz link at 60 Hz, latency 2, the process stalled
        // for 67 ms after frame 41's commit at 2.4667 s; the run woke at 2.5333 s, read a later
        // vblank and put the flip's timeout off, then read its completion at the stall's end
        // (2.5503 s); the replay, draining after frame 42's callback, waited until the timeout
        // (2.5500 s) and gave the flip up (unconfirmed, flip-late).
        let continues = log.rotated != nil && (header.frames ?? Int.max) > maxFrame + 1
        config.frames = continues ? header.frames : maxFrame + 1
        if continues { display.pastTheLogAfter = survey.maxID }
        display.inAnotherFile = survey.missingIDs
        // Rendering ends when it ended in the recording (at once when the replay is already past
        // that). Frames with injected lateness are replayed as they were made: drawing (as long
        // as a typical frame's) and then the injected overrun, which looks at the display again.
        let injected = config.injectLate
        let typical = survey.typicalRender
        let run = try PacingRun(backend: display, configuration: config)
        var records: [FrameRecord] = []
        var own = LogSummaryBuilder()
        var count = 0
        var lowest: FrameRecord? = nil
        var failure: Error? = nil
        let needsRecords = continues || keep || out != nil
        run.onFrame = { report in
            if lowest == nil || report.id < lowest!.id { lowest = FrameRecord(report) }
            guard needsRecords else {
                count += 1
                return
            }
            let r = FrameRecord(report)
            if continues {
                guard r.frame <= maxFrame && !survey.missingIDs.contains(r.id) else { return }
                own.add(r)
            }
            count += 1
            if keep { records.append(r) }
            if let out, failure == nil {
                do { try out.frame(r) } catch { failure = error }
            }
        }
        run.renderer = { [unowned run] _, ctx in
            let now = run.backend.now()
            if injected[ctx.frameIndex] != nil {
                if typical > 0 { try? run.pacer.renderWork(until: Swift.min(now &+ typical, ctx.deadline)) }
            } else if let end = try? display.renderEnd(frame: ctx.frameIndex), end > 0, end > now {
                try? run.pacer.renderWork(until: end)
            }
        }
        // The loop turns up to 2.5 times per frame (measured on the replay tests) and once per 4
        // refreshes of idle time; a replay display that cannot follow a corrupt log can livelock
        // in virtual time. Bound the turns (3× that), and say so.
        let refreshes = Double(config.duration!) / display.refreshInterval
        let maxTurns = 8 * (survey.count + 16) + Int(Swift.min(refreshes, 1e9)) / 2
        run.maxLoopTurns = maxTurns
        // A continued file ends where its own frames have (`count` counts only those).
        var replayed = try run.run(shouldStop: { continues && count >= survey.count })
        if let e = display.readError ?? failure { throw e }
        // The file's own frames, with its session gaps and rate switches (a first file's gap was
        // lost: measuredRateHz 38.6 vs 60.0, the span over the gap instead of the mean interval).
        if continues {
            var file = log
            file.records = []
            file.end = nil
            replayed = own.summary(of: file)
        }
        let recorded = log.end?.summary ?? survey.recorded.summary(of: log)
        if recorded.end == .stopped && replayed.end == .completed { replayed.end = .stopped }
        var differences = LogAnalysis.replayDifferences(replayed, recorded)
        if run.stalled {
            differences.insert(
                "the replay stalled after \(count) of \(survey.count) frames (the replay display cannot follow this log)",
                at: 0)
        }
        // `--adapt`: the same switches at the same frames.
        let switches = { (l: [RateSwitch]) in
            l.map { "\($0.frame):\(RateSwitch.format($0.toHz))" }.joined(separator: ",")
        }
        if header.adapt == true && switches(run.rateSwitches) != switches(log.rateSwitches) {
            differences.append("rate switches: \(switches(run.rateSwitches)) vs \(switches(log.rateSwitches))")
        }
        var result = ReplayResult(
            replayed: replayed, recorded: recorded, differences: differences,
            divergences: display.divergences, records: records, rateSwitches: run.rateSwitches)
        result.window = display.maxWindow
        result.stalled = run.stalled
        return (result, lowest)
    }
}
