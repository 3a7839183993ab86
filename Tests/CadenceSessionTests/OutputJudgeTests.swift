import CadenceCore
import CadenceReport
import CadenceSession
import Testing

/// ``OutputJudge``: one output's run judged on the whole run or after a warm-up, the display's
/// failure included, and nothing judged when no frame is left after the warm-up.
@Suite struct OutputJudgeTests {
    /// Runs `frames` frames on the fake display (frame 30 late by 2 refreshes) with `judge`'s
    /// tally, and judges it.
    func judged(_ judge: OutputJudge, frames: Int = 120) throws -> OutputJudge.Judged {
        let sinks = SessionSinks(notice: { _ in })
        let tally = judge.makeTally()
        sinks.add(tally)
        var config = RunConfiguration()
        config.frames = frames
        config.duration = nil
        config.injectLate = [30: 2]
        let summary = try RunSession(
            display: FakeDisplay(FakeDisplayConfiguration()), configuration: config, sinks: sinks
        )
        .run()
        return judge.judge(summary, tally: tally, sinks: sinks)
    }

    @Test func theWholeRunIsJudgedWithoutAWarmup() throws {
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let j = try judged(OutputJudge(criteria: criteria))
        #expect(j.split == nil && !j.nothingToJudge)
        #expect(j.results.map(\.name) == ["max-dropped"] && j.results.allSatisfy { !$0.passed }, "\(j.results)")
    }

    @Test func theWarmupHidesTheLateFrame() throws {
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        // 120 frames at 60 Hz: 2 s; frame 30 is shown in the first second.
        let j = try judged(OutputJudge(criteria: criteria, warmupSeconds: 1))
        let split = try #require(j.split)
        #expect(split.warmupFrames > 50 && split.judgedFrames > 50, "\(split.warmupFrames) \(split.judgedFrames)")
        #expect(!j.results.isEmpty && j.results.allSatisfy(\.passed), "\(j.results)")
    }

    @Test func nothingIsJudgedAfterALongerWarmup() throws {
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let j = try judged(OutputJudge(criteria: criteria, warmupSeconds: 10))
        #expect(j.nothingToJudge && j.results.isEmpty)
    }
}
