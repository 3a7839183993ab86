import CadenceCore
import DRM
import KMSDisplay

/// One run over one output or several (``OutputGroupPlan``): ``open(_:notice:)`` opens the
/// displays, creates each output's sinks and `PacingRun`, and starts the checks; ``run(shouldStop:)``
/// runs them all to the end and completes every output. One output runs on the calling thread
/// (a group of one); several run as `PacingGroup`s, one per card, each card on a thread of its
/// own (cards share nothing, and one card's drawing must not hold another's outputs).
///
///     let group = try OutputGroupRun.open(plan, notice: { print($0) })
///     for o in group.outputs { o.sinks.add(FrameTally()) }
///     let results = try group.run()   // every display closed, every log complete
public final class OutputGroupRun {
    /// What the run refuses, besides the display's own errors (`DisplayChoice.Refusal`,
    /// `OutputSelectionError`) and the sinks'.
    public enum Refusal: Error {
        /// Several outputs on the fake display, which has one.
        case severalOutputsNeedKMS
        /// A check of the scanout (CRC, writeback) with several outputs.
        case checksNeedOneOutput
        /// Frames made late on `target`, and the one output run is `driven`.
        case injectLateTargetNotDriven(target: String, driven: String)
        /// Frames made late on `target`, a connector several cards have: these `outputs`.
        case injectLateTargetAmbiguous(target: String, outputs: [String])
        /// Frames made late on `target`, which is not one of the `outputs` run.
        case injectLateTargetNotRun(target: String, outputs: [String])
        /// A scanout check on a display without a CRTC (`check`: "crc" or "writeback").
        case checkNeedsKMS(check: String, display: String)
        /// The CRC capture cannot start.
        case crcUnavailable(CRCError)
        /// The writeback capture cannot start.
        case writebackUnavailable(any Error)
    }

    /// A line for the user while the outputs open, in the order they happen.
    public enum Notice {
        /// About the display of `output` (nil: the one output): the fallback to the fake
        /// display, or VRR wanted but unavailable.
        case display(output: String?, String)
        /// `display` pipelines at most `capacity` frames, fewer than the `requested` latency.
        case latencyCapped(output: String?, requested: Int, display: any DisplayBackend)
        /// The rate asked for is shown unevenly (the note says how).
        case unevenRate(output: String?, String)
    }

    /// One output: its display, name, run and sinks.
    public struct Output {
        /// Its display.
        public let display: any DisplayBackend
        /// Its name (nil for a one-output run).
        public let name: OutputName?
        /// Its run (the sinks' callbacks are attached).
        public let run: PacingRun
        /// Where its frames go.
        public let sinks: SessionSinks
        let captures: WritebackCaptures
        let indexes: FrameIndexes?
    }

    /// One output's end: its display, name and completed summary.
    public struct Result {
        /// Its display (closed).
        public let display: any DisplayBackend
        /// Its name (nil for a one-output run).
        public let name: OutputName?
        /// Its summary, with `incompleteOutputs` naming its sinks that stopped early.
        public let summary: RunSummary
    }

    /// The outputs, in the order opened.
    public let outputs: [Output]
    private var closed = false

    private init(outputs: [Output]) { self.outputs = outputs }

    deinit { close() }

    /// Opens the plan's displays, creates each output's sinks and run and starts its checks;
    /// `notice` gets each line to show. On any failure every display opened is closed, every
    /// file created is removed, and the error is rethrown.
    public static func open(_ plan: OutputGroupPlan, notice: (Notice) -> Void) throws -> OutputGroupRun {
        switch plan.outputs {
        case .one(let connector, let mode):
            return try openOne(plan, connector: connector, mode: mode, notice: notice)
        case .several(let connectors, let mode, let modes):
            return try openSeveral(plan, connectors: connectors, mode: mode, modes: modes, notice: notice)
        }
    }

