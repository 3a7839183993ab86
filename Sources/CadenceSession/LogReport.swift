import CadenceReport

/// The log `cadence report` draws, read: one run log, the files of one rotated run log read as
/// one run, or one observe log with the client drawn (the one named, else the one with the
/// most flips).
public struct LogReport {
    /// Why the logs cannot be drawn.
    public enum Refusal: Error, Equatable, Sendable {
        /// No file was given.
        case noLog
        /// Several files were given with a client to draw or an observe log among them: several
        /// files are the files of one rotated run log.
        case severalObserveLogs
        /// A client to draw was named for `path`, a run log.
        case clientOfRunLog(path: String)
        /// The observe log `path` has no client `client` (nil: no client at all); `clients` are
        /// the ones it has, sorted.
        case noSuchClient(path: String, client: String?, clients: [String])
    }

    /// The files read, as given.
    public var files: [String]
    /// The chart of the run drawn.
    public var chart: ReportChart
    /// The run drawn (for an observe log, its client's flips as a run log).
    public var log: RunLog
    /// The observe log read (nil for a run log).
    public var observed: ObservedLog?
    /// The observe log's client drawn (nil for a run log).
    public var drawn: ObservedLog.Client?

    /// True when an observe log was read.
    public var isObserved: Bool { observed != nil }

    /// Where the run came from, for the HTML report: the log, or the files sorted.
    public var source: String { files.count > 1 ? files.sorted().joined(separator: " ") : files.first ?? "" }

    /// Reads `files` into a chart of `width` by `height`: several files as the files
    /// of one rotated run log; one observe log drawing its client `client` (nil: the one with
    /// the most flips); else one run log, read in one pass without keeping its frame records.
    public static func read(
        _ files: [String], client: String?, allowPartialLastLine: Bool, width: Int, height: Int
    ) throws -> LogReport {
        guard let log = files.first else { throw Refusal.noLog }
        if files.count > 1 {
            if client != nil || files.contains(where: { ObservedLog.isObserveLog(path: $0) }) {
                throw Refusal.severalObserveLogs
            }
            let (chart, runLog) = try ReportChart.read(
                paths: files, allowPartialLastLine: allowPartialLastLine, width: width, height: height)
            return LogReport(files: files, chart: chart, log: runLog)
        }
        guard ObservedLog.isObserveLog(path: log) else {
            if client != nil { throw Refusal.clientOfRunLog(path: log) }
            let (chart, runLog) = try ReportChart.read(
                path: log, allowPartialLastLine: allowPartialLastLine, width: width, height: height)
            return LogReport(files: files, chart: chart, log: runLog)
        }
        let observed = try ObservedLog.read(path: log, allowPartialLastLine: allowPartialLastLine)
        guard let chosen = observed.mostFlips(command: client) else {
            throw Refusal.noSuchClient(path: log, client: client, clients: Set(observed.clients.map(\.client)).sorted())
        }
        return LogReport(
            files: files, chart: ReportChart(log: chosen.log, width: width, height: height), log: chosen.log,
            observed: observed, drawn: chosen)
    }

    /// A report of `chart` and `log` read from `files`; `observed` and `drawn` for an observe
    /// log.
    public init(
        files: [String], chart: ReportChart, log: RunLog, observed: ObservedLog? = nil, drawn: ObservedLog.Client? = nil
    ) {
        self.files = files
        self.chart = chart
        self.log = log
        self.observed = observed
        self.drawn = drawn
    }
}
