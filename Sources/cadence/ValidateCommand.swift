import ArgumentParser
import CadenceCore
import CadenceReport
import Foundation

/// `cadence validate`: a `cadence run` with pass/fail thresholds, for kiosks and CI.
/// Exit 0 pass, 1 fail (one line per failed criterion on stderr), 2 usage or device error.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Run, then pass or fail the display against thresholds (exit 0 pass, 1 fail, 2 error).",
        discussion: """
            Takes every option of `cadence run` plus the thresholds below; at least one threshold
            is required. Prints the run summary and one PASS/FAIL line per criterion on stdout,
            and one line per failed criterion on stderr.

            How each criterion is measured:
              --max-dropped       dropped refreshes (stale refreshes while a new frame was due)
              --max-drop-events   drop events (shown frames that followed stale refreshes)
              --refresh-tolerance |measured − nominal| / nominal refresh, in %; measured from the
                                  kernel timestamps and sequences of the shown frames
              --max-jitter        |p99 frame interval − 1/effective rate|, in ms
              --min-rate          shown frames per second of presentation, in Hz

            Examples:
              cadence validate --duration 30 --max-dropped 0 --refresh-tolerance 0.5
              cadence validate --backend fake --frames 600 --inject-late 100:1 --max-dropped 0 --junit out.xml
              cadence validate --rate 30:30:30 --min-rate 29.5 --max-jitter 1
            """)

    @OptionGroup var options: RunCommand

    @Option(name: .customLong("max-dropped"), parsing: .unconditional, help: "Fail when more refreshes than N were dropped.")
    var maxDropped: Int?
    @Option(name: .customLong("max-drop-events"), parsing: .unconditional, help: "Fail when there were more than N drop events.")
    var maxDropEvents: Int?
    @Option(name: .customLong("refresh-tolerance"), parsing: .unconditional, help: "Fail when the measured refresh is more than PCT % off the nominal one.")
    var refreshTolerance: Double?
    @Option(name: .customLong("max-jitter"), parsing: .unconditional, help: "Fail when the p99 frame interval is more than MS off the nominal frame interval.")
    var maxJitter: Double?
    @Option(name: .customLong("min-rate"), parsing: .unconditional, help: "Fail when fewer than HZ frames per second were shown.")
    var minRate: Double?
    @Option(help: "Write the verdict as JUnit XML to FILE (one test case per criterion).")
    var junit: String?

    func run() throws {
        var criteria = ValidationCriteria()
        criteria.maxDropped = maxDropped
        criteria.maxDropEvents = maxDropEvents
        criteria.refreshTolerancePercent = refreshTolerance
        criteria.maxJitterMs = maxJitter
        criteria.minRateHz = minRate
        let junitFile: LineFile?
        var outputs: RunOutputs? = nil
        let summary: RunSummary
        let started = Date()
        do {
            try criteria.validate()
            if criteria.isEmpty {
                throw ValidationCriteria.Invalid("give at least one threshold (--max-dropped, --max-drop-events, --refresh-tolerance, --max-jitter, --min-rate)")
            }
            junitFile = try junit.map { try LineFile(path: $0) }
            do {
                summary = try options.pace(onRun: { _, out in outputs = out })
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
        try options.printSummary(summary)
        if summary.endReason.hasPrefix("device-lost") {
            junitFile?.discard()
            StandardStreams.errorLine("cadence validate: \(summary.endReason)")
            throw ExitCode(2)
        }
        let results = criteria.evaluate(summary, measuredRefreshHz: outputs?.measuredRefreshHz)
        for r in results { print("\(r.passed ? "PASS" : "FAIL") \(r.name): \(r.detail)") }
        let failed = results.filter { !$0.passed }
        for r in failed { StandardStreams.errorLine("FAIL \(r.name): \(r.detail)") }
        if let f = junitFile {
            do {
                try f.write(line: JUnitReport.xml(results, summary: summary, seconds: Date().timeIntervalSince(started)))
                f.close()
            } catch {
                StandardStreams.errorLine("cadence validate: \(String(describing: error))")
                throw ExitCode(2)
            }
        }
        print(failed.isEmpty ? "validate: PASS (\(results.count) criteria)" : "validate: FAIL (\(failed.count) of \(results.count) criteria)")
        if !failed.isEmpty { throw ExitCode(1) }
        if let code = StandardStreams.incompleteOutputStatus(summary.incompleteOutputs) { throw ExitCode(code) }
    }
}
