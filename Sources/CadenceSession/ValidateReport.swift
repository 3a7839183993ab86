import CadenceCore
import CadenceReport
import Foundation

extension ValidationVerdict {
    /// One line per criterion, in order: `PASS NAME: DETAIL` or `FAIL NAME: DETAIL`.
    public var lines: [String] { results.map { "\($0.passed ? "PASS" : "FAIL") \($0.name): \($0.detail)" } }

    /// One line per failed criterion (`FAIL NAME: DETAIL`), for stderr.
    public var failureLines: [String] { failed.map { "FAIL \($0.name): \($0.detail)" } }

    /// The verdict line: `validate: PASS (N criteria)` or `validate: FAIL (F of N criteria)`,
    /// saying when what was judged is a simulator.
    public var verdictLine: String {
        let on: String
        switch display {
        case .fakeDisplay: on = " on the fake display (a simulator, not a real panel)"
        case .fakeDRM: on = " on the fake DRM device (a simulator running the KMS code, not a real panel)"
        case .panel: on = ""
        }
        return passed
            ? "validate: PASS (\(results.count) criteria)\(on)"
            : "validate: FAIL (\(failed.count) of \(results.count) criteria)\(on)"
    }
}

extension OutputJudge.Judged {
    /// What was judged with a warm-up or windows, for the "judged" line: the frames judged, the
    /// frames the warm-up of `warmupSeconds` ignored, the windows of `windowSeconds` and what is
    /// judged only overall. Nil when the whole run was judged.
    public func note(warmupSeconds: Double?, windowSeconds: Double?) -> String? {
        guard let split else { return nil }
        var note = "\(split.judgedFrames) frames"
        if let w = warmupSeconds {
            note += " after a \(String(format: "%g", w)) s warm-up (\(split.warmupFrames) ignored)"
        }
        if let w = windowSeconds {
            let rest = String(format: "%.1f", split.remainderSeconds)
            if split.windows.isEmpty {
                // Shorter than one window: judged only overall, as any last part shorter than one.
                note += ", no whole \(String(format: "%g", w)) s window (the \(rest) s judged only overall)"
            } else {
                note += ", \(split.windows.count) windows of \(String(format: "%g", w)) s"
                if split.remainderSeconds > 0 { note += " (the last \(rest) s only overall)" }
            }
        }
        return note
    }

    /// The line when no frame was shown after the warm-up of `warmupSeconds`: nothing was
    /// judged (a usage error).
    public static func nothingToJudgeLine(warmupSeconds: Double?) -> String {
        "no frames after the \(String(format: "%g", warmupSeconds ?? 0)) s warm-up: nothing to judge"
    }

    /// The "judged" line of `note`.
    public static func line(_ note: String) -> String { "judged            " + note }
}

extension OutputsValidation {
    /// `validate --json` over several outputs: one object `{"outputs": […], "total": {…}}`,
    /// each output's run object (`RunReport.Output.jsonObject()`, `runs` in the order added)
    /// with its `criteria`, whether it `passed`, and its "judged" note (`notes`, nil: none);
    /// keys sorted.
    public func json(runs: [RunReport.Output], notes: [String?]) throws -> String {
        var objects = try runs.map { try $0.jsonObject() }
        for (i, o) in outputs.enumerated() where i < objects.count {
            objects[i]["criteria"] = o.results.map {
                ["name": $0.name, "passed": $0.passed, "detail": $0.detail] as [String: Any]
            }
            objects[i]["passed"] = o.results.allSatisfy(\.passed)
            if i < notes.count, let n = notes[i] { objects[i]["judged"] = n }
        }
        let doc: [String: Any] = ["outputs": objects, "total": total]
        return String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self)
    }
}

extension ValidationCriteria {
    /// Checks the thresholds and `validate`'s other judging options as given, in the order a
    /// bad one is reported: the thresholds, `--max-frozen` (`maxFrozen`, with `observe` and
    /// `verify` "crc"), `--max-scanout-mismatches` (`maxScanoutMismatches`, without `observe`,
    /// with `verify` including crc), `--duration` (`durationSeconds`, not 0), `--warmup` and
    /// `--window` (each in seconds, the window no longer than the duration after the warm-up).
    /// Throws one line (`ValidationCriteria.Invalid`).
    public func check(
        maxFrozen: Double?, maxScanoutMismatches: Int?, observe: Bool, verify: String?, durationSeconds: Double?,
        warmupSeconds: Double?, windowSeconds: Double?
    ) throws {
        try validate()
        if let f = maxFrozen {
            guard f.isFinite, f >= 0 else { throw Invalid("--max-frozen must be seconds ≥ 0") }
            guard observe, verify == "crc" else { throw Invalid("--max-frozen needs --observe --verify crc") }
        }
        if let m = maxScanoutMismatches {
            guard !observe else {
                throw Invalid("--max-scanout-mismatches judges Cadence's own frames; with --observe use --max-frozen")
            }
            guard m >= 0 else { throw Invalid("--max-scanout-mismatches must be ≥ 0") }
            guard verify?.split(separator: ",").contains("crc") == true else {
                throw Invalid("--max-scanout-mismatches needs --verify crc")
            }
        }
        if durationSeconds == 0 {
            throw Invalid(
                "--duration 0 (until stopped) is for run and observe: validate judges a window, give seconds > 0")
        }
        let warmup = warmupSeconds ?? 0
        if let w = warmupSeconds, !(w.isFinite && w >= 0 && w <= 86_400) {
            throw Invalid("--warmup must be seconds ≥ 0")
        }
        if let w = windowSeconds, !(w.isFinite && w > 0 && w <= 86_400) {
            throw Invalid("--window must be seconds > 0")
        }
        if let w = windowSeconds, let d = durationSeconds, d - warmup < w {
            throw Invalid(
                "--window \(String(format: "%g", w)) s is longer than the \(String(format: "%g", max(0, d - warmup))) s judged after the warm-up"
            )
        }
    }
}

extension ExpectedMode {
    /// `--expect-mode`'s value: "WxH" or "WxH@HZ"; a `ValidationCriteria.Invalid` of one line
    /// naming the option when it is neither.
    public init(option text: String) throws {
        do {
            try self.init(text)
        } catch ExpectedMode.Invalid.shape {
            throw ValidationCriteria.Invalid("--expect-mode '\(text)' must be WxH or WxH@HZ (e.g. 1920x1080@60)")
        } catch {
            throw ValidationCriteria.Invalid("--expect-mode '\(text)': the refresh after @ must be a number of Hz")
        }
    }
}

extension ValidationCriteria {
    /// Throws one line when a validation would judge nothing: no threshold set, and for one
    /// output no panel expected (`panelExpected`: `--expect-*`) and no scanout limit
    /// (`scanoutLimit`: `--max-scanout-mismatches`). Several outputs (`severalOutputs`) cannot
    /// be checked against a panel yet: `panelExpected` is refused first.
    public func requireJudging(severalOutputs: Bool, panelExpected: Bool, scanoutLimit: Bool) throws {
        if severalOutputs {
            if panelExpected {
                throw Invalid(
                    "--expect-monitor/--expect-serial/--expect-mode are not supported with several outputs yet: validate one --connector at a time"
                )
            }
            if isEmpty {
                throw Invalid(
                    "give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate)"
                )
            }
        } else if isEmpty && !panelExpected && !scanoutLimit {
            throw Invalid(
                "give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate, --expect-monitor, --expect-serial, --expect-mode)"
            )
        }
    }
}
