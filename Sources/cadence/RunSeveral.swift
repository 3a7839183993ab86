import ArgumentParser
import CadenceCore
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Scenes

/// `cadence run --connector A --connector B` and `--connector all`: several outputs of one
/// device at once, each on its own CRTC at its own rate (``PacingGroup``), one summary per
/// output (with its connector and CRTC) and a total. `--log`, `--csv` and `--summary` write
/// one file per output, the connector in its name (``path(_:for:)``), each a complete run log
/// (`report` and `replay` read it) whose header and frame lines carry the connector.
extension RunCommand {
    /// One output of a run over several: its display and what it did.
    struct OutputResult {
        var display: KMSDisplay
        /// The output's name: its connector, or `cardN-NAME` when the outputs are on several cards.
        var name: String
        var summary: RunSummary
    }

    func executeSeveral() throws {
        let results = try paceSeveral()
        try printSeveral(results)
        for r in results {
            if case .disconnected = r.summary.end {
                StandardStreams.errorLine("cadence run: \(r.name) was unplugged mid-run (\(r.summary.endReason))")
            }
        }
        if results.contains(where: { $0.summary.end.isDisplayFailure }) { throw ExitCode(1) }
        if let code = StandardStreams.incompleteOutputStatus(results.flatMap { $0.summary.incompleteOutputs ?? [] }.nilIfEmpty) {
            throw ExitCode(code)
        }
    }

    /// True when the options ask for several outputs.
    var severalOutputs: Bool { connectors.count > 1 || connectors == ["all"] }

    /// What several outputs cannot do yet (docs/several-outputs.md says why): one line naming the options.
    func refuseForSeveral() throws {
        var used: [String] = []
        if outputs.metrics.metricsPort != nil || outputs.metrics.metricsTextfile != nil { used.append("--metrics-port/--metrics-textfile") }
        if verify != nil || capture != nil { used.append("--verify") }
        if fault != nil { used.append("--fault") }
        if !used.isEmpty {
            throw CLIFailure("\(used.joined(separator: ", ")) \(used.count == 1 ? "is" : "are") not supported with several outputs yet: run one --connector at a time")
        }
        if backend == "fake" { throw CLIFailure("several outputs need a KMS display: --backend kms or fake-drm[:PROFILE] (the fake display has one output)") }
    }

    /// Opens every output, runs them together until the end (or SIGINT/SIGTERM/SIGHUP) and
    /// restores each CRTC (CadenceSession's `OutputGroupRun`, as for one output).
    /// `onRun` sees each output's display, run and files before the runs start (`validate` hooks
    /// its frame counting there).
    func paceSeveral(source given: DeviceSource? = nil, command: String = "run",
                     onRun: ((KMSDisplay, PacingRun, SessionSinks) -> Void)? = nil) throws -> [OutputResult] {
        try refuseForSeveral()
        let results = try paceOutputs(source: given, purpose: command == "validate" ? .validate : .run) { o in
            if let k = o.display as? KMSDisplay { onRun?(k, o.run, o.sinks) }
        }
        return results.compactMap { r in
            (r.display as? KMSDisplay).map { OutputResult(display: $0, name: r.name?.name ?? $0.output.connector.name, summary: r.summary) }
        }
    }

    /// The output's line in summaries: its name, CRTC and mode.
    static func outputLine(_ d: KMSDisplay, name: String) -> String {
        "\(name)  CRTC \(d.output.crtc.rawValue) (index \(d.output.crtcIndex))  \(d.output.mode.hdisplay)x\(d.output.mode.vdisplay)@\(ModeInfo.formatHz(d.output.mode.refreshHz))"
    }

    /// Text: per output its line and the usual summary; then the total. `--json`: one object
    /// `{"outputs": [summary + connector, crtc, crtcIndex], "total": {…}}`.
    func printSeveral(_ results: [OutputResult]) throws {
        let total = RunSummary.total(results.map(\.summary))
        if json {
            let doc: [String: Any] = ["outputs": try Self.outputObjects(results), "total": total]
            print(String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self))
            return
        }
        for (i, r) in results.enumerated() {
            if i > 0 { print("") }
            print("output            \(Self.outputLine(r.display, name: r.name))")
            try printSummary(r.summary)
        }
        print("")
        print("total             \(results.count) outputs  frames \(total["frames"] ?? 0)  presented \(total["presented"] ?? 0)  discarded \(total["discarded"] ?? 0)  dropped \(total["droppedRefreshes"] ?? 0) refreshes in \(total["dropEvents"] ?? 0) events")
    }

    /// Each output's `--json` object: its summary plus `connector`, `output`, `card`, `crtc`
    /// and `crtcIndex`.
    static func outputObjects(_ results: [OutputResult]) throws -> [[String: Any]] {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        var outs: [[String: Any]] = []
        for r in results {
            guard var o = try JSONSerialization.jsonObject(with: enc.encode(r.summary)) as? [String: Any] else { continue }
            o["connector"] = r.display.output.connector.name
            o["output"] = r.name
            o["card"] = r.display.device.path
            o["crtc"] = Int(r.display.output.crtc.rawValue)
            o["crtcIndex"] = r.display.output.crtcIndex
            outs.append(o)
        }
        return outs
    }
}

extension Array {
    /// nil when empty.
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
