import CadenceCore
import CadenceReport
import Foundation

/// What `cadence validate` prints, writes and exits with once its runs (or the flips it
/// observed) are judged: the lines for stdout and stderr before the JUnit file is written, the
/// JUnit XML, the lines after it, and the exit status. The CLI shows ``beforeJUnit``, writes
/// ``junitXML`` (or discards the file when ``discardsJUnit``), shows ``afterJUnit`` and exits
/// with ``status`` (3 when it is 0 and an output in ``incompleteOutputs`` is incomplete).
///
///     let outcome = try ValidationOutcome.judging(report, runs: runs, with: judge, json: false,
///                                                 expected: ExpectedPanel(), scanoutLimit: nil,
///                                                 started: started)
///     for line in outcome.beforeJUnit { show(line) }
public struct ValidationOutcome {
    /// One line of the outcome.
    public enum Line: Equatable, Sendable {
        /// A line for stdout.
        case output(String)
        /// A line for stderr.
        case error(String)
    }

    /// One output's run as the judge needs it: the tally and sinks it fed, and the panel it
    /// drove (read while its display was open).
    public struct RunOutput {
        /// The frames counted for the judge (`OutputJudge.makeTally()`).
        public var tally: FrameTally
        /// The output's sinks (the refresh measured from its shown frames).
        public var sinks: SessionSinks
        /// The panel driven (`DrivenPanel()` when no expectation reads it).
        public var panel: DrivenPanel

        /// One output's `tally`, `sinks` and `panel`.
        public init(tally: FrameTally, sinks: SessionSinks, panel: DrivenPanel) {
            self.tally = tally
            self.sinks = sinks
            self.panel = panel
        }
    }

    /// The lines to show before the JUnit file is written, in order.
    public var beforeJUnit: [Line] = []
    /// The JUnit report to write (nil: nothing judged).
    public var junitXML: String?
    /// True when nothing was judged and a JUnit file asked for is removed.
    public var discardsJUnit = false
    /// The lines to show after the JUnit file is written, in order.
    public var afterJUnit: [Line] = []
    /// 0 every criterion passed, 1 one failed, 2 nothing was left to judge.
    public var status: Int32 = 0
    /// The outputs of the judged run left incomplete (nil: none).
    public var incompleteOutputs: [String]?

    /// Nothing judged yet.
    public init() {}

    /// Adds `line` before the JUnit file until ``junitXML`` is set, after it then.
    public mutating func show(_ line: Line) {
        if junitXML == nil { beforeJUnit.append(line) } else { afterJUnit.append(line) }
    }

    /// The results of `judged` by `judge`, and its "judged" note (with a warm-up or windows;
    /// shown as its line when `showNote`). Nil results when no frame was left to judge: the
    /// line why is then shown, ``status`` is 2 and the JUnit file is discarded when
    /// `discardJUnit`.
    public mutating func take(
        _ judged: OutputJudge.Judged, by judge: OutputJudge, showNote: Bool = true, discardJUnit: Bool = true
    ) -> (results: [CriterionResult]?, note: String?) {
        guard let note = judged.note(warmupSeconds: judge.warmupSeconds, windowSeconds: judge.windowSeconds) else {
            return (judged.results, nil)
        }
        if showNote { show(.output(OutputJudge.Judged.line(note))) }
        guard !judged.nothingToJudge else {
            show(
                .error("cadence validate: " + OutputJudge.Judged.nothingToJudgeLine(warmupSeconds: judge.warmupSeconds))
            )
            status = 2
            discardsJUnit = discardJUnit
            return (nil, note)
        }
        return (judged.results, note)
    }

    /// Ends with the verdict over `results` of the run `summary`: one PASS/FAIL line per
    /// criterion (when `showLines`), the failed ones on stderr, `junitXML` (when given: the
    /// JUnit file is written after those lines), the verdict line (when `showLines`), and the
    /// exit status.
    public mutating func finish(
        _ results: [CriterionResult], summary: RunSummary, showLines: Bool = true, junitXML xml: String? = nil
    ) {
        let verdict = ValidationVerdict(results, backend: summary.backend)
        for line in showLines ? verdict.lines : [] { show(.output(line)) }
        for line in verdict.failureLines { show(.error(line)) }
        if let xml { junitXML = xml }
        if showLines { show(.output(verdict.verdictLine)) }
        status = verdict.passed ? 0 : 1
        incompleteOutputs = summary.incompleteOutputs
    }

