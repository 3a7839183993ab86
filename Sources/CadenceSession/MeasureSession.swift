import CadenceCore
import DRM
import KMSDisplay

/// One measurement over one output or several (``MeasurePlan``): ``open(_:notice:)`` opens the
/// cards and sets every output up (its CRTC and buffers) before any is lit;
/// ``run(notice:shouldStop:)`` flips them at every vblank for the duration, restores every CRTC
/// and returns each output's ``MeasureResult`` (or, for a VRR sweep, its ``VRRSweepResult``).
/// One output is a group of one; the outputs of one card take turns on one thread
/// (`FlipRecorder.recordFlips(_:notice:shouldStop:)`), each card has a thread of its own.
///
///     let session = try MeasureSession.open(plan, notice: { print($0) })
///     if case .refresh(let results) = try session.run(notice: { print($0) }) {
///         for r in results { print(r.measurement.measuredRefreshHz ?? 0) }
///     }
public final class MeasureSession {
    /// What the measurement refuses, besides the cards' own errors (`OutputSelectionError`,
    /// ``SessionError`` for a profile).
    public enum Refusal: Error {
        /// The fake display was asked for: it has no CRTC whose refresh could be measured.
        case needsKMS
        /// The duration is not a number of seconds in (0, 86 400].
        case invalidDuration(Double)
        /// The CRC check with several outputs.
        case checksNeedOneOutput
        /// A VRR sweep with several outputs.
        case vrrNeedsOneOutput
        /// The CRC check with a VRR policy other than `off` (it checks the fixed refresh).
        case crcNeedsFixedRefresh
        /// VRR `on` and the output has none: the reason (it starts "VRR unavailable").
        case vrrUnavailable(String)
        /// The CRC capture cannot start.
        case crcUnavailable(CRCError)
    }

    /// Why a measurement could not be made or finished.
    public enum Failure: Error {
        /// A DRM call failed on the card at `path` while setting up.
        case device(path: String, DRMError)
        /// The scanout buffers of `mode` could not be allocated on `path`.
        case buffers(path: String, mode: ModeInfo, DRMError)
        /// The driver rejected `mode` on `connector` (the outputs of its card named in
        /// `outputs`; nil for one output).
        case modeRejected(outputs: [String]?, mode: ModeInfo, connector: String, DRMError)
        /// Setting the mode or flipping failed on `path` (the outputs of its card named in
        /// `outputs`; nil for one output).
        case flip(outputs: [String]?, path: String, DRMError)
        /// The card at `path` went away mid-measurement (ENODEV): lost, not bad input.
        case deviceLost(path: String, DRMError)
        /// The VRR sweep failed.
        case sweep(BackendFailure)
    }

    /// A line for the user, in the order it happens.
    public enum Notice {
        /// The card is the fake DRM device `name` (a simulator on virtual time), said once.
        case simulator(String)
        /// VRR `auto` and the output has none (the reason): the fixed refresh is measured.
        case vrrUnavailable(String)
        /// The driver of `output` (nil: the one output) does not give CLOCK_MONOTONIC
        /// timestamps.
        case timestampsNotMonotonic(output: OutputName?, driver: String)
        /// The seat paused or resumed the measurement (the line says which).
        case seat(String)
        /// Restoring `crtc` after the measurement failed.
        case restoreFailed(crtc: CRTCID, any Error)
    }

    /// What a measurement gives.
    public enum Outcome {
        /// Each output's fixed refresh, in the order named.
        case refresh([MeasureResult])
        /// The VRR sweep of the one output.
        case vrrSweep(VRRSweepResult)
    }

    /// One output set up for measuring.
    private struct Measured {
        let name: OutputName?
        let path: String
        let driver: String
        let simulator: String?
        let selection: OutputSelection
        let recorder: FlipRecorder
    }

    /// The one output of a VRR sweep.
    private struct Sweep {
        let display: KMSDisplay
        let driver: String
        let simulator: String?
        let selection: OutputSelection
    }

    private let plan: MeasurePlan
    /// Each card's outputs (nil for a sweep).
    private let cards: [[Measured]]
    /// Every output, as (card, index in its card), in the order named.
    private let order: [(card: Int, output: Int)]
    private let sweep: Sweep?
    private var closed = false

    private init(plan: MeasurePlan, cards: [[Measured]], order: [(card: Int, output: Int)], sweep: Sweep?) {
        self.plan = plan
        self.cards = cards
        self.order = order
        self.sweep = sweep
    }

    deinit { close(notice: { _ in }) }

