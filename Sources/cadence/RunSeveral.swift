import CadenceCore
import CadenceSession
import DRM
import KMSDisplay

/// `cadence run --connector A --connector B` and `--connector all`: several outputs at once,
/// each on its own CRTC at its own rate, one summary per output (with its connector and CRTC)
/// and a total (CadenceSession's `RunReport`). `--log`, `--csv` and `--summary` write one file
/// per output, the connector in its name, each a complete run log whose header and frame lines
/// carry the connector.
extension RunCommand {
    /// True when the options ask for several outputs.
    var severalOutputs: Bool { connectors.count > 1 || connectors == ["all"] }

    /// What several outputs cannot do yet (docs/several-outputs.md says why): one line naming the options.
    func refuseForSeveral() throws {
        let metrics = outputs.metrics.metricsPort != nil || outputs.metrics.metricsTextfile != nil
        if let line = RunPlanning.severalOutputsRefusal(
            metrics: metrics, verify: verify != nil || capture != nil, fault: fault != nil, backend: backend)
        {
            throw CLIFailure(line)
        }
    }

    /// Opens every output, runs them together until the end (or SIGINT/SIGTERM/SIGHUP) and
    /// restores each CRTC (CadenceSession's `OutputGroupRun`, as for one output).
    /// `onRun` sees each output's display, run and files before the runs start (`validate` hooks
    /// its frame counting there).
    func paceSeveral(source given: DeviceSource? = nil,
                     onRun: ((KMSDisplay, PacingRun, SessionSinks) -> Void)? = nil) throws -> [RunReport.Output] {
        let results = try paceOutputs(source: given, purpose: .run) { o in
            if let k = o.display as? KMSDisplay { onRun?(k, o.run, o.sinks) }
        }
        return RunReport(results).outputs
    }
}
