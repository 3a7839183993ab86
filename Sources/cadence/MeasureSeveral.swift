import ArgumentParser
import CadenceCore
import CadenceSession
import DRM
import KMSDisplay

/// `cadence measure --connector A --connector B` (or `--connector all`): several outputs
/// measured at once, each on its own CRTC. The outputs of one card take turns on one thread
/// (`FlipRecorder.recordFlips(_:notice:shouldStop:)`), each card on a thread of its own
/// (``SeparateThreads``); every output is reported as a single `measure` reports it.
extension MeasureCommand {
    /// One output being measured.
    private final class Measured {
        let name: String
        let path: String
        let driver: String
        let selection: OutputSelection
        let recorder: FlipRecorder
        var recording: FlipRecording?
        init(name: String, path: String, driver: String, selection: OutputSelection, recorder: FlipRecorder) {
            self.name = name
            self.path = path
            self.driver = driver
            self.selection = selection
            self.recorder = recorder
        }
    }

    func measureSeveral(source: DeviceSource, allocator: BufferAllocator, api: ModesetAPI) throws {
        if try BackendChoice.vrrPolicy(vrr) != .off {
            throw CLIFailure("--vrr with several outputs: sweep one --connector at a time")
        }
        let plan = try selecting { try OutputPlan(connectors: connectors, device: device, source: source, mode: mode) }
        let names = plan.names
        // Every output is set up (CRTC, buffers) before any is measured.
        var byCard: [[Measured]] = []
        var outputs: [KMSOutput] = []
        defer {
            for o in outputs.reversed() {
                do { try o.restore() } catch { printError("warning: could not restore \(o.crtc): \(error)") }
            }
        }
        var nameOf: [String: String] = [:]
        for (o, name) in zip(plan.order, names) { nameOf["\(o.card)/\(o.output)"] = name }
        for (c, card) in plan.cards.enumerated() {
            let dev = card.device, path = dev.path
            if c == 0, let sim = dev.simulatorName { printError("notice: \(sim): a fake DRM device (simulator) on virtual time, not a panel") }
            let driver = try describing(path) { try dev.version() }
            var measured: [Measured] = []
            for (i, (s, crtc)) in zip(card.selections, card.crtcs).enumerated() {
                let m = s.mode
                let output = try describing(path) { try KMSOutput(device: dev, connector: s.connector, mode: m, api: api, crtc: crtc) }
                outputs.append(output)
                let chain = try describing(path, mode: m) {
                    try Swapchain(device: dev, width: Int(m.hdisplay), height: Int(m.vdisplay), count: 3, allocator: allocator)
                }
                let recorder = FlipRecorder(output: output, swapchain: chain, shadow: ShadowBuffer(width: Int(m.hdisplay), height: Int(m.vdisplay)),
                                            durationNs: Int64(duration * 1e9), warmupFlips: Self.warmupFlips)
                measured.append(Measured(name: nameOf["\(c)/\(i)"] ?? s.connector.name, path: path, driver: driver.name,
                                         selection: s, recorder: recorder))
            }
            byCard.append(measured)
        }
        let stop = SignalStop()
        defer { stop.remove() }
        let results = SeparateThreads.run(byCard.count) { c in
            let recorders = byCard[c].map(\.recorder)
            let stopped = try FlipRecorder.recordFlips(recorders, notice: printError) { stop.isRequested }
            for m in byCard[c] { m.recording = m.recorder.recording(stopped: stopped) }
        }
        for (c, r) in results.enumerated() {
            guard case .failure(let error) = r else { continue }
            guard let e = error as? DRMError else { throw error }
            let first = byCard[c][0]
            if e.errno == .enodev {
                printError("cadence measure: \(OutputSelection.explain(e, path: first.path))")
                throw ExitCode(1)
            }
            let names = byCard[c].map(\.name).joined(separator: ", ")
            throw CLIFailure("\(names): " + modesetFailure(e, path: first.path, mode: first.selection.mode, connector: first.selection.connector.name))
        }
        try report(plan.order.map { byCard[$0.card][$0.output] }, stoppedBy: stop.signal)
    }

    /// Each output's block (text) or object (`{"outputs": […]}`), then the exit status: 1 when
    /// any output failed a check.
    private func report(_ all: [Measured], stoppedBy signal: Int32?) throws {
        var objects: [JSON] = []
        var failures: [String] = []
        for (i, o) in all.enumerated() {
            guard let recording = o.recording else { continue }
            let s = o.selection, chosen = s.mode, conn = s.connector
            if trace { for l in Self.traceLines(recording.flips, prefix: "\(o.name): ") { printError(l) } }
            if let note = s.note { printError("note: \(o.name): " + note) }
            if let w = fasterModeWarning(connector: conn, mode: chosen, use: "is measured at") { printError("warning: " + w) }
            if recording.vblank == .none { printError("notice: \(o.name): \(o.driver): \(noHardwareVBlankNotice)") }
            let m = RefreshMeasurement(flips: recording.flips, nominalRefreshHz: chosen.refreshHz, hardwareVBlank: recording.vblank == .hardware,
                                      breaks: recording.breaks)
            let api = o.recorder.output.api
            if json {
                var j = Self.json(m, driver: o.driver, path: o.path, connector: conn.name, mode: chosen, source: s.source,
                                  api: api, allocator: BufferAllocator(rawValue: allocator) ?? .dumb, duration: duration, vblank: recording.vblank)
                if case .object(let fields) = j { j = .object([("output", .string(o.name))] + fields) }
                objects.append(j)
            } else {
                if i > 0 { print("") }
                print(Self.text(m, driver: o.driver, path: o.path, connector: o.name, mode: chosen, source: s.source,
                                api: api, allocator: BufferAllocator(rawValue: allocator) ?? .dumb, vblank: recording.vblank))
            }
            if m.flips < 2 { failures.append("\(o.name): only \(m.flips) flip event(s) in \(duration) s: nothing to measure") }
            for c in m.checks where c.passed == false { failures.append("check failed: \(o.name): \(c.name): \(c.detail)") }
        }
        if json { print(JSON.object([("outputs", .array(objects))]).rendered) }
        if all.first?.recording?.stopped == true, let signal {
            printError("stopped by signal \(signal); displays restored")
        }
        for f in failures { printError(f) }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
