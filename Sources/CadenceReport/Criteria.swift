import CadenceCore
import Foundation

/// Pass/fail thresholds for `cadence validate`. Unset thresholds are not checked.
public struct ValidationCriteria: Equatable, Sendable {
    /// Most dropped refreshes allowed (`--max-dropped`).
    public var maxDropped: Int?
    /// Most drop events allowed (`--max-drop-events`).
    public var maxDropEvents: Int?
    /// Largest single drop event allowed, in refreshes (`--max-drop-event`).
    public var maxDropEvent: Int?
    /// Largest deviation of the measured refresh from the nominal one, in percent (`--refresh-tolerance`).
    public var refreshTolerancePercent: Double?
    /// Largest deviation of the p99 frame interval from the nominal interval, ms (`--max-jitter`).
    public var maxJitterMs: Double?
    /// Lowest measured frame rate allowed, Hz (`--min-rate`).
    public var minRateHz: Double?

    /// Why criteria are unusable.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// The thresholds given, each as its property describes; one not given (nil) is not
    /// checked, so nothing given checks nothing. Nothing is validated until ``validate()``.
    public init(
        maxDropped: Int? = nil, maxDropEvents: Int? = nil, maxDropEvent: Int? = nil,
        refreshTolerancePercent: Double? = nil, maxJitterMs: Double? = nil, minRateHz: Double? = nil
    ) {
        self.maxDropped = maxDropped
        self.maxDropEvents = maxDropEvents
        self.maxDropEvent = maxDropEvent
        self.refreshTolerancePercent = refreshTolerancePercent
        self.maxJitterMs = maxJitterMs
        self.minRateHz = minRateHz
    }

    /// Throws for negative or non-finite thresholds.
    public func validate() throws {
        if let v = maxDropped, v < 0 { throw Invalid("--max-dropped must be ≥ 0") }
        if let v = maxDropEvents, v < 0 { throw Invalid("--max-drop-events must be ≥ 0") }
        if let v = maxDropEvent, v < 0 { throw Invalid("--max-drop-event must be ≥ 0 refreshes") }
        if let v = refreshTolerancePercent, !(v.isFinite && v >= 0) { throw Invalid("--refresh-tolerance must be a percentage ≥ 0") }
        if let v = maxJitterMs, !(v.isFinite && v >= 0) { throw Invalid("--max-jitter must be milliseconds ≥ 0") }
        if let v = minRateHz, !(v.isFinite && v >= 0) { throw Invalid("--min-rate must be a rate in Hz ≥ 0") }
    }

    /// True when no threshold is set.
    public var isEmpty: Bool {
        maxDropped == nil && maxDropEvents == nil && maxDropEvent == nil && refreshTolerancePercent == nil
            && maxJitterMs == nil && minRateHz == nil
    }

