import CadenceCore
import CadenceReport

/// `cadence validate`'s judgement of several outputs at once, assembled: each output's summary
/// and criteria in the order added, the verdict over all of them (each criterion named after its
/// output), one JUnit suite per output, and the total.
///
///     var v = OutputsValidation()
///     v.add(name: "DP-1", summary: dp, results: dpJudged)
///     v.add(name: "eDP-1", summary: edp, results: edpJudged)
///     if !v.verdict.passed { ... }
public struct OutputsValidation {
    /// One output judged.
    public struct Output {
        /// Its name (`DP-1`, or `card1-DP-1` with several cards).
        public var name: String
        /// Its run's summary.
        public var summary: RunSummary
        /// Its criteria's results.
        public var results: [CriterionResult]
    }

    /// The outputs judged, in the order added.
    public private(set) var outputs: [Output] = []

    /// No output judged yet.
    public init() {}

    /// Adds the output `name`, whose run is `summary` and whose criteria gave `results`.
    public mutating func add(name: String, summary: RunSummary, results: [CriterionResult]) {
        outputs.append(Output(name: name, summary: summary, results: results))
    }

    /// The backend the outputs ran on (the first output's; "" before any).
    public var backend: String { outputs.first?.summary.backend ?? "" }

    /// The verdict over every output's criteria, each named after its output (`DP-1 maxDropped`).
    public var verdict: ValidationVerdict {
        ValidationVerdict(outputs: outputs.map { ($0.name, $0.results) }, backend: backend)
    }

    /// One JUnit suite per output (`cadence.validate.NAME`), each with its own summary.
    public var suites: [JUnitReport.Suite] {
        outputs.map { JUnitReport.Suite(name: "cadence.validate.\($0.name)", results: $0.results, summary: $0.summary) }
    }

    /// The JUnit report: ``suites``, the whole taking `seconds`.
    public func junitXML(seconds: Double) -> String { JUnitReport.xml(suites: suites, seconds: seconds) }

    /// The summary the verdict's exit status reads: the first output's, with every output's
    /// incomplete outputs (nil when none is).
    public var summary: RunSummary? {
        guard var s = outputs.first?.summary else { return nil }
        let incomplete = outputs.flatMap { $0.summary.incompleteOutputs ?? [] }
        s.incompleteOutputs = incomplete.isEmpty ? nil : incomplete
        return s
    }

    /// The total of the JSON report: the counts added up (`RunSummary.total(_:)`), how many
    /// criteria were judged and failed, whether all passed, and the display judged.
    public var total: [String: Any] {
        let v = verdict
        var t: [String: Any] = RunSummary.total(outputs.map(\.summary))
        t["criteria"] = v.results.count
        t["failedCriteria"] = v.failed.count
        t["passed"] = v.passed
        t["display"] = JUnitReport.displayName(backend)
        return t
    }
}

extension RunSummary {
    /// The counts of several outputs' summaries added up, by their JSON names, with `outputs`
    /// (how many).
    public static func total(_ s: [RunSummary]) -> [String: Int] {
        [
            "outputs": s.count, "frames": s.reduce(0) { $0 + $1.frames },
            "presented": s.reduce(0) { $0 + $1.presented },
            "onTime": s.reduce(0) { $0 + $1.onTime }, "late": s.reduce(0) { $0 + $1.late },
            "discarded": s.reduce(0) { $0 + $1.discarded }, "failed": s.reduce(0) { $0 + $1.failed },
            "droppedRefreshes": s.reduce(0) { $0 + $1.droppedRefreshes },
            "dropEvents": s.reduce(0) { $0 + $1.dropEvents }
        ]
    }
}