    private static func openOne(
        _ plan: OutputGroupPlan, connector: String?, mode: String?, notice: (Notice) -> Void
    ) throws -> OutputGroupRun {
        let sinks = try plan.sinks(nil)
        let (display, line) = try sinks.discardOnError {
            try DisplayChoice.open(
                backend: plan.backend, device: plan.device, connector: connector, mode: mode, fake: plan.fake,
                source: plan.source, purpose: plan.purpose, vrr: plan.vrr, rate: plan.configuration.range)
        }
        do {
            if let line { notice(.display(output: nil, line)) }
            for target in plan.injectLate.names where !RunDisplay.drives(display, target) {
                let driven = (display as? KMSDisplay)?.output.connector.name ?? display.name
                throw Refusal.injectLateTargetNotDriven(target: target, driven: driven)
            }
            let captures = WritebackCaptures(schedule: plan.writeback, pngBase: plan.capturePNGBase)
            if let schedule = plan.writeback {
                if schedule.onMismatch && !plan.crc { throw Refusal.writebackUnavailable(OnMismatchNeedsCRC()) }
                try startWriteback(display, captures: captures, onMismatch: schedule.onMismatch)
                sinks.add(captures)
            }
            if plan.crc { try startCRC(display) }
            if let n = latencyNotice(plan, display, output: nil) { notice(n) }
            if let n = rateNotice(plan, display, output: nil) { notice(n) }
            var config = plan.configuration
            config.injectLate = try plan.injectLate.frames(of: connector ?? "the output") { _ in true }
            let output = try makeOutput(plan, display, name: nil, sinks: sinks, config: config, captures: captures)
            return OutputGroupRun(outputs: [output])
        } catch {
            try? display.close()
            sinks.discard()
            throw error
        }
    }

    private static func openSeveral(
        _ plan: OutputGroupPlan, connectors: [String], mode: String?, modes: [String: String],
        notice: (Notice) -> Void
    ) throws -> OutputGroupRun {
        let source: DeviceSource
        switch plan.backend {
        case .fake: throw Refusal.severalOutputsNeedKMS
        case .fakeDRM(let profiles):
            source = .fake(
                try DisplayChoice.fakeDRMDevices(
                    profiles: profiles, wallClock: plan.fake.clock == .wall, seed: plan.fake.seed))
        case .kms, .auto: source = plan.source
        }
        if plan.crc || plan.writeback != nil { throw Refusal.checksNeedOneOutput }
        let displays = try KMSDisplay.openOutputs(
            connectors: connectors, device: plan.device, source: source, mode: mode, modes: modes,
            vrr: plan.vrr ?? .auto, rate: plan.configuration.range)
        var made: [SessionSinks] = []
        do {
            let names = KMSDisplay.outputNames(displays)
            let spansCards = Set(displays.map { ObjectIdentifier($0.device) }).count > 1
            // Each output named by the injected lateness is one of the outputs run.
            var targets: [String: Int] = [:]
            for target in plan.injectLate.names {
                targets[target] = try output(named: target, names: names, displays: displays)
            }
            for (d, name) in zip(displays, names) {
                if let note = d.vrrNote { notice(.display(output: name, note)) }
                if let n = latencyNotice(plan, d, output: name) { notice(n) }
                if let n = rateNotice(plan, d, output: name) { notice(n) }
            }
            for (d, name) in zip(displays, names) {
                let id = OutputName(
                    connector: d.output.connector.name, name: name, card: spansCards ? d.device.path : nil)
                let sinks = try plan.sinks(id)
                sinks.connector = id.connector
                sinks.card = id.card
                sinks.outputName = id.name
                made.append(sinks)
            }
            var outputs: [Output] = []
            for (i, d) in displays.enumerated() {
                var config = plan.configuration
                config.injectLate = try plan.injectLate.frames(of: names[i]) { targets[$0] == i }
                let id = OutputName(connector: d.output.connector.name, name: names[i], card: made[i].card)
                let captures = WritebackCaptures(schedule: nil, pngBase: plan.capturePNGBase)
                outputs.append(try makeOutput(plan, d, name: id, sinks: made[i], config: config, captures: captures))
            }
            return OutputGroupRun(outputs: outputs)
        } catch {
            for s in made { s.discard() }
            for d in displays.reversed() { try? d.close() }
            throw error
        }
    }