    /// Checks `summary` against every set threshold, in a fixed order.
    ///
    /// - refresh: measured = the kernel's vblank rate (`measuredRefreshHz`, from flip timestamps
    ///   and sequences), against the nominal `summary.refreshHz`; under VRR against the refresh
    ///   the run requested (``expectedRefreshHz(_:)``), not the range's maximum.
    /// - jitter: |p99 interval − nominal frame interval| where nominal = 1000 / effective rate.
    /// - rate: `summary.measuredRateHz` (shown frames per second of presentation).
    /// - largest drop event: the most refreshes dropped before one shown frame
    ///   (`largestDropEvent`; the criterion fails as unmeasured when it is nil).
    ///
    /// Each result's ``CriterionResult/value`` is the measured quantity, worse when larger
    /// (except `min-rate`, worse when smaller).
    public func evaluate(_ s: RunSummary, measuredRefreshHz: Double?, largestDropEvent: Int? = nil) -> [CriterionResult] {
        var out: [CriterionResult] = []
        let f3 = { (v: Double) in String(format: "%.3f", v) }
        if let m = maxDropped {
            out.append(CriterionResult(name: "max-dropped", passed: s.droppedRefreshes <= m,
                                       detail: "dropped refreshes \(s.droppedRefreshes) (limit \(m))", value: Double(s.droppedRefreshes)))
        }
        if let m = maxDropEvents {
            out.append(CriterionResult(name: "max-drop-events", passed: s.dropEvents <= m,
                                       detail: "drop events \(s.dropEvents) (limit \(m))", value: Double(s.dropEvents)))
        }
        if let m = maxDropEvent {
            if let e = largestDropEvent {
                out.append(CriterionResult(name: "max-drop-event", passed: e <= m,
                                           detail: "largest drop event \(e) refreshes (limit \(m))", value: Double(e)))
            } else {
                out.append(CriterionResult(name: "max-drop-event", passed: false,
                                           detail: "the largest drop event was not measured", value: .infinity))
            }
        }
        if let tol = refreshTolerancePercent {
            let nominal = Self.expectedRefreshHz(s)
            if let hz = measuredRefreshHz, hz > 0, nominal > 0 {
                let dev = abs(hz - nominal) / nominal * 100
                let against = s.vrrRangeHz.map { r in "\(f3(nominal)) Hz requested (VRR \(f3(r.first ?? 0))–\(f3(r.last ?? 0)) Hz)" }
                    ?? "\(f3(nominal)) Hz nominal"
                out.append(CriterionResult(name: "refresh-tolerance", passed: dev <= tol,
                                           detail: "refresh \(f3(hz)) Hz measured vs \(against), off by \(f3(dev))% (limit \(f3(tol))%)",
                                           value: dev))
            } else {
                out.append(CriterionResult(name: "refresh-tolerance", passed: false,
                                           detail: "refresh could not be measured (no hardware vblank timestamps, or fewer than two)",
                                           value: .infinity))
            }
        }
        if let mj = maxJitterMs {
            if s.intervalMs.count > 0 && s.effectiveRateHz > 0 {
                let nominal = 1000 / s.effectiveRateHz
                let dev = abs(s.intervalMs.p99 - nominal)
                out.append(CriterionResult(name: "max-jitter", passed: dev <= mj,
                                           detail: "p99 interval \(f3(s.intervalMs.p99)) ms vs \(f3(nominal)) ms nominal, off by \(f3(dev)) ms (limit \(f3(mj)) ms)",
                                           value: dev))
            } else {
                out.append(CriterionResult(name: "max-jitter", passed: false, detail: "no frame intervals were measured", value: .infinity))
            }
        }
        if let mr = minRateHz {
            out.append(CriterionResult(name: "min-rate", passed: s.measuredRateHz >= mr,
                                       detail: "rate \(f3(s.measuredRateHz)) Hz measured (minimum \(f3(mr)) Hz)", value: s.measuredRateHz))
        }
        return out
    }
}

extension ValidationCriteria {
    /// The refresh `--refresh-tolerance` judges against: the mode's refresh at a fixed refresh;
    /// under VRR, where each flip starts a refresh, the refresh the run asked the panel for — its
    /// effective rate, or below the range's minimum that rate times k, the fewest repeats that
    /// keep each refresh inside the range (low-framerate compensation: 30 Hz on 48–144 Hz is a
    /// refresh every 1/60 s), as the pacing core shows it.
    public static func expectedRefreshHz(_ s: RunSummary) -> Double {
        guard let r = s.vrrRangeHz, r.count == 2, r[0] > 0, s.effectiveRateHz > 0 else { return s.refreshHz }
        let rate = Swift.min(s.effectiveRateHz, r[1])
        // 0.1% of slack, as the displays: a rate at exactly the minimum needs no repeat.
        guard rate * 1.001 < r[0] else { return rate }
        let k = (r[0] / rate).rounded(.up)
        return rate * k <= r[1] ? rate * k : rate
    }
}

/// One checked criterion.
public struct CriterionResult: Equatable, Sendable {
    public var name: String
    public var passed: Bool
    /// What was measured against what limit, one line.
    public var detail: String
    /// The measured quantity (dropped refreshes, drop events, refreshes, % off, ms off, Hz);
    /// +∞ when it could not be measured. Used to find the worst window.
    public var value: Double
    public init(name: String, passed: Bool, detail: String, value: Double = 0) {
        self.name = name
        self.passed = passed
        self.detail = detail
        self.value = value
    }

    /// True when `self` is a worse outcome than `other` of the same criterion: a failure is
    /// worse than a pass, then a larger value (a smaller one for `min-rate`).
    public func isWorse(than other: CriterionResult) -> Bool {
        if passed != other.passed { return !passed }
        if name == "min-rate" { return value < other.value }
        return value > other.value
    }

    /// The failed criterion a run's end adds when the display failed under it: "device" (the
    /// device was lost) or "output" (the output was unplugged); nil for any other end.
    public static func display(_ end: RunEnd) -> CriterionResult? {
        switch end {
        case .deviceLost:
            return CriterionResult(name: "device", passed: false, detail: "the device was lost mid-run (\(end.reason))")
        case .disconnected:
            let detail = "the output was unplugged mid-run (\(end.reason))"
            return CriterionResult(name: "output", passed: false, detail: detail)
        case .completed, .stopped, .rotated, .unfinished, .other: return nil
        }
    }
}

