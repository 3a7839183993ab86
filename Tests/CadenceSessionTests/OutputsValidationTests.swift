import CadenceCore
import CadenceReport
import CadenceSession
import Testing

/// `OutputsValidation`: several outputs' judgement, verdict, JUnit suites and total.
@Suite struct OutputsValidationTests {
    static func summary(backend: String = "kms", frames: Int, dropped: Int, incomplete: [String]? = nil) -> RunSummary {
        var s = RunSummary(
            accounting: FrameAccounting(), backend: backend, refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1,
            end: .completed)
        s.frames = frames
        s.presented = frames
        s.droppedRefreshes = dropped
        s.dropEvents = dropped
        s.incompleteOutputs = incomplete
        return s
    }

    let pass = CriterionResult(name: "maxDropped", passed: true, detail: "0 ≤ 1")
    let fail = CriterionResult(name: "maxDropped", passed: false, detail: "3 > 1")

    @Test func theVerdictNamesEachOutputsCriteriaAndTheTotalAddsUp() throws {
        var v = OutputsValidation()
        #expect(v.summary == nil)
        v.add(name: "DP-1", summary: Self.summary(frames: 180, dropped: 0), results: [pass])
        v.add(name: "HDMI-A-1", summary: Self.summary(frames: 170, dropped: 3), results: [fail])
        #expect(v.outputs.map(\.name) == ["DP-1", "HDMI-A-1"])
        #expect(v.verdict.results.map(\.name) == ["DP-1 maxDropped", "HDMI-A-1 maxDropped"])
        #expect(!v.verdict.passed)
        #expect(v.verdict.display == .panel)
        #expect(v.suites.map(\.name) == ["cadence.validate.DP-1", "cadence.validate.HDMI-A-1"])
        #expect(v.suites.map(\.summary.frames) == [180, 170])
        let t = v.total
        #expect(t["outputs"] as? Int == 2)
        #expect(t["frames"] as? Int == 350)
        #expect(t["droppedRefreshes"] as? Int == 3)
        #expect(t["criteria"] as? Int == 2)
        #expect(t["failedCriteria"] as? Int == 1)
        #expect(t["passed"] as? Bool == false)
        #expect(t["display"] as? String == JUnitReport.displayName("kms"))
        let xml = v.junitXML(seconds: 3)
        #expect(xml == JUnitReport.xml(suites: v.suites, seconds: 3))
        #expect(xml.contains("cadence.validate.HDMI-A-1"))
    }

    @Test func theSummaryIsTheFirstWithEveryOutputsIncompleteOnes() throws {
        var v = OutputsValidation()
        v.add(name: "a", summary: Self.summary(backend: "fake-drm", frames: 10, dropped: 0), results: [pass])
        v.add(name: "b", summary: Self.summary(frames: 20, dropped: 0, incomplete: ["b"]), results: [pass])
        let s = try #require(v.summary)
        #expect(s.frames == 10)
        #expect(s.incompleteOutputs == ["b"])
        #expect(v.verdict.passed)
        #expect(v.verdict.display == ValidationVerdict.Display(backend: "fake-drm"))

        var clean = OutputsValidation()
        clean.add(name: "a", summary: Self.summary(frames: 10, dropped: 0), results: [pass])
        #expect(clean.summary?.incompleteOutputs == nil)
    }

    @Test func theTotalOfNoSummariesIsZero() {
        let t = RunSummary.total([])
        #expect(t["outputs"] == 0 && t["frames"] == 0 && t["dropEvents"] == 0)
    }
}
