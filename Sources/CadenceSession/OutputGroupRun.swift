import CadenceCore
import CadenceReport
import DRM
import Foundation
import KMSDisplay
import Scenes

/// What `cadence run` does, for one output or several, already parsed: the display to open,
/// the outputs to drive, the run's configuration, what to draw, where the frames go, and the
/// checks of what was scanned out. ``OutputGroupRun/open(_:notice:)`` opens it.
public struct OutputGroupPlan {
    /// The outputs a run drives: one (a group of one), or several at once.
    public enum Outputs: Equatable, Sendable {
        /// One output: `connector` (nil: the first connected) in `mode` (`WxH[@HZ]`; nil: its
        /// preferred mode).
        case one(connector: String?, mode: String?)
        /// Several outputs of KMS cards: `connectors` (or `["all"]`: every connected one), each in
        /// `mode` unless `modes` names its own (by connector or `cardN-NAME`).
        case several(connectors: [String], mode: String?, modes: [String: String])
    }

    /// The display asked for (several outputs need a KMS card: `kms`, `auto` or `fakeDRM`).
    public var backend: DisplayChoice.Backend
    /// The card node (nil: the first card; with several outputs, every card).
    public var device: String?
    /// Where `kms` and `auto` find and open their cards.
    public var source: DeviceSource
    /// The outputs to drive.
    public var outputs: Outputs
    /// The fake display's configuration (`fake`, and `auto` without a card); its clock and
    /// seed also drive the fake DRM devices of `fakeDRM`.
    public var fake: FakeDisplayConfiguration
    /// The VRR policy given (nil: none given, which is `auto`).
    public var vrr: VRRPolicy?
    /// Who asks (`validate` never falls back to the fake display).
    public var purpose: DisplayChoice.Purpose
    /// Every output's run configuration; each output's commit margin and injected lateness are
    /// set from its display and ``injectLate``.
    public var configuration: RunConfiguration
    /// The frames made late, on every output or on named ones.
    public var injectLate: RunSpec.InjectLatePlan
    /// The scene each output draws (nil: plain colours, no rendering cost).
    public var scene: (any Scene)?
    /// Draw the performance HUD over the scene (each output its own; without a scene, nothing
    /// is drawn).
    public var hud: Bool
    /// Check with the CRTC's CRC that the content changed exactly at each flip (one output).
    public var crc: Bool
    /// Capture these frames with the writeback connector and compare each with the render (nil:
    /// no writeback; one output). Capturing on a mismatch needs ``crc``.
    public var writeback: CaptureSchedule?
    /// Where the writeback captures' PNGs go (see ``WritebackCaptures/pngBase(log:)``).
    public var capturePNGBase: String
    /// This frame shows the previous frame's content (a stale buffer), to prove the CRC check
    /// sees it (nil: none).
    public var staleFrame: Int?
    /// Each output's sinks. Called with nil for one output, before its display opens (an
    /// unwritable path fails first); with each output's name for several, once their names are
    /// known. A sink list made before a later failure is discarded.
    public var sinks: (OutputName?) throws -> SessionSinks

    /// A plan driving `outputs` on `backend` with `configuration`, drawing `scene`; the rest is
    /// off (no HUD, no checks) until set. The configuration's injected lateness becomes
    /// ``injectLate``'s lateness of every output.
    public init(
        backend: DisplayChoice.Backend, device: String? = nil, source: DeviceSource = .live,
        outputs: Outputs = .one(connector: nil, mode: nil),
        fake: FakeDisplayConfiguration = FakeDisplayConfiguration(), vrr: VRRPolicy? = nil,
        purpose: DisplayChoice.Purpose = .run, configuration: RunConfiguration = RunConfiguration(),
        scene: (any Scene)? = nil, sinks: @escaping (OutputName?) throws -> SessionSinks
    ) {
        self.backend = backend
        self.device = device
        self.source = source
        self.outputs = outputs
        self.fake = fake
        self.vrr = vrr
        self.purpose = purpose
        self.configuration = configuration
        // The configuration's own injected lateness applies to every output unless the plan
        // names outputs (a library user sets one or the other).
        self.injectLate = RunSpec.InjectLatePlan()
        self.injectLate.everyOutput = configuration.injectLate
        self.scene = scene
        self.hud = false
        self.crc = false
        self.writeback = nil
        self.capturePNGBase = WritebackCaptures.pngBase(log: nil)
        self.staleFrame = nil
        self.sinks = sinks
    }
}