/// JUnit XML for CI systems: one test suite "cadence.validate" (one per output when a run drives
/// several: "cadence.validate.DP-1"), one test case per criterion,
/// a `<failure>` for each failed one, and the summary in `<system-out>`. The suite's `display`
/// property says what was judged: "kms", "fake display (simulator)" or "fake DRM device
/// (simulator: …)".
public enum JUnitReport {
    /// How a summary's backend is named to people: the simulators (the fake display; the KMS
    /// code over the fake DRM device, "fake-drm" on virtual time, "fake-drm-wall" on the wall
    /// clock) are never mistaken for a panel.
    public static func displayName(_ backend: String) -> String {
        switch backend {
        case "fake": return "fake display (simulator)"
        case "fake-drm": return "fake DRM device (simulator: KMS code, virtual time)"
        case "fake-drm-wall": return "fake DRM device (simulator: KMS code, wall time)"
        default: return backend
        }
    }

    /// True when `backend` is a simulator, not a display.
    public static func isSimulator(_ backend: String) -> Bool {
        backend == "fake" || backend == "fake-drm" || backend == "fake-drm-wall"
    }

    /// One output's suite: `results` judged on the run `summary` describes.
    public struct Suite: Sendable {
        public var name: String
        public var results: [CriterionResult]
        public var summary: RunSummary
        public init(name: String, results: [CriterionResult], summary: RunSummary) {
            self.name = name
            self.results = results
            self.summary = summary
        }
    }

    /// The report of one run: one suite, `suiteName`.
    public static func xml(_ results: [CriterionResult], summary: RunSummary, seconds: Double, suiteName: String = "cadence.validate") -> String {
        xml(suites: [Suite(name: suiteName, results: results, summary: summary)], seconds: seconds)
    }

    /// The report of a run over several outputs: one suite per output (`cadence.validate.DP-1`),
    /// each with its criteria, its `display` property and its summary.
    public static func xml(suites: [Suite], seconds: Double) -> String {
        let tests = suites.reduce(0) { $0 + $1.results.count }
        let failures = suites.reduce(0) { $0 + $1.results.filter { !$0.passed }.count }
        let f3 = { (v: Double) in String(format: "%.3f", v) }
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<testsuites tests=\"\(tests)\" failures=\"\(failures)\" time=\"\(f3(seconds))\">\n"
        for suite in suites {
            let summary = suite.summary, suiteName = suite.name
            let failed = suite.results.filter { !$0.passed }.count
            s += "  <testsuite name=\"\(escape(suiteName))\" tests=\"\(suite.results.count)\" failures=\"\(failed)\" errors=\"0\" time=\"\(f3(seconds))\">\n"
            s += "    <properties><property name=\"display\" value=\"\(escape(displayName(summary.backend)))\"/></properties>\n"
            for r in suite.results {
                s += "    <testcase classname=\"\(escape(suiteName))\" name=\"\(escape(r.name))\""
                if r.passed {
                    s += ">\n      <system-out>\(escape(r.detail))</system-out>\n    </testcase>\n"
                } else {
                    s += ">\n      <failure message=\"\(escape(r.detail))\" type=\"threshold\">\(escape(r.detail))</failure>\n    </testcase>\n"
                }
            }
            let line = "backend \(displayName(summary.backend)), refresh \(f3(summary.refreshHz)) Hz, effective \(f3(summary.effectiveRateHz)) Hz, frames \(summary.frames), presented \(summary.presented), dropped refreshes \(summary.droppedRefreshes) in \(summary.dropEvents) events, hitch \(f3(summary.hitchTimeRatio)) ms/s"
            s += "    <system-out>\(escape(line))</system-out>\n"
            s += "  </testsuite>\n"
        }
        s += "</testsuites>\n"
        return s
    }

    /// XML-escapes text for attributes and content.
    public static func escape(_ t: String) -> String {
        var o = ""
        for c in t {
            switch c {
            case "&": o += "&amp;"
            case "<": o += "&lt;"
            case ">": o += "&gt;"
            case "\"": o += "&quot;"
            case "'": o += "&apos;"
            default: o.append(c)
            }
        }
        return o
    }
}

extension LogAnalysis {
    /// The CRTC's measured refresh from the frames' kernel timestamps and sequences (nil with
    /// fewer than two distinct vblanks, or without hardware vblank sequences).
    public static func measuredRefreshHz(_ records: [FrameRecord]) -> Double? {
        RefreshFit(records.lazy.filter { $0.flipNs > 0 && $0.sequence > 0 }.map { ($0.sequence, $0.flipNs) }).hz
    }
}
