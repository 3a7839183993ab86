import ArgumentParser
import CadenceCore
import CadenceMetrics
import CadenceReport
import CadenceSession
import Foundation

/// The output options of `cadence run` and `cadence validate` besides `--log` and `--json`.
struct RunOutputOptions: ParsableArguments {
    @Option(help: "Write the frames as PresentMon-style CSV to FILE (MsBetweenPresents, MsBetweenDisplayChange, MsUntilDisplayed, Dropped, Sequence, Cause, …).")
    var csv: String?
    @Option(help: "Write the summary as one JSON object to FILE.")
    var summary: String?
    @Flag(help: "No live status line on stderr.")
    var quiet = false
    @Option(name: .customLong("log-max-size"), help: "Rotate the --log file before it grows past SIZE (10M, 512K, 1G or bytes; at least 64K): FILE is the current file, FILE.1 the one before, …; each starts with the header and reads on its own.")
    var logMaxSize: String?
    @Option(name: .customLong("log-keep"), parsing: .unconditional, help: "With --log-max-size: keep N earlier files (FILE.1 … FILE.N; default 5, 0 = only the current one); older ones are deleted.")
    var logKeep: Int?
    @Option(name: .customLong("system-root"), help: ArgumentHelp(
        "Read the log's kernel, CPU, temperature and frequency context from DIR/proc and DIR/sys (tests).",
        visibility: .hidden))
    var systemRoot: String = "/"
    @OptionGroup(title: "Prometheus metrics") var metrics: MetricsOptions
}

extension RunOutputOptions {
    /// The files of one run: `--log` (rotated by `--log-max-size`/`--log-keep`; one line for a
    /// bad size or count), `--csv`, `--summary`, `--quiet`.
    func files(log: String?) throws -> SessionOutputs {
        SessionOutputs(
            log: log, logRotation: try RunPlanning.logRotation(log: log, maxSize: logMaxSize, keep: logKeep),
            csv: csv, summary: summary, quiet: quiet, systemRoot: systemRoot)
    }

    /// The outputs of one run: `--log` (rotated by `--log-max-size`/`--log-keep`), `--csv`,
    /// `--summary`, the status line (`--quiet`) and `--metrics-*`, as ``SessionSinks`` whose files
    /// exist when it returns. One line for a bad path or option (the files created before it are
    /// removed). Failures later stop one output, with one stderr line, and the run goes on.
    func sinks(_ files: SessionOutputs) throws -> SessionSinks {
        let sinks = try SessionSinks(files: files, notice: StandardStreams.errorLine)
        let port = metrics.metricsPort.map { Int($0) }
        try sinks.discardOnError {
            try sinks.addMetrics(port: port, address: metrics.metricsAddress, textfile: metrics.metricsTextfile)
        }
        return sinks
    }
}