/// The name of one output of a run over several.
public struct OutputName: Equatable, Sendable {
    /// Its connector (`DP-1`).
    public var connector: String
    /// What it is called everywhere: the connector, or `cardN-NAME` when the outputs are on
    /// several cards.
    public var name: String
    /// Its card node, when the outputs are on several cards (nil otherwise).
    public var card: String?

    /// The output `name` on `connector` (of `card` across cards).
    public init(connector: String, name: String, card: String? = nil) {
        self.connector = connector
        self.name = name
        self.card = card
    }
}

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

    /// Draws `scene` (with the HUD, the frame identity), or plain colours without a scene; the
    /// stale frame draws the previous frame's content again.
    private static func makeRenderer(
        scene: (any Scene)?, hud: HUDSink?, captures: WritebackCaptures, staleFrame: Int?, identity: Bool
    ) -> FrameRenderer {
        guard let scene else {
            let colours: [UInt32] = [0x00C0_3030, 0x0030_C030, 0x0030_30C0, 0x00C0_C030]
            return { surface, ctx in
                let index = ctx.frameIndex == staleFrame && ctx.frameIndex > 0 ? ctx.frameIndex - 1 : ctx.frameIndex
                captures.rendered(ctx.frameIndex)
                surface.fill(colours[index & 3])
                if identity {
                    FrameIdentity.draw(
                        index, base: surface.base, width: surface.width, height: surface.height, stride: surface.stride)
                }
            }
        }
        let sr = SceneRenderer(scene: scene)
        return { surface, ctx in
            let index = ctx.frameIndex == staleFrame && ctx.frameIndex > 0 ? ctx.frameIndex - 1 : ctx.frameIndex
            captures.rendered(ctx.frameIndex)
            var c = SceneContext(ctx)
            c.frameIndex = index
            if let h = hud {
                if h.stats == nil { h.stats = HUDStats(refreshHz: ctx.refreshHz, effectiveRateHz: ctx.effectiveRateHz) }
                h.stats!.effectiveRateHz = ctx.effectiveRateHz
            }
            sr.render(
                base: surface.base, width: surface.width, height: surface.height, stride: surface.stride, context: c,
                hud: hud?.stats, identity: identity)
        }
    }

    private static func startCRC(_ display: any DisplayBackend) throws {
        guard let k = display as? KMSDisplay else { throw Refusal.checkNeedsKMS(check: "crc", display: display.name) }
        do { try k.verifyScanout() } catch { throw Refusal.crcUnavailable(error) }
    }

    /// Capturing on a mismatch without the CRC check, which flags the frames.
    struct OnMismatchNeedsCRC: Error, CustomStringConvertible {
        var description: String { "capturing on a mismatch needs the CRC check too (the CRC flags the frames)" }
    }

    private static func startWriteback(
        _ display: any DisplayBackend, captures: WritebackCaptures, onMismatch: Bool
    ) throws {
        guard let k = display as? KMSDisplay else {
            throw Refusal.checkNeedsKMS(check: "writeback", display: display.name)
        }
        do {
            try k.startWriteback(
                onMismatch: onMismatch,
                request: { captures.take() },
                deliver: { c in
                    captures.check(
                        label: c.label, width: c.width, height: c.height, rendered: c.rendered, captured: c.captured,
                        reason: c.reason, changeVBlank: c.changeVBlank)
                })
        } catch {
            throw Refusal.writebackUnavailable(error)
        }
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

    /// The scanout checks' results in the summary: the CRC's (its stale frames as indexes)
    /// and the writeback captures'. Capturing on a mismatch, the stale frames the full verdict
    /// found and the early one did not flag count as skipped too (their signal came too late).
    private static func amendChecks(_ summary: inout RunSummary, _ o: Output) {
        guard let k = o.display as? KMSDisplay else { return }
        if let indexes = o.indexes, var scanout = k.finishScanoutVerification() {
            scanout.staleFrames = scanout.staleFrames.map { FrameID(indexes.indexes[$0] ?? Int($0)) }
            summary.scanout = scanout
        }
        if let stats = k.finishWriteback() {
            var scanout = summary.scanout ?? ScanoutSummary()
            var skipped = stats.skipped
            if stats.onMismatch != nil { skipped += max(0, scanout.stale - stats.earlyStaleFlags) }
            scanout.writeback = o.captures.finish(
                skipped: skipped, timedOut: stats.timedOut, readMicroseconds: stats.readMicroseconds,
                onMismatch: stats.onMismatch)
            summary.scanout = scanout
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
