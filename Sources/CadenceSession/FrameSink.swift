import CadenceCore

/// One consumer of a run's frames: a log, a CSV, metrics, a HUD, a status line, or a
/// program's own. A ``SessionSinks`` hands every sink each completed frame, in the order the
/// sinks were added, and each event of the run; a sink never replaces another.
///
/// The life of a sink: it is created before the run (a file sink creates its file then, so
/// that an unwritable path fails before any frame), ``open(_:)`` when the run exists,
/// ``frame(_:)`` once per completed frame, and ``close(_:)`` with the run's summary, or
/// ``discard()`` when the run never started.
///
/// **Failure rule.** A sink does not throw once the run has started: an output that cannot be
/// written stops, tells the session once through ``SinkContext/fail(_:)`` (a line for the user
/// and an entry in the summary's `incompleteOutputs`, which makes `cadence run` exit 3), and
/// the display keeps running.
public protocol FrameSink: AnyObject {
    /// The run exists and has not produced a frame: write headers, note the display.
    func open(_ context: SinkContext)
    /// One completed frame, in completion order.
    func frame(_ report: FrameReport)
    /// About once a second of display time while frames are produced.
    func status(_ status: RunStatus)
    /// A rate switch of `RunConfiguration.adapt`.
    func rateSwitch(_ change: RateSwitch)
    /// A seat-session pause or resume.
    func sessionChange(_ change: SessionChange)
    /// The run ended with `summary` (its `incompleteOutputs` not yet set): complete the output.
    func close(_ summary: RunSummary)
    /// The run never started: remove what the sink created.
    func discard()
}

extension FrameSink {
    /// Nothing to prepare.
    public func open(_ context: SinkContext) {}
    /// No use for status.
    public func status(_ status: RunStatus) {}
    /// No use for rate switches.
    public func rateSwitch(_ change: RateSwitch) {}
    /// No use for session changes.
    public func sessionChange(_ change: SessionChange) {}
    /// Nothing to complete.
    public func close(_ summary: RunSummary) {}
    /// Nothing created.
    public func discard() {}
}

/// An output that stopped being written: what the summary's `incompleteOutputs` says of it,
/// and the line the user sees at once (none for an output that only fails at the end).
public struct SinkFailure: Equatable, Sendable {
    /// The summary's entry: "log run.jsonl: 812 frames, no end line (why)".
    public var incompleteOutput: String
    /// The line for the user now ("cadence: logging stopped after 812 frames: …"), or nil.
    public var notice: String?

    /// A failure with its summary entry and its line for the user.
    public init(incompleteOutput: String, notice: String?) {
        self.incompleteOutput = incompleteOutput
        self.notice = notice
    }

    /// A file of `what` ("log", "csv") at `path` that stopped after `frames` frames because of
    /// `error`; `noEndLine` when the file's last line was to be the summary.
    public static func stopped(
        _ what: String, path: String, frames: Int, error: any Error, noEndLine: Bool = false
    ) -> SinkFailure {
        let why = String(describing: error)
        let name = what == "log" ? "logging" : "the \(what)"
        return SinkFailure(
            incompleteOutput: "\(what) \(path): \(frames) frames\(noEndLine ? ", no end line" : "") (\(why))",
            notice:
                "cadence: \(name) stopped after \(frames) frames: \(why); the run goes on and the \(frames) frames written stay"
        )
    }

    /// A file of `what` written once, at the end, that could not be written.
    public static func notWritten(_ what: String, path: String, error: any Error) -> SinkFailure {
        let why = String(describing: error)
        return SinkFailure(
            incompleteOutput: "\(what) \(path): not written (\(why))",
            notice: "cadence: the \(what) file was not written: \(why)")
    }
}

/// What a sink knows of its run and how it reports: given to ``FrameSink/open(_:)``; a sink
/// may keep it for the whole run.
public final class SinkContext {
    /// The run whose frames the sink receives.
    public let run: PacingRun
    /// The output's connector in a run over several outputs (nil for one output).
    public let connector: String?
    /// The output's card node, when a run's outputs are on several cards.
    public let card: String?
    /// What status lines call the output (`card1-DP-1` across cards; else the connector).
    public let outputName: String?
    private let reporter: SinkReporter
    private let refresh: RefreshFitSink

    init(
        run: PacingRun, connector: String?, card: String?, outputName: String?, reporter: SinkReporter,
        refresh: RefreshFitSink
    ) {
        self.run = run
        self.refresh = refresh
        self.connector = connector
        self.card = card
        self.outputName = outputName
        self.reporter = reporter
    }

    /// The CRTC's refresh measured so far, including the frame being handed out (see
    /// ``RefreshFitSink``); nil while unknown.
    public var measuredRefreshHz: Double? { refresh.measuredRefreshHz }

    /// Says `line` to the user at once (the CLI: one stderr line).
    public func notice(_ line: String) { reporter.notice(line) }

    /// Reports an output that stopped: its notice now, its entry in the summary.
    public func fail(_ failure: SinkFailure) { reporter.fail(failure) }
}

/// Where the sinks of one run report: the user's lines, and the outputs that stopped, in the
/// order they stopped.
final class SinkReporter {
    let notice: (String) -> Void
    private(set) var incompleteOutputs: [String] = []

    init(notice: @escaping (String) -> Void) { self.notice = notice }

    func fail(_ failure: SinkFailure) {
        incompleteOutputs.append(failure.incompleteOutput)
        if let line = failure.notice { notice(line) }
    }
}
