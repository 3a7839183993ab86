import CadenceCore
import CadenceReport

/// `cadence validate`'s verdict: every criterion judged, of one output or of several (each
/// criterion then named after its output), and what was judged, a panel or a simulator.
///
///     let verdict = ValidationVerdict(outputs: [("DP-1", dp), ("eDP-1", edp)], backend: "kms")
///     if !verdict.passed { for c in verdict.failed { print("FAIL \(c.name): \(c.detail)") } }
public struct ValidationVerdict {
    /// What the judged run ran on.
    public enum Display: Equatable, Sendable {
        /// A real panel (Cadence's own frames, or another program's flips observed).
        case panel
        /// The fake display (a simulator).
        case fakeDisplay
        /// A fake DRM device (a simulator running the KMS code).
        case fakeDRM

        /// The display of a run whose summary names `backend` (`RunSummary.backend`).
        public init(backend: String) {
            if backend == "fake" {
                self = .fakeDisplay
            } else if JUnitReport.isSimulator(backend) {
                self = .fakeDRM
            } else {
                self = .panel
            }
        }
    }

    /// Every criterion's result, in the order judged.
    public var results: [CriterionResult]
    /// What the run ran on.
    public var display: Display
    /// The criteria that failed.
    public var failed: [CriterionResult] { results.filter { !$0.passed } }
    /// True when no criterion failed.
    public var passed: Bool { failed.isEmpty }

    /// The verdict over `results`, of a run on `backend`.
    public init(_ results: [CriterionResult], backend: String) {
        self.results = results
        display = Display(backend: backend)
    }

    /// The verdict over several outputs' results, in order, each criterion named after its
    /// output (`DP-1 maxDropped`), of a run on `backend`.
    public init(outputs: [(name: String, results: [CriterionResult])], backend: String) {
        var all: [CriterionResult] = []
        for (name, results) in outputs {
            for var c in results {
                c.name = "\(name) \(c.name)"
                all.append(c)
            }
        }
        self.init(all, backend: backend)
    }
}
