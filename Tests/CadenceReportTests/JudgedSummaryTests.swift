import CadenceCore
import CadenceReport
import Foundation
import Testing

/// The numbers `validate --warmup` and `report` give are the run's own (issue 21, findings 8
/// and 11): the judged rate after a warm-up counts only intervals inside the judged span, and the
/// summary of a log equals the live summary field for field (session gaps, rate switches).
@Suite struct JudgedSummaryTests {
    /// A perfect 60 Hz run of `frames` frames on the fake display: every frame and the summary.
    func perfectRun(frames: Int = 300) throws -> ([FrameReport], RunSummary) {
        var c = RunConfiguration()
        c.frames = frames
        let run = try PacingRun(backend: FakeDisplay(FakeDisplayConfiguration()), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        let s = try run.run()
        return (out, s)
    }

    /// 300 frames at exactly 60 Hz: without a warm-up 299 intervals over 299/60 s, 60 Hz; after
    /// a 1, 2 or 3 s warm-up N frames over (N − 1)/60 s, still 60 Hz (it was 60.250, 60.333 and
    /// 60.500 Hz when the first judged frame's interval, reaching into the warm-up, was counted).
    @Test func theRateAfterAWarmupCountsOnlyIntervalsInsideTheJudgedSpan() throws {
        let (f, s) = try perfectRun()
        #expect(abs(s.measuredRateHz - 60) < 1e-6)
        let info = ValidationWindows.RunInfo(s, hardwareVBlank: true)
        let none = ValidationWindows(frames: f, info: info, warmupNs: 0, windowNs: nil)
        #expect(none.overall.measuredRateHz == s.measuredRateHz, "no warm-up: the run's own figure, bit for bit")
        for (seconds, judged) in [(1, 241), (2, 181), (3, 121)] {
            let w = ValidationWindows(frames: f, info: info, warmupNs: Int64(seconds) * 1_000_000_000, windowNs: nil)
            #expect(w.judgedFrames == judged, "\(seconds) s")
            #expect(abs(w.overall.durationSeconds - Double(judged - 1) / 60) < 1e-6, "\(seconds) s")
            #expect(abs(w.overall.measuredRateHz - 60) < 1e-6, "\(seconds) s: \(w.overall.measuredRateHz)")
            var c = ValidationCriteria()
            c.minRateHz = 60.1
            let r = w.judge(c)
            #expect(r.map(\.passed) == [false])
            #expect(r[0].detail == "rate 60.000 Hz measured (minimum 60.100 Hz)")
            // The first judged frame's interval still counts as an interval (jitter, mean).
            #expect(w.overall.intervalMs.count == judged)
        }
    }

    /// A 2 s session gap: `measuredRateHz` is 1 / the mean interval between shown frames, as the
    /// run has it, and validate's overall figure (no warm-up) is the run's.
    @Test func sessionGapsKeepTheRunsRateInValidate() throws {
        var c = RunConfiguration()
        c.frames = 400
        c.injectLate = [100: 1]
        var fake = FakeDisplayConfiguration()
        fake.faults = [.sessionPaused(after: 1_000_000_000, for: 2_000_000_000)]
        let run = try PacingRun(backend: FakeDisplay(fake), configuration: c)
        var f: [FrameReport] = []
        run.onFrame = { f.append($0) }
        let s = try run.run()
        #expect(s.sessionGaps == 1)
        #expect(abs(s.measuredRateHz - 59.8496) < 1e-4, "\(s.measuredRateHz)")
        let w = ValidationWindows(frames: f, info: .init(s, hardwareVBlank: true), warmupNs: 0, windowNs: nil)
        #expect(w.overall.measuredRateHz == s.measuredRateHz)
    }

    /// `--fake-session-pause 1:2 --frames 400 --inject-late 100:1`: the log's summary equals the
    /// live one, measured rate 59.8496 Hz (it was 45.923: 400 frames over the span with the gap).
    @Test func aLogsSummaryWithASessionGapEqualsTheLiveOne() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var fake = FakeDisplayConfiguration()
        fake.faults = [.sessionPaused(after: 1_000_000_000, for: 2_000_000_000)]
        let (path, live) = try recordRun(config(frames: 400, injectLate: [100: 1]), fake: fake, in: dir)
        let log = try RunLog.read(path: path)
        let s = LogAnalysis.summary(of: log)
        #expect(s == live)
        #expect(s.sessionGaps == 1 && s.sessionGapSeconds == 2)
        #expect(abs(s.measuredRateHz - 59.8496) < 1e-4, "\(s.measuredRateHz)")
        // A killed run's log (no end line) gives the same figures from its session lines.
        var killed = log
        killed.end = nil
        let k = LogAnalysis.summary(of: killed)
        #expect(k.sessionGaps == 1 && k.sessionGapSeconds == 2 && k.measuredRateHz == live.measuredRateHz)
        // The HTML report says so.
        let html = HTMLReport.html(ReportChart(log: log, width: 800, height: 480), log: log, source: "s.jsonl")
        #expect(html.contains("<tr><th>measured rate (Hz)</th><td>59.850</td></tr>"))
        #expect(html.contains("<tr><th>session gaps</th><td>1 (2.000 s away; no drops counted inside)</td></tr>"))
    }