    /// Ends with the verdict over `results` of one run, `summary`, started at `started`: as
    /// ``finish(_:summary:showLines:junitXML:)`` with its JUnit report (one suite).
    public mutating func finish(_ results: [CriterionResult], summary: RunSummary, started: Date) {
        finish(
            results, summary: summary,
            junitXML: JUnitReport.xml(results, summary: summary, seconds: Date().timeIntervalSince(started)))
    }

    /// `cadence validate`'s outcome over the outputs of `report`, each judged by `judge` with its
    /// `runs` entry (in the same order), started at `started`. Each output's summary is shown
    /// (JSON with `json`) and its "judged" line; one output is judged against the `expected`
    /// panel and, with `scanoutLimit`, its scanout mismatches too. Several outputs
    /// (``RunReport/several``) are judged each on its own, every criterion named after its output, one JUnit
    /// suite per output; with `json` one object is shown instead of the summaries and the
    /// PASS/FAIL lines.
    public static func judging(
        _ report: RunReport, runs: [RunOutput], with judge: OutputJudge, json: Bool,
        expected: ExpectedPanel, scanoutLimit: Int?, started: Date
    ) throws -> ValidationOutcome {
        let several = report.several
        var o = ValidationOutcome()
        let oneObject = several && json
        var judgedOutputs = OutputsValidation()
        var notes: [String?] = []
        for (i, (r, run)) in zip(report.outputs, runs).enumerated() {
            if !oneObject {
                if i > 0 { o.show(.output("")) }
                if several { o.show(.output(r.headerLine)) }
                o.show(.output(try RunReport.summary(r.summary, json: json)))
            }
            let taken = o.take(
                judge.judge(r.summary, tally: run.tally, sinks: run.sinks), by: judge, showNote: !oneObject,
                discardJUnit: !several)
            guard var results = taken.results else { return o }
            notes.append(oneObject ? taken.note : nil)
            if !several {
                results += expected.evaluate(run.panel)
                if let m = scanoutLimit {
                    results.append(CriterionResult.scanoutMismatches(r.summary.scanout, limit: m))
                }
                o.finish(results, summary: r.summary, started: started)
                return o
            }
            judgedOutputs.add(name: r.name, summary: r.summary, results: results)
        }
        o.show(.output(oneObject ? try judgedOutputs.json(runs: report.outputs, notes: notes) : ""))
        o.junitXML = judgedOutputs.junitXML(seconds: Date().timeIntervalSince(started))
        o.finish(
            judgedOutputs.verdict.results, summary: judgedOutputs.summary ?? report.outputs[0].summary,
            showLines: !oneObject)
        return o
    }
}

extension ObservedValidation {
    /// `cadence validate --observe`'s outcome over `result`, started at `started`: the client
    /// picked (`client`, else the one with the most flips; nothing flipped: the failed `flips`
    /// criterion), its summary (JSON with `json`), and its flips judged by `judge` (over
    /// `frames`, its mode read from `device`) with, given `maxFrozen`, the longest frozen
    /// picture on its CRTC.
    public static func outcome(
        _ result: ObserveResult, client: String?, judge: OutputJudge, frames: [String: [FrameReport]], device: String,
        maxFrozen: Double?, json: Bool, started: Date
    ) throws -> ValidationOutcome {
        var o = ValidationOutcome()
        switch pick(result, client: client) {
        case .noFlips(let none):
            o.show(.output("observed          \(String(format: "%.1f", result.durationSeconds)) s: \(none.reason)"))
            o.finish([none.criterion], summary: none.summary, started: started)
        case .picked(let picked):
            o.show(.output(result.pickNote(picked.client, command: client)))
            o.show(.output(try RunReport.summary(picked.summary, json: json)))
            guard
                var results = o.take(Self.judge(picked, with: judge, frames: frames, device: device), by: judge).results
            else { return o }
            if let f = maxFrozen { results.append(CriterionResult.frozen(picked.crtc, limit: f)) }
            o.finish(results, summary: picked.summary, started: started)
        }
        return o
    }
}
