import CadenceReport
import CadenceSession
import Testing

/// ``ValidationVerdict``: the criteria of one output or several, and what was judged.
@Suite struct ValidationVerdictTests {
    let pass = CriterionResult(name: "maxDropped", passed: true, detail: "0 ≤ 2")
    let fail = CriterionResult(name: "maxJitter", passed: false, detail: "0.9 ms > 0.5 ms")

    @Test func severalOutputsNameEachCriterionAfterItsOutput() {
        let v = ValidationVerdict(outputs: [("eDP-1", [pass]), ("DP-1", [pass, fail])], backend: "kms")
        #expect(v.results.map(\.name) == ["eDP-1 maxDropped", "DP-1 maxDropped", "DP-1 maxJitter"])
        #expect(v.failed.map(\.name) == ["DP-1 maxJitter"] && !v.passed)
        #expect(v.failed.first?.detail == fail.detail)
        #expect(v.display == .panel)
    }

    @Test func oneOutputKeepsItsNamesAndPassesWithoutAFailure() {
        let v = ValidationVerdict([pass], backend: "fake")
        #expect(v.results.map(\.name) == ["maxDropped"] && v.passed && v.failed.isEmpty)
    }

    @Test func theDisplayJudgedIsTyped() {
        #expect(ValidationVerdict.Display(backend: "fake") == .fakeDisplay)
        #expect(ValidationVerdict.Display(backend: "fake-drm") == .fakeDRM)
        #expect(ValidationVerdict.Display(backend: "fake-drm-wall") == .fakeDRM)
        #expect(ValidationVerdict.Display(backend: "kms") == .panel)
        #expect(ValidationVerdict.Display(backend: "observed") == .panel)
    }
}
