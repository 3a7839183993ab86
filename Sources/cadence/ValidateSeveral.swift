import ArgumentParser
import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import Foundation
import KMSDisplay

/// `cadence validate --connector A --connector B` (or `--connector all`): every output runs at
/// once (as `run` does) and is judged on its own with the same thresholds; each PASS/FAIL line
/// names its output, and the verdict fails when any output fails.
extension ValidateCommand {
    /// True when the options ask for several outputs.
    var severalOutputs: Bool { options.connectors.count > 1 || options.connectors == ["all"] }

    func executeSeveral(source: DeviceSource?) throws {
        let judging: OutputJudge
        let results: [RunCommand.OutputResult]
        var tallies: [(tally: FrameTally, files: SessionSinks)] = []
        let started = Date()
        let junitFile: LineFile?
        do {
            judging = outputJudge(try self.criteria())
            if !expect.isEmpty {
                throw CLIFailure("--expect-monitor/--expect-serial/--expect-mode are not supported with several outputs yet: validate one --connector at a time")
            }
            if judging.criteria.isEmpty {
                throw ValidationCriteria.Invalid("give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate)")
            }
            junitFile = try junit.map { try LineFile(path: $0) }
            do {
                results = try options.paceSeveral(source: source, command: "validate") { _, _, out in
                    let t = judging.makeTally()
                    out.add(t)
                    tallies.append((t, out))
                }
            } catch {
                junitFile?.discard()
                throw error
            }
        } catch let e as ExitCode {
            throw e
        } catch {
            StandardStreams.errorLine("cadence validate: \(String(describing: error))")
            throw ExitCode(2)
        }
        var judgedOutputs = OutputsValidation()
        // --json: one object, each output's summary with its criteria, and the total.
        let json = options.json
        var objects = json ? try RunCommand.outputObjects(results) : []
        for (i, (r, t)) in zip(results, tallies).enumerated() {
            if !json {
                if i > 0 { print("") }
                print("output            \(RunCommand.outputLine(r.display, name: r.name))")
                try options.printSummary(r.summary)
            }
            var note: String? = nil
            let judged = try judge(judging, summary: r.summary, tally: t.tally, sinks: t.files, junitFile: nil,
                                   note: { detail in if json { note = detail } else { print(Self.judgedLine(detail)) } })
            if json {
                objects[i]["criteria"] = judged.map { ["name": $0.name, "passed": $0.passed, "detail": $0.detail] as [String: Any] }
                objects[i]["passed"] = judged.allSatisfy(\.passed)
                if let n = note { objects[i]["judged"] = n }
            }
            judgedOutputs.add(name: r.name, summary: r.summary, results: judged)
        }
        if json {
            let doc: [String: Any] = ["outputs": objects, "total": judgedOutputs.total]
            print(String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self))
        } else {
            print("")
        }
        if let f = junitFile {
            // One suite per output, each with its own summary.
            do {
                try f.write(line: judgedOutputs.junitXML(seconds: Date().timeIntervalSince(started)))
                f.close()
            } catch {
                StandardStreams.errorLine("cadence validate: \(String(describing: error))")
                throw ExitCode(2)
            }
        }
        try verdict(judgedOutputs.verdict.results, summary: judgedOutputs.summary ?? results[0].summary, junitFile: nil,
                    started: started, printLines: !json)
    }
}
