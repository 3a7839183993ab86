import CadenceCore

/// One output's run with its outputs: a `PacingRun` on a display whose frames go to a
/// ``SessionSinks``, run to its end and completed.
///
///     let sinks = try SessionSinks(files: outputs, notice: { print($0) })
///     let session = try RunSession(display: FakeDisplay(FakeDisplayConfiguration()),
///                                  configuration: config, sinks: sinks)
///     let summary = try session.run()   // the log's end line written, the CSV closed
public final class RunSession {
    /// The run (its callbacks are the sinks').
    public let run: PacingRun
    /// Where the run's frames go.
    public let sinks: SessionSinks

    /// Creates the run on `display` and attaches `sinks` to it. If the run cannot be created
    /// (a configuration no run can use), the sinks' files are removed and the error rethrown.
    public init(
        display: any DisplayBackend, configuration: RunConfiguration, renderer: FrameRenderer? = nil,
        sinks: SessionSinks
    ) throws {
        run = try sinks.discardOnError {
            try PacingRun(backend: display, configuration: configuration, renderer: renderer)
        }
        self.sinks = sinks
        sinks.attach(run)
    }

    /// Runs until the frame count or duration is reached, `shouldStop` returns true, or the
    /// device is lost (see `PacingRun.run(shouldStop:)`); `amend` may change the summary
    /// before the outputs are completed with it (the log's end line is the amended summary).
    /// Returns the summary with `incompleteOutputs` naming the outputs that stopped early.
    public func run(
        shouldStop: () -> Bool = { false }, amend: (inout RunSummary) -> Void = { _ in }
    ) throws -> RunSummary {
        var summary = try run.run(shouldStop: shouldStop)
        amend(&summary)
        return sinks.finish(summary)
    }
}