    /// The output `target` names: one of `names`, or a bare connector name that only one
    /// output has.
    private static func output(named target: String, names: [String], displays: [KMSDisplay]) throws -> Int {
        if let i = names.firstIndex(of: target) { return i }
        let bare = displays.indices.filter { displays[$0].output.connector.name == target }
        if bare.count == 1 { return bare[0] }
        if bare.count > 1 { throw Refusal.injectLateTargetAmbiguous(target: target, outputs: bare.map { names[$0] }) }
        throw Refusal.injectLateTargetNotRun(target: target, outputs: names)
    }

    private static func latencyNotice(
        _ plan: OutputGroupPlan, _ display: any DisplayBackend, output: String?
    ) -> Notice? {
        plan.configuration.latency > 1 + display.queueCapacity
            ? .latencyCapped(output: output, requested: plan.configuration.latency, display: display) : nil
    }

    private static func rateNotice(_ plan: OutputGroupPlan, _ display: any DisplayBackend, output: String?) -> Notice? {
        let rate = EffectiveRate.select(
            for: plan.configuration.range, refreshHz: 1e9 / display.refreshInterval, vrr: display.vrrRange)
        return rate.unevenRateNote.map { .unevenRate(output: output, $0) }
    }

    /// The output's renderer, run and sinks, attached and started.
    private static func makeOutput(
        _ plan: OutputGroupPlan, _ display: any DisplayBackend, name: OutputName?, sinks: SessionSinks,
        config: RunConfiguration, captures: WritebackCaptures
    ) throws -> Output {
        var config = config
        config.commitMargin = display.recommendedCommitMargin
        // One HUD per output: its figures start at the first frame (rates known), every
        // completed frame updates them, and they are drawn over each rendered frame.
        let hud: HUDSink? = plan.hud ? HUDSink() : nil
        let verifying = plan.crc || plan.writeback != nil
        let renderer = makeRenderer(
            scene: plan.scene, hud: hud, captures: captures, staleFrame: plan.staleFrame, identity: verifying)
        sinks.prepare(driver: RunDisplay.driverName(display))
        let run = try PacingRun(backend: display, configuration: config, renderer: renderer)
        sinks.attach(run)
        try sinks.startMetrics(labels: RunDisplay.metricsLabels(display))
        if let hud { sinks.add(hud) }
        // Frame ids to frame indexes, for the stale frames the CRC check names.
        let indexes: FrameIndexes? = verifying ? FrameIndexes() : nil
        if let indexes { sinks.add(indexes) }
        return Output(display: display, name: name, run: run, sinks: sinks, captures: captures, indexes: indexes)
    }

    /// Runs every output until each reaches its frame count or duration, `shouldStop` returns
    /// true, or its device is lost; completes every output's sinks (with the scanout checks'
    /// results in the summary) and closes every display. One result per output, in order.
    /// An output file that fails stops being written; the displays keep running.
    public func run(shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> [Result] {
        defer { close() }
        let summaries: [RunSummary]
        if outputs.count == 1 {
            summaries = [try outputs[0].run.run(shouldStop: shouldStop)]
        } else {
            // One group per card, each on its own thread; outputs of one card take turns on one.
            let cards = outputs.map { o in (o.display as? KMSDisplay).map { ObjectIdentifier($0.device) } }
            var order: [ObjectIdentifier?] = []
            for c in cards where !order.contains(c) { order.append(c) }
            let members = order.map { c in outputs.indices.filter { cards[$0] == c } }
            let grouped = try PacingGroup.runTogether(
                members.map { PacingGroup(runs: $0.map { outputs[$0].run }) }, shouldStop: shouldStop)
            var byOutput = [RunSummary?](repeating: nil, count: outputs.count)
            for (m, s) in zip(members, grouped) { for (i, summary) in zip(m, s) { byOutput[i] = summary } }
            summaries = byOutput.map { $0! }
        }
        return zip(outputs, summaries).map { o, s in
            var summary = s
            Self.amendChecks(&summary, o)
            return Result(display: o.display, name: o.name, summary: o.sinks.finish(summary))
        }
    }

    /// Closes every display (restoring its CRTC), last opened first. ``run(shouldStop:)`` does;
    /// call it when the outputs are opened but not run. Closing twice does nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        for o in outputs.reversed() { try? o.display.close() }
    }
}
