import CadenceCore
import CadenceReport
import CadenceSession
import PropertyBased
import Testing

/// Issue 21, finding 8 as a property: `validate --min-rate` after a warm-up and in windows
/// measures the rate the frames were shown at. On a perfect fake display (no drift, no jitter,
/// nothing late) every frame is shown at the link's rate, so the measured rate of the judged
/// part, and of every whole window, is the effective rate — whatever the refresh, the rate
/// range, the latency, the warm-up and the window length. Counting the first judged frame's
/// interval, which reaches back into the warm-up, gave N/span instead of (N − 1)/span: 60.250 Hz
/// on a perfect 60 Hz run with a 1 s warm-up.
@Suite struct ValidateRatePropertyTests {
    @Test func theJudgedRateIsTheRateShown() async {
        let input = zip(
            PacingGen.knobs(frames: 60...240), Gen.int(in: 0...3), Gen.int(in: 0...100), Gen.int(in: 0...3))
        await propertyCheck(count: 120, input: input) { k, warmupKind, warmupPercent, windowKind in
            var k = k
            k.mode = 0
            k.late = []
            let s = PacingGen.scenario(k, noisy: false)
            var config = s.runConfiguration()
            config.injectLate = [:]
            let tally = FrameTally(keepFrames: true)
            let plan = OutputGroupPlan(
                backend: .fake, fake: FakeDisplayConfiguration(refreshHz: s.refreshHz), configuration: config,
                sinks: { _ in SessionSinks([tally], notice: { _ in }) })
            let group = try OutputGroupRun.open(plan, notice: { _ in })
            let summary = try group.run()[0].summary
            let sinks = group.outputs[0].sinks
            group.close()
            let rate = summary.effectiveRateHz
            #expect(summary.droppedRefreshes == 0, "\(s): a perfect display dropped refreshes")
            // The warm-up: none, or up to half the run; windows: none, or a quarter to the whole run.
            let runSeconds = summary.durationSeconds
            let warmup = warmupKind == 0 ? nil : runSeconds * Double(warmupPercent) / 200
            let window = windowKind == 0 ? nil : runSeconds * Double(windowKind) / 4
            var criteria = ValidationCriteria()
            criteria.minRateHz = 0
            let judge = OutputJudge(criteria: criteria, warmupSeconds: warmup, windowSeconds: window)
            let judged = judge.judge(summary, tally: tally, sinks: sinks)
            if judged.nothingToJudge { return }
            // The verdict's min-rate (the judged part's, or the worst window's) and every window's.
            let measured = judged.results.filter { $0.name == "min-rate" }.map(\.value)
            let windows = (judged.split?.windows ?? []).map(\.summary.measuredRateHz)
            #expect(measured.count == 1, "\(s): \(measured.count) min-rate results")
            for v in measured + windows {
                #expect(
                    abs(v - rate) <= rate * 1e-6,
                    "\(s), warm-up \(warmup ?? 0) s, window \(window ?? 0) s: \(v) Hz measured, \(rate) Hz shown")
            }
        }
    }
}
