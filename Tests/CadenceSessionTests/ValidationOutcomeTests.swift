import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// `ValidationOutcome`: what `cadence validate` prints around the JUnit file, and its exit
/// status.
@Suite struct ValidationOutcomeTests {
    static func summary(backend: String = "kms", incomplete: [String]? = nil) -> RunSummary {
        var s = RunSummary(
            accounting: FrameAccounting(), backend: backend, refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1,
            end: .completed)
        s.incompleteOutputs = incomplete
        return s
    }

    let pass = CriterionResult(name: "max-dropped", passed: true, detail: "0 ≤ 1")
    let fail = CriterionResult(name: "max-jitter", passed: false, detail: "3 > 1")

    @Test func aPassShowsItsLinesBeforeTheJUnitFileAndTheVerdictAfter() {
        var o = ValidationOutcome()
        o.show(.output("summary"))
        o.finish([pass], summary: Self.summary(incomplete: ["run.csv"]), started: Date())
        #expect(o.beforeJUnit == [.output("summary"), .output("PASS max-dropped: 0 ≤ 1")])
        #expect(o.afterJUnit == [.output("validate: PASS (1 criteria)")])
        #expect(o.junitXML?.contains("max-dropped") == true)
        #expect(!o.discardsJUnit)
        #expect(o.status == 0)
        #expect(o.incompleteOutputs == ["run.csv"])
    }

    @Test func aFailureIsAnErrorLineAndStatusOneAndSaysWhenItIsASimulator() {
        var o = ValidationOutcome()
        o.finish([pass, fail], summary: Self.summary(backend: "fake"), started: Date())
        #expect(
            o.beforeJUnit == [
                .output("PASS max-dropped: 0 ≤ 1"), .output("FAIL max-jitter: 3 > 1"), .error("FAIL max-jitter: 3 > 1")
            ])
        #expect(
            o.afterJUnit == [
                .output("validate: FAIL (1 of 2 criteria) on the fake display (a simulator, not a real panel)")
            ])
        #expect(o.status == 1)
    }

    @Test func withoutLinesOnlyTheFailuresAreShownAfterAJUnitReportSetFirst() {
        var o = ValidationOutcome()
        o.junitXML = "<testsuites/>"
        o.finish([fail], summary: Self.summary(), showLines: false)
        #expect(o.beforeJUnit.isEmpty)
        #expect(o.afterJUnit == [.error("FAIL max-jitter: 3 > 1")])
        #expect(o.junitXML == "<testsuites/>")
        #expect(o.status == 1)
    }

    @Test func nothingLeftAfterTheWarmupIsStatusTwoAndDiscardsTheJUnitFile() {
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let judge = OutputJudge(criteria: criteria, warmupSeconds: 1)
        let judged = judge.judge(
            Self.summary(), frames: [], hardwareVBlank: true, measuredRefreshHz: nil, largestDropEvent: 0)
        var o = ValidationOutcome()
        let taken = o.take(judged, by: judge)
        #expect(taken.results == nil)
        #expect(taken.note == "0 frames after a 1 s warm-up (0 ignored)")
        #expect(
            o.beforeJUnit == [
                .output("judged            0 frames after a 1 s warm-up (0 ignored)"),
                .error("cadence validate: no frames after the 1 s warm-up: nothing to judge")
            ])
        #expect(o.junitXML == nil)
        #expect(o.discardsJUnit)
        #expect(o.status == 2)
        // Several outputs keep the file; the note is kept, not shown.
        var several = ValidationOutcome()
        #expect(several.take(judged, by: judge, showNote: false, discardJUnit: false).note != nil)
        #expect(several.beforeJUnit.count == 1)
        #expect(!several.discardsJUnit)
    }

    @Test func theWholeRunJudgedHasNoNote() {
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let judge = OutputJudge(criteria: criteria)
        let judged = judge.judge(
            Self.summary(), frames: [], hardwareVBlank: true, measuredRefreshHz: nil, largestDropEvent: 0)
        var o = ValidationOutcome()
        let taken = o.take(judged, by: judge)
        #expect(taken.results?.map(\.name) == ["max-dropped"])
        #expect(taken.note == nil)
        #expect(o.beforeJUnit.isEmpty)
        #expect(o.status == 0)
    }

    @Test func anObservedClientThatDidNotFlipFailsTheFlipsCriterion() throws {
        let (result, frames) = try ObservedValidationTests.observed()
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let o = try ObservedValidation.outcome(
            result, client: "nosuch", judge: OutputJudge(criteria: criteria), frames: frames, device: "/dev/dri/card0",
            maxFrozen: nil, json: false, started: Date())
        let seconds = String(format: "%.1f", result.durationSeconds)
        guard case .output(let first) = o.beforeJUnit.first else {
            Issue.record("no line")
            return
        }
        #expect(first.hasPrefix("observed          \(seconds) s: no flips observed from nosuch (flipping: "))
        #expect(o.afterJUnit == [.output("validate: FAIL (1 of 1 criteria)")])
        #expect(o.status == 1)
    }
}