    /// A run that ends while its session is away: the open gap counts to the end, as live.
    @Test func aGapOpenAtTheEndIsTheRunsToo() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var fake = FakeDisplayConfiguration()
        fake.faults = [.sessionPaused(after: 2_000_000_000, for: 60_000_000_000)]
        var c = RunConfiguration()
        c.duration = 4_000_000_000
        let (path, live) = try recordRun(c, fake: fake, in: dir)
        #expect(live.sessionGaps == 1)
        let s = LogAnalysis.summary(of: try RunLog.read(path: path))
        #expect(s == live)
    }

    /// `--adapt`: the log's summary carries the run's rate switches (2), as the live one.
    @Test func anAdaptLogsSummaryCountsItsRateSwitches() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = config(frames: 400)
        c.adapt = true
        c.renderCost = [RenderCost(first: 100, last: 199, costNs: 20_000_000)]
        let (path, live) = try recordRun(c, in: dir)
        #expect(live.rateSwitches == 2)
        #expect(LogAnalysis.summary(of: try RunLog.read(path: path)) == live)
    }

    /// A rotated log with a session gap: each file counts its own session lines, not those
    /// repeated after the next file's continuation line, so the files' gaps add up to the run's.
    @Test func rotatedFilesCountEachGapOnce() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        var fake = FakeDisplayConfiguration()
        fake.faults = [.sessionPaused(after: 1_000_000_000, for: 2_000_000_000)]
        let writer = try RunLogWriter(path: path, rotation: LogRotation(maxBytes: 16 << 10, keep: 40))
        let display = FakeDisplay(fake)
        let c = config(frames: 400)
        let run = try PacingRun(backend: display, configuration: c)
        try writer.begin(RunLogHeader(backend: display, configuration: c))
        run.onFrame = { try? writer.write(FrameRecord($0)) }
        run.onSessionChange = { try? writer.write($0) }
        let live = try run.run()
        try writer.end(live)
        let logs = try (0...40).map { LogRotation.path(path, age: $0) }.filter { FileManager.default.fileExists(atPath: $0) }
            .map { try RunLog.read(path: $0) }
        #expect(logs.count > 3)
        #expect(logs.reduce(0) { $0 + $1.sessions.count } > 2, "the gap's lines are repeated after a continuation line")
        #expect(logs.reduce(0) { $0 + (LogAnalysis.summary(of: $1).sessionGaps ?? 0) } == 1)
        let gapSeconds = logs.compactMap { LogAnalysis.summary(of: $0).sessionGapSeconds }
        #expect(gapSeconds == [2])
    }
}