    /// Opens the plan's cards and sets every output up (CRTC, buffers); `notice` gets each line
    /// to show. On any failure every CRTC set up is restored and the error is rethrown.
    public static func open(_ plan: MeasurePlan, notice: (Notice) -> Void) throws -> MeasureSession {
        let d = plan.durationSeconds
        guard d.isFinite, d > 0, d <= 86_400 else { throw Refusal.invalidDuration(d) }
        let source: DeviceSource
        switch plan.backend {
        case .fake: throw Refusal.needsKMS
        case .fakeDRM(let profiles): source = .fake(try DisplayChoice.fakeDRMDevices(profiles: profiles))
        case .kms, .auto: source = plan.source
        }
        switch plan.outputs {
        case .one(let connector, let mode):
            return try openOne(plan, source: source, connector: connector, mode: mode, notice: notice)
        case .several(let connectors, let mode):
            if plan.crc { throw Refusal.checksNeedOneOutput }
            if plan.vrr != .off { throw Refusal.vrrNeedsOneOutput }
            return try openSeveral(plan, source: source, connectors: connectors, mode: mode, notice: notice)
        }
    }

    private static func openOne(
        _ plan: MeasurePlan, source: DeviceSource, connector: String?, mode: String?, notice: (Notice) -> Void
    ) throws -> MeasureSession {
        // `cardN-NAME` names its card.
        let address = connector.map(OutputAddress.init)
        if let a = address, let own = a.devicePath, let device = plan.device, own != device {
            throw OutputSelectionError("connector \(a) is on \(own), not on the device given (\(device))")
        }
        let path = try OutputSelection.devicePath(plan.device ?? address?.devicePath, discovered: source.discover())
        let dev = try OutputSelection.open(path, source: source)
        if let sim = dev.simulatorName { notice(.simulator(sim)) }
        let driver = try setUp(path) { try dev.version() }.name
        let selection = try OutputSelection.select(device: dev, connector: address?.connector, mode: mode)
        if plan.vrr != .off {
            if plan.crc { throw Refusal.crcNeedsFixedRefresh }
            do {
                let display = try KMSDisplay.open(
                    on: dev, connector: selection.connector.name, mode: mode, allocator: plan.allocator, api: plan.api,
                    vrr: .on)
                let sweep = Sweep(display: display, driver: driver, simulator: dev.simulatorName, selection: selection)
                return MeasureSession(plan: plan, cards: [], order: [], sweep: sweep)
            } catch let e as OutputSelectionError where e.kind == .vrrUnavailable {
                guard plan.vrr == .auto else { throw Refusal.vrrUnavailable(e.description) }
                notice(.vrrUnavailable(e.description))
            }
        }
        let output = try setUp(path) {
            try KMSOutput(device: dev, connector: selection.connector, mode: selection.mode, api: plan.api)
        }
        if !output.timestampsMonotonic { notice(.timestampsNotMonotonic(output: nil, driver: driver)) }
        let recorder = try makeRecorder(plan, output: output, path: path)
        recorder.crcSource = plan.crc ? "auto" : nil
        let measured = Measured(
            name: nil, path: path, driver: driver, simulator: dev.simulatorName, selection: selection,
            recorder: recorder)
        return MeasureSession(plan: plan, cards: [[measured]], order: [(0, 0)], sweep: nil)
    }

    private static func openSeveral(
        _ plan: MeasurePlan, source: DeviceSource, connectors: [String], mode: String?, notice: (Notice) -> Void
    ) throws -> MeasureSession {
        let outputPlan = try OutputPlan(connectors: connectors, device: plan.device, source: source, mode: mode)
        var nameOf: [String: String] = [:]
        for (o, name) in zip(outputPlan.order, outputPlan.names) { nameOf["\(o.card)/\(o.output)"] = name }
        // Every output is set up (CRTC, buffers) before any is measured.
        var cards: [[Measured]] = []
        var outputs: [KMSOutput] = []
        do {
            for (c, card) in outputPlan.cards.enumerated() {
                let dev = card.device, path = dev.path
                if c == 0, let sim = dev.simulatorName { notice(.simulator(sim)) }
                let driver = try setUp(path) { try dev.version() }.name
                var measured: [Measured] = []
                for (i, (s, crtc)) in zip(card.selections, card.crtcs).enumerated() {
                    let output = try setUp(path) {
                        try KMSOutput(device: dev, connector: s.connector, mode: s.mode, api: plan.api, crtc: crtc)
                    }
                    outputs.append(output)
                    let name = OutputName(
                        connector: s.connector.name, name: nameOf["\(c)/\(i)"] ?? s.connector.name,
                        card: outputPlan.spansCards ? path : nil)
                    measured.append(
                        Measured(
                            name: name, path: path, driver: driver, simulator: dev.simulatorName, selection: s,
                            recorder: try makeRecorder(plan, output: output, path: path)))
                }
                cards.append(measured)
            }
        } catch {
            for o in outputs.reversed() {
                do { try o.restore() } catch let e { notice(.restoreFailed(crtc: o.crtc, e)) }
            }
            throw error
        }
        return MeasureSession(plan: plan, cards: cards, order: outputPlan.order, sweep: nil)
    }

