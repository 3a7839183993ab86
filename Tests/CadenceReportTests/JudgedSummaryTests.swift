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
}
