import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// What `cadence validate` prints of its verdict, and the judging options it refuses, as known
/// answers.
@Suite struct ValidateReportTests {
    let pass = CriterionResult(name: "maxDropped", passed: true, detail: "0 ≤ 2")
    let fail = CriterionResult(name: "maxJitter", passed: false, detail: "0.9 ms > 0.5 ms")

    @Test func theVerdictsLinesSayEachCriterionAndWhatWasJudged() {
        let v = ValidationVerdict([pass, fail], backend: "fake")
        #expect(v.lines == ["PASS maxDropped: 0 ≤ 2", "FAIL maxJitter: 0.9 ms > 0.5 ms"])
        #expect(v.failureLines == ["FAIL maxJitter: 0.9 ms > 0.5 ms"])
        #expect(v.verdictLine == "validate: FAIL (1 of 2 criteria) on the fake display (a simulator, not a real panel)")
        #expect(ValidationVerdict([pass], backend: "kms").verdictLine == "validate: PASS (1 criteria)")
        #expect(
            ValidationVerdict([pass], backend: "fake-drm").verdictLine
                == "validate: PASS (1 criteria) on the fake DRM device (a simulator running the KMS code, not a real panel)"
        )
    }

    @Test func theJudgedLinesOfAWholeRunAndOfNothingJudged() {
        let whole = OutputJudge(criteria: ValidationCriteria()).judge(
            RunSummary(
                accounting: FrameAccounting(), backend: "kms", refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1,
                end: .completed),
            frames: [], hardwareVBlank: true, measuredRefreshHz: nil, largestDropEvent: 0)
        #expect(whole.note(warmupSeconds: nil, windowSeconds: nil) == nil)
        #expect(OutputJudge.Judged.line("120 frames") == "judged            120 frames")
        #expect(
            OutputJudge.Judged.nothingToJudgeLine(warmupSeconds: 2.5)
                == "no frames after the 2.5 s warm-up: nothing to judge")
    }

    @Test func badJudgingOptionsAreOneLineNamingTheOption() {
        func line(
            maxFrozen: Double? = nil, mismatches: Int? = nil, observe: Bool = false, verify: String? = nil,
            duration: Double? = nil, warmup: Double? = nil, window: Double? = nil
        ) -> String? {
            var c = ValidationCriteria()
            c.maxDropped = 0
            do {
                try c.check(
                    maxFrozen: maxFrozen, maxScanoutMismatches: mismatches, observe: observe, verify: verify,
                    durationSeconds: duration, warmupSeconds: warmup, windowSeconds: window)
                return nil
            } catch {
                return String(describing: error)
            }
        }
        #expect(line() == nil)
        #expect(line(maxFrozen: 1) == "--max-frozen needs --observe --verify crc")
        #expect(line(maxFrozen: 1, observe: true, verify: "crc") == nil)
        #expect(line(mismatches: 0, verify: "writeback") == "--max-scanout-mismatches needs --verify crc")
        #expect(line(mismatches: 0, verify: "crc,writeback") == nil)
        #expect(
            line(mismatches: 0, observe: true)
                == "--max-scanout-mismatches judges Cadence's own frames; with --observe use --max-frozen")
        #expect(
            line(duration: 0)
                == "--duration 0 (until stopped) is for run and observe: validate judges a window, give seconds > 0")
        #expect(line(warmup: -1) == "--warmup must be seconds ≥ 0")
        #expect(line(window: 0) == "--window must be seconds > 0")
        #expect(
            line(duration: 10, warmup: 5, window: 10) == "--window 10 s is longer than the 5 s judged after the warm-up"
        )
        #expect(line(duration: 15, warmup: 5, window: 10) == nil)
    }

    @Test func somethingMustBeJudged() throws {
        let none = ValidationCriteria()
        #expect(
            throws: ValidationCriteria.Invalid(
                "give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate, --expect-monitor, --expect-serial, --expect-mode)"
            )
        ) { try none.requireJudging(severalOutputs: false, panelExpected: false, scanoutLimit: false) }
        try none.requireJudging(severalOutputs: false, panelExpected: true, scanoutLimit: false)
        try none.requireJudging(severalOutputs: false, panelExpected: false, scanoutLimit: true)
        #expect(
            throws: ValidationCriteria.Invalid(
                "give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate)"
            )
        ) { try none.requireJudging(severalOutputs: true, panelExpected: false, scanoutLimit: true) }
        var some = ValidationCriteria()
        some.minRateHz = 59.5
        #expect(
            throws: ValidationCriteria.Invalid(
                "--expect-monitor/--expect-serial/--expect-mode are not supported with several outputs yet: validate one --connector at a time"
            )
        ) { try some.requireJudging(severalOutputs: true, panelExpected: true, scanoutLimit: false) }
        try some.requireJudging(severalOutputs: true, panelExpected: false, scanoutLimit: false)
    }

    @Test func theExpectedModeOptionIsOneLineWhenBad() throws {
        #expect(throws: ValidationCriteria.Invalid("--expect-mode '1920' must be WxH or WxH@HZ (e.g. 1920x1080@60)")) {
            try ExpectedMode(option: "1920")
        }
        #expect(
            throws: ValidationCriteria.Invalid(
                "--expect-mode '1920x1080@fast': the refresh after @ must be a number of Hz")
        ) { try ExpectedMode(option: "1920x1080@fast") }
        _ = try ExpectedMode(option: "1920x1080@59.94")
    }
}