    /// The output's swapchain (three buffers) and its recorder.
    private static func makeRecorder(_ plan: MeasurePlan, output: KMSOutput, path: String) throws -> FlipRecorder {
        let m = output.mode
        let width = Int(m.hdisplay), height = Int(m.vdisplay)
        let chain = try setUp(path, mode: m) {
            try Swapchain(device: output.device, width: width, height: height, count: 3, allocator: plan.allocator)
        }
        return FlipRecorder(
            output: output, swapchain: chain, shadow: ShadowBuffer(width: width, height: height),
            durationNs: Int64(plan.durationSeconds * 1e9), warmupFlips: plan.warmupFlips)
    }

    /// Runs `body`, typing a DRM error as a failure on `path` (allocating `mode`'s buffers).
    private static func setUp<T>(_ path: String, mode: ModeInfo? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as DRMError {
            if let mode, !e.call.hasPrefix("gbm_") { throw Failure.buffers(path: path, mode: mode, e) }
            throw Failure.device(path: path, e)
        }
    }

    /// Measures every output until the duration is over or `shouldStop` returns true, then
    /// restores every CRTC (`notice` gets a restore that failed, and the seat's pause and resume
    /// lines, from each card's thread). Throws the first card's failure, every CRTC restored.
    /// Call it once.
    public func run(
        notice: @escaping (Notice) -> Void, shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> Outcome {
        if let sweep { return .vrrSweep(try runSweep(sweep, notice: notice, shouldStop: shouldStop)) }
        let cards = self.cards
        let results = SeparateThreads.run(cards.count) { c in
            try FlipRecorder.recordFlips(
                cards[c].map(\.recorder), notice: { notice(.seat($0)) }, shouldStop: shouldStop)
        }
        var stopped: [Bool] = []
        for (c, r) in results.enumerated() {
            switch r {
            case .success(let s): stopped.append(s)
            case .failure(let error):
                restoreAll(notice: { _ in })
                throw Self.failure(error, card: cards[c])
            }
        }
        let measured: [MeasureResult] = order.map { o in
            let m = cards[o.card][o.output]
            let recording = m.recorder.recording(stopped: stopped[o.card])
            let measurement = RefreshMeasurement(
                flips: recording.flips, nominalRefreshHz: m.selection.mode.refreshHz,
                hardwareVBlank: recording.vblank == .hardware, breaks: recording.breaks)
            return MeasureResult(
                name: m.name, device: m.path, driver: m.driver, simulator: m.simulator, selection: m.selection,
                api: m.recorder.output.api, allocator: plan.allocator, durationSeconds: plan.durationSeconds,
                warmupFlips: plan.warmupFlips, recording: recording, measurement: measurement)
        }
        close(notice: notice)
        return .refresh(measured)
    }

    /// A card's failure typed: the CRC that cannot start, the device lost, the mode rejected, a
    /// flip that failed.
    private static func failure(_ error: any Error, card: [Measured]) -> any Error {
        if let e = error as? CRCError { return Refusal.crcUnavailable(e) }
        guard let e = error as? DRMError, let first = card.first else { return error }
        if e.errno == .enodev { return Failure.deviceLost(path: first.path, e) }
        let names = first.name == nil ? nil : card.compactMap { $0.name?.name }
        if e.errno.rawValue == 22, e.call.hasPrefix("drmModeAtomicCommit") || e.call == "drmModeSetCrtc" {
            return Failure.modeRejected(
                outputs: names, mode: first.selection.mode, connector: first.selection.connector.name, e)
        }
        return Failure.flip(outputs: names, path: first.path, e)
    }

    private func runSweep(
        _ sweep: Sweep, notice: (Notice) -> Void, shouldStop: @escaping @Sendable () -> Bool
    ) throws -> VRRSweepResult {
        let display = sweep.display
        let range = display.vrrRange ?? 0...0
        var stopped = false
        let steps: [VRRSweepStep]
        do {
            steps = try VRRSweep.run(
                on: display, secondsPerStep: plan.durationSeconds / 10,
                shouldStop: {
                    if shouldStop() { stopped = true }
                    return stopped
                })
        } catch let f as BackendFailure {
            closed = true
            try? display.close()
            throw Failure.sweep(f)
        }
        close(notice: notice)
        return VRRSweepResult(
            device: display.device.path, driver: sweep.driver, simulator: sweep.simulator,
            selection: sweep.selection, range: range, steps: steps, stopped: stopped)
    }

    /// Restores every CRTC, last set up first; `notice` gets a restore that failed.
    private func restoreAll(notice: (Notice) -> Void) {
        guard !closed else { return }
        closed = true
        if let sweep {
            do { try sweep.display.close() } catch { notice(.restoreFailed(crtc: sweep.display.output.crtc, error)) }
        }
        for card in cards.reversed() {
            for m in card.reversed() {
                let o = m.recorder.output
                do { try o.restore() } catch { notice(.restoreFailed(crtc: o.crtc, error)) }
            }
        }
    }

    /// Restores every CRTC (``run(notice:shouldStop:)`` does; call it when the outputs are set up
    /// but not measured); `notice` gets a restore that failed. Closing twice does nothing.
    public func close(notice: (Notice) -> Void) {
        restoreAll(notice: notice)
    }
}
