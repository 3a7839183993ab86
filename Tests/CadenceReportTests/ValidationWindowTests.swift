import CadenceCore
import CadenceReport
import Foundation
import Testing

/// validate's --max-drop-event, --warmup and --window on fake-display runs (virtual time).
@Suite struct ValidationWindowTests {
    /// 600 frames at 60 Hz (about 10 s) with frame 100 late by 1 refresh (shown at about
    /// 1.68 s) and frame 250 late by 3 (about 4.23 s): every completed frame and the summary.
    func frames(_ late: [Int: Int] = [100: 1, 250: 3]) throws -> ([FrameReport], RunSummary) {
        var c = RunConfiguration()
        c.frames = 600
        c.injectLate = late
        let run = try PacingRun(backend: FakeDisplay(FakeDisplayConfiguration()), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        let s = try run.run()
        return (out, s)
    }

    func info(_ s: RunSummary) -> ValidationWindows.RunInfo { .init(s, hardwareVBlank: true) }

    @Test func largestDropEventIsTheBiggestSingleEvent() throws {
        let (f, s) = try frames()
        let all = ValidationWindows(frames: f, info: info(s), warmupNs: 0, windowNs: nil)
        #expect(all.overallLargestDropEvent == 3)
        var c = ValidationCriteria()
        c.maxDropEvent = 3
        #expect(all.judge(c).map(\.passed) == [true])
        c.maxDropEvent = 2
        let r = all.judge(c)
        #expect(r.map(\.passed) == [false])
        #expect(r[0].detail == "largest drop event 3 refreshes (limit 2)")
        // Without frames to look at, the criterion cannot pass.
        #expect(c.evaluate(s, measuredRefreshHz: 60, largestDropEvent: nil).map(\.passed) == [false])
        c.maxDropEvent = -1
        #expect(throws: ValidationCriteria.Invalid.self) { try c.validate() }
    }

    @Test func warmupIgnoresTheFirstSeconds() throws {
        let (f, s) = try frames()
        // Nothing ignored: the same totals as the run.
        let none = ValidationWindows(frames: f, info: info(s), warmupNs: 0, windowNs: nil)
        #expect(none.warmupFrames == 0 && none.judgedFrames == 600)
        #expect(none.overall.droppedRefreshes == s.droppedRefreshes && none.overall.dropEvents == s.dropEvents)
        #expect(none.overall.intervalMs == s.intervalMs)
        // 2 s: frame 100 (shown at ~1.68 s) is ignored, frame 250 (~4.23 s) is not.
        let two = ValidationWindows(frames: f, info: info(s), warmupNs: 2_000_000_000, windowNs: nil)
        #expect(two.overall.droppedRefreshes == 3 && two.overall.dropEvents == 1)
        #expect(two.warmupFrames > 100 && two.warmupFrames < 125)
        #expect(two.warmupFrames + two.judgedFrames == 600)
        var c = ValidationCriteria()
        c.maxDropped = 3
        #expect(two.judge(c).map(\.passed) == [true])
        #expect(none.judge(c).map(\.passed) == [false])
        // 5 s: both drops are in the warm-up.
        let five = ValidationWindows(frames: f, info: info(s), warmupNs: 5_000_000_000, windowNs: nil)
        #expect(five.overall.droppedRefreshes == 0)
        // Longer than the run: nothing left to judge.
        let all = ValidationWindows(frames: f, info: info(s), warmupNs: 60_000_000_000, windowNs: nil)
        #expect(all.judgedFrames == 0 && all.warmupFrames == 600)
    }

    @Test func everyWindowMustHoldAndTheWorstIsReported() throws {
        let (f, s) = try frames()
        let w = ValidationWindows(frames: f, info: info(s), warmupNs: 0, windowNs: 2_000_000_000)
        // ~10.07 s of frames: five whole 2 s windows and a remainder judged only overall.
        #expect(w.windows.count == 5)
        #expect(w.remainderSeconds > 0 && w.remainderSeconds < 0.2)
        #expect(w.windows.map(\.summary.droppedRefreshes) == [1, 0, 3, 0, 0])
        #expect(w.windows.map(\.largestDropEvent) == [1, 0, 3, 0, 0])
        #expect(w.windows.reduce(0) { $0 + $1.summary.frames } <= 600)
        // Overall 600 frames in ~10.07 s pass 59 Hz; the window holding the 3-refresh drop
        // shows its frames at 1 / mean interval < 59 Hz, so the criterion fails there.
        var c = ValidationCriteria()
        c.minRateHz = 59
        #expect(c.evaluate(w.overall, measuredRefreshHz: nil).map(\.passed) == [true])
        let r = w.judge(c)
        #expect(r.map(\.passed) == [false])
        #expect(r[0].detail.contains("worst 2 s window 4.0–6.0 s"), "\(r[0].detail)")
        #expect(r[0].detail.contains("(1 of 5 windows fail)"), "\(r[0].detail)")
        let worst = w.windows[2].summary.measuredRateHz
        #expect(worst > 58 && worst < 59, "\(worst)")
        // A passing criterion still names its worst window.
        var d = ValidationCriteria()
        d.maxDropped = 4
        let p = w.judge(d)
        #expect(p.map(\.passed) == [true])
        #expect(p[0].detail == "dropped refreshes 4 (limit 4); worst 2 s window 4.0–6.0 s: dropped refreshes 3 (limit 4)")
        // The refresh is fitted inside each window.
        for win in w.windows { #expect(abs((win.measuredRefreshHz ?? 0) - 60) < 1e-6) }
    }

    @Test func windowsStartAfterTheWarmup() throws {
        let (f, s) = try frames()
        let w = ValidationWindows(frames: f, info: info(s), warmupNs: 3_000_000_000, windowNs: 3_000_000_000)
        #expect(w.windows.map(\.start) == [3.0, 6.0])
        #expect(w.windows.map(\.summary.droppedRefreshes) == [3, 0])
        // Without a vblank interrupt (synthetic sequences) no refresh is fitted.
        let soft = ValidationWindows(frames: f, info: .init(s, hardwareVBlank: false), warmupNs: 0, windowNs: 3_000_000_000)
        #expect(soft.overallRefreshHz == nil && soft.windows.allSatisfy { $0.measuredRefreshHz == nil })
        var c = ValidationCriteria()
        c.refreshTolerancePercent = 1
        #expect(soft.judge(c).map(\.passed) == [false])
    }

    @Test func aWindowWithNothingShownHasRateZero() throws {
        var r = FrameReport()
        r.callbackTimestamp = 1_000_000_000
        r.targetTime = 1_016_666_667
        r.presentedTime = r.targetTime
        r.sequence = 61
        var later = r
        later.id = 2
        later.frameIndex = 1
        later.targetTime = 6_000_000_000
        later.presentedTime = 6_000_000_000
        later.sequence = 360
        later.interval = later.presentedTime - r.presentedTime
        later.intervalRefreshes = 299
        later.droppedRefreshes = 298
        let s = RunSummary(accounting: FrameAccounting(), backend: "fake", refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1,
                           end: .completed)
        let w = ValidationWindows(frames: [r, later], info: .init(s, hardwareVBlank: true), warmupNs: 0, windowNs: 1_000_000_000)
        #expect(w.windows.count == 5)
        #expect(w.windows[1].summary.frames == 0 && w.windows[1].summary.measuredRateHz == 0)
        var c = ValidationCriteria()
        c.minRateHz = 1
        #expect(w.judge(c).map(\.passed) == [false])
    }
}
