import CadenceCore
import CadenceMetrics
import CadenceReport
import Foundation

/// Everything one output's run writes besides what a program prints: an ordered list of
/// ``FrameSink``s that each receive every frame and event of the run, in the order they were
/// added, and the summary file written when the run ends.
///
/// A ``RefreshFitSink`` always comes first (the refresh measured from the shown frames, for
/// the sinks after it and for ``measuredRefreshHz``). Files are created when their sinks are
/// (``init(files:notice:)``), before anything else happens, so that an unwritable path fails
/// first; if the run is then refused, ``discard()`` removes what was created.
///
/// A sink that fails later (full filesystem, size limit, I/O error, removed) stops and the run
/// goes on: its line reaches `notice` at once, and the summary ``finish(_:)`` returns names it
/// in `incompleteOutputs`.
public final class SessionSinks {
    /// The sinks in the order they receive frames.
    public private(set) var sinks: [any FrameSink]
    /// The refresh measured from the shown frames (always the first sink).
    public let refresh = RefreshFitSink()
    private let summaryFile: LineFile?
    private let reporter: SinkReporter
    private var context: SinkContext?
    /// The output's connector in a run over several outputs: written on the log's header and
    /// every frame line, and put before each status line. Nil for one output (logs unchanged).
    public var connector: String?
    /// The output's card node, when the run's outputs are on several cards (the log's header).
    public var card: String?
    /// What the status lines call the output (`card1-DP-1` across cards; else the connector).
    public var outputName: String?

    /// `sinks` after the refresh fit, in order; `summaryFile` gets the summary as one JSON
    /// line at the end; `notice` shows a line to the user at once (the CLI: stderr).
    public init(_ sinks: [any FrameSink] = [], summaryFile: LineFile? = nil, notice: @escaping (String) -> Void) {
        self.sinks = [refresh] + sinks
        self.summaryFile = summaryFile
        reporter = SinkReporter(notice: notice)
    }

    /// Adds `sink` after the others (opened at once when the run is already attached).
    public func add(_ sink: any FrameSink) {
        sinks.append(sink)
        if let context { sink.open(context) }
    }

    /// Reads the machine's context for the log's header (see ``LogSink/prepare(driver:)``),
    /// before the run is created.
    public func prepare(driver: String) {
        for case let log as LogSink in sinks { log.prepare(driver: driver) }
    }

    /// Opens every sink for `run` and hands them its frames, status, rate switches and session
    /// changes from now on (the run's callbacks are this list's).
    public func attach(_ run: PacingRun) {
        let context = SinkContext(
            run: run, connector: connector, card: card, outputName: outputName,
            reporter: reporter, refresh: refresh)
        self.context = context
        for sink in sinks { sink.open(context) }
        run.onFrame = { [unowned self] r in for sink in self.sinks { sink.frame(r) } }
        run.onStatus = { [unowned self] s in for sink in self.sinks { sink.status(s) } }
        run.onRateSwitch = { [unowned self] c in for sink in self.sinks { sink.rateSwitch(c) } }
        run.onSessionChange = { [unowned self] c in for sink in self.sinks { sink.sessionChange(c) } }
    }

    /// Starts the metrics series `labels` (a no-op without a ``MetricsSink``).
    public func startMetrics(labels: FrameMetrics.Labels) throws {
        for case let m as MetricsSink in sinks { try m.start(labels: labels) }
    }

    /// False on drivers without a vblank interrupt (their sequences are synthetic).
    public var hardwareVBlank: Bool { refresh.hardwareVBlank }

    /// The CRTC's refresh measured from the shown frames' kernel timestamps (nil when unknown,
    /// and on drivers without a vblank interrupt).
    public var measuredRefreshHz: Double? { refresh.measuredRefreshHz }

    /// Runs `body`; when it throws, removes the files created so far and rethrows.
    public func discardOnError<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            discard()
            throw error
        }
    }

    /// Removes every file this run created (the run never started).
    public func discard() {
        for sink in sinks { sink.discard() }
        summaryFile?.discard()
    }

    /// Completes every sink (log end line, CSV, metrics) and the summary file, and returns
    /// `summary` with `incompleteOutputs` naming every output that stopped early. Never
    /// throws: an output that cannot be completed is reported, the run's result stands.
    public func finish(_ summary: RunSummary) -> RunSummary {
        for sink in sinks { sink.close(summary) }
        var s = summary
        s.incompleteOutputs = reporter.incompleteOutputs.isEmpty ? nil : reporter.incompleteOutputs
        if let f = summaryFile {
            do {
                try f.write(line: [UInt8](try JSON.sortedData(s)))
            } catch {
                reporter.fail(.notWritten("summary", path: f.path, error: error))
                s.incompleteOutputs = reporter.incompleteOutputs
            }
            f.close()
        }
        return s
    }
}
