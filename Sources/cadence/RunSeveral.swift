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

    /// Each output's files: `--log`, `--csv` and `--summary` with the output's name in theirs
    /// (`run.DP-1.jsonl`; `run.card1-DP-1.jsonl` across cards, when `card` is given).
    func outputFiles(for connector: String, named name: String, card: String?) throws -> SessionSinks {
        let files = try outputs.sinks(try outputs.files(log: log).forOutput(named: name))
        files.connector = connector
        files.card = card
        files.outputName = name
        return files
    }

    /// What several outputs cannot do yet: one line naming the options.
    func refuseForSeveral() throws {
        var used: [String] = []
        if outputs.metrics.metricsPort != nil || outputs.metrics.metricsTextfile != nil { used.append("--metrics-port/--metrics-textfile") }
        if hud { used.append("--hud") }
        if adapt { used.append("--adapt") }
        if verify != nil || capture != nil { used.append("--verify") }
        if fault != nil { used.append("--fault") }
        if !used.isEmpty {
            throw CLIFailure("\(used.joined(separator: ", ")) \(used.count == 1 ? "is" : "are") not supported with several outputs yet: run one --connector at a time")
        }
        if backend == "fake" { throw CLIFailure("several outputs need a KMS display: --backend kms or fake-drm[:PROFILE] (the fake display has one output)") }
    }

    /// Opens every output, runs them together until the end (or SIGINT/SIGTERM/SIGHUP) and
    /// restores each CRTC.
    /// `onRun` sees each output's display, run and files before the runs start (`validate` hooks
    /// its frame counting there).
    func paceSeveral(source given: DeviceSource? = nil, command: String = "run",
                     onRun: ((KMSDisplay, PacingRun, SessionSinks) -> Void)? = nil) throws -> [OutputResult] {
        try refuseForSeveral()
        let base = try makeConfiguration()
        let plan = try injectLatePlan()
        let fakeConfig = try makeFakeConfiguration(surface: false)
        let source: DeviceSource
        if let given {
            source = given
        } else if BackendChoice.isFakeDRM(backend) {
            source = .fake(try BackendChoice.fakeDRMDevices(backend, wallClock: fakeConfig.clock == .wall, seed: seed))
        } else if backend == "kms" || backend == "auto" {
            source = try sessionOptions.source(command: command)
        } else {
            throw CLIFailure("--backend must be auto, kms, fake or fake-drm[:PROFILE[,PROFILE…]]")
        }
        let policy = try BackendChoice.vrrPolicy(vrr)
        let modes = try modeChoice()
        let displays: [KMSDisplay] = try selecting {
            try KMSDisplay.openOutputs(connectors: connectors, device: device, source: source, mode: modes.all,
                                       modes: modes.perOutput, vrr: policy, rate: base.range)
        }
        defer { for d in displays.reversed() { try? d.close() } }
        let names = KMSDisplay.outputNames(displays)
        let spansCards = Set(displays.map { ObjectIdentifier($0.device) }).count > 1
        // Each named output of --inject-late is one of the outputs run (one line otherwise).
        var targets: [String: Int] = [:]
        for name in plan.names { targets[name] = try Self.output(named: name, names: names, displays: displays) }
        for (d, name) in zip(displays, names) {
            if let note = d.vrrNote { StandardStreams.errorLine("cadence \(command): \(name): \(note)") }
            if let note = Self.latencyNotice(requested: base.latency, display: d) {
                StandardStreams.errorLine("cadence \(command): \(name): \(note)")
            }
        }
        var files: [SessionSinks] = []
        var runs: [PacingRun] = []
        do {
            for (d, name) in zip(displays, names) {
                files.append(try outputFiles(for: d.output.connector.name, named: name, card: spansCards ? d.device.path : nil))
            }
            for (i, (d, out)) in zip(displays, files).enumerated() {
                var c = base
                c.commitMargin = d.recommendedCommitMargin
                c.injectLate = try plan.frames(of: names[i]) { targets[$0] == i }
                out.prepare(driver: RunDisplay.driverName(d))
                let run = try PacingRun(backend: d, configuration: c, renderer: try makeRenderer())
                out.attach(run)
                StandardStreams.unblockStopSignals()
                onRun?(d, run, out)
                runs.append(run)
            }
        } catch {
            for f in files { f.discard() }
            throw error
        }
        let stop = SignalStop()
        defer { stop.remove() }
        // One group per card, each on its own thread: cards share nothing, and one card's
        // drawing must not hold another's outputs. Outputs of one card take turns on one thread.
        var cards: [ObjectIdentifier] = []
        for d in displays where !cards.contains(ObjectIdentifier(d.device)) { cards.append(ObjectIdentifier(d.device)) }
        let members = cards.map { c in displays.indices.filter { ObjectIdentifier(displays[$0].device) == c } }
        let grouped = try PacingGroup.runTogether(members.map { PacingGroup(runs: $0.map { runs[$0] }) },
                                                  shouldStop: { stop.isRequested })
        var summaries = [RunSummary?](repeating: nil, count: runs.count)
        for (m, s) in zip(members, grouped) { for (i, summary) in zip(m, s) { summaries[i] = summary } }
        // An output file that fails stops being written; the displays keep running.
        return displays.indices.map { i in
            OutputResult(display: displays[i], name: names[i], summary: files[i].finish(summaries[i]!))
        }
    }

    /// The output `target` names (`--inject-late TARGET=…`): one of `names`, or a bare connector
    /// name that only one output has. Throws one line otherwise.
    static func output(named target: String, names: [String], displays: [KMSDisplay]) throws -> Int {
        if let i = names.firstIndex(of: target) { return i }
        let bare = displays.indices.filter { displays[$0].output.connector.name == target }
        if bare.count == 1 { return bare[0] }
        if bare.count > 1 {
            throw CLIFailure("--inject-late \(target)=…: \(target) is on several cards: name one (\(bare.map { names[$0] }.joined(separator: ", ")))")
        }
        throw CLIFailure("--inject-late \(target)=…: \(target) is not one of the outputs run (\(names.joined(separator: ", ")))")
    }

    /// The scene renderer of one output (or plain colours for `--scene solid`).
    func makeRenderer() throws -> FrameRenderer {
        guard scene != "solid" else {
            let colours: [UInt32] = [0x00C0_3030, 0x0030_C030, 0x0030_30C0, 0x00C0_C030]
            return { surface, ctx in surface.fill(colours[ctx.frameIndex & 3]) }
        }
        guard let s = SceneCatalog.scene(named: scene) else {
            throw CLIFailure("unknown scene '\(scene)': choose solid or one of \(SceneCatalog.names.joined(separator: ", "))")
        }
        let sr = SceneRenderer(scene: s)
        return { surface, ctx in
            let c = SceneContext(ctx)
            sr.render(base: surface.base, width: surface.width, height: surface.height, stride: surface.stride, context: c, hud: nil)
        }
    }

    /// The output's line in summaries: its name, CRTC and mode.
    static func outputLine(_ d: KMSDisplay, name: String) -> String {
        "\(name)  CRTC \(d.output.crtc.rawValue) (index \(d.output.crtcIndex))  \(d.output.mode.hdisplay)x\(d.output.mode.vdisplay)@\(ModeInfo.formatHz(d.output.mode.refreshHz))"
    }

    /// Text: per output its line and the usual summary; then the total. `--json`: one object
    /// `{"outputs": [summary + connector, crtc, crtcIndex], "total": {…}}`.
    func printSeveral(_ results: [OutputResult]) throws {
        let total = Self.total(results.map(\.summary))
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

    /// The counts of several outputs added up.
    static func total(_ s: [RunSummary]) -> [String: Int] {
        ["outputs": s.count, "frames": s.reduce(0) { $0 + $1.frames }, "presented": s.reduce(0) { $0 + $1.presented },
         "onTime": s.reduce(0) { $0 + $1.onTime }, "late": s.reduce(0) { $0 + $1.late },
         "discarded": s.reduce(0) { $0 + $1.discarded }, "failed": s.reduce(0) { $0 + $1.failed },
         "droppedRefreshes": s.reduce(0) { $0 + $1.droppedRefreshes }, "dropEvents": s.reduce(0) { $0 + $1.dropEvents }]
    }
}

extension Array {
    /// nil when empty.
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
