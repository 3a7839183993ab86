import ArgumentParser
import CadenceCore
import DRM
import Foundation
import KMSDisplay
import Scenes

/// `cadence run`: drive the pacing core on a KMS display or the fake display and account for
/// every frame. Bad input: one line on stderr, exit 2. Device lost mid-run: summary, exit 1.
/// An output file that stops being written, or a closed stdout: the run goes on, exit 3.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Pace frames on a KMS or fake display and account for every drop.",
        discussion: """
            A display link produces frames at the rate chosen from --rate (a divisor of the
            refresh, or any rate inside a VRR range); each frame is presented at its target
            vblank, and the kernel's flip timestamps decide what was on time, late by how many
            refreshes, or discarded, and why (render-late, scheduler-late, flip-late, busy,
            device-lost). Without a DRM device the fake display (virtual time) is used.

            Exit status: 0 done, 1 device lost, 2 bad input or device error, 3 done but an
            output is incomplete (a --log/--csv/--summary file stopped being written: full
            disk, size limit, removed; or stdout closed). A file that fails stops with one
            stderr line; the display keeps running and the lines written stay.

            Examples:
              cadence run --backend fake --frames 600 --inject-late 100:1,250:3 --json
              cadence run --backend fake --rate 10:60:26 --frames 300 --json
              cadence run --backend fake --content-rate 24 --duration 10 --log run.jsonl
              cadence run --scene bar --hud --duration 5
              cadence run --scene solid --duration 5
            """)

    @Option(help: "Display backend: auto (KMS when a device opens, else fake), kms or fake.")
    var backend: String = "auto"
    @Option(help: "DRM card node for --backend kms (default: the first /dev/dri/card*).")
    var device: String?
    @Option(help: "Connector name for KMS, e.g. Virtual-1 (default: the first connected).")
    var connector: String?
    @Option(help: "KMS mode WxH or WxH@HZ (default: preferred).")
    var mode: String?

    @Option(name: .customLong("fake-refresh"), parsing: .unconditional, help: "Fake display refresh in Hz (59.94, 60, 144…).")
    var fakeRefresh: Double = 60
    @Option(name: .customLong("fake-vrr"), help: "Fake display VRR range MIN:MAX in Hz.")
    var fakeVRR: String?
    @Option(name: .customLong("fake-jitter-us"), parsing: .unconditional, help: "Fake vblank timestamp jitter, ± µs.")
    var fakeJitterUs: Double = 0
    @Option(name: .customLong("fake-drift-ppm"), parsing: .unconditional, help: "Fake clock drift in ppm.")
    var fakeDriftPPM: Double = 0
    @Option(name: .customLong("fake-clock"), help: "Fake clock: virtual (as fast as possible) or wall (real time).")
    var fakeClock: String = "virtual"

    @Option(help: "Frame-rate range MIN:MAX:PREFERRED in Hz (0 = unconstrained).")
    var rate: String?
    @Option(name: .customLong("min-duration"), parsing: .unconditional, help: "Present each frame no earlier than the previous one's actual presentation + MS.")
    var minDuration: Double?
    @Option(name: .customLong("content-rate"), parsing: .unconditional, help: "Present content frame n at t0 + n/HZ (24 on 60 Hz: 3,2,3,2).")
    var contentRate: Double?
    @Option(parsing: .unconditional, help: "Frame latency (pipelining depth) 1–3.")
    var latency: Int = 1
    @Option(parsing: .unconditional, help: "Stop after N frames.")
    var frames: Int?
    @Option(parsing: .unconditional, help: "Stop after S seconds (default 5 when --frames is not given).")
    var duration: Double?
    @Option(parsing: .unconditional, help: "Seed for the fake display's jitter.")
    var seed: UInt64 = 0
    @Option(help: "Write one JSON record per frame to FILE (JSON lines, format version 1).")
    var log: String?
    @Option(name: .customLong("inject-late"), help: "FRAME:K[,FRAME:K…]: that frame's rendering ends K−½ refreshes after its deadline.")
    var injectLate: String?
    @Option(help: "Scene to draw (see `cadence scenes`), or solid (plain colours, no rendering cost).")
    var scene: String = "bar"
    @Flag(help: "Draw the performance HUD (fps, rates, drops, interval chart) over the scene.")
    var hud = false
    @Flag(help: "Print the summary as one JSON object.")
    var json = false
    @OptionGroup var outputs: RunOutputOptions

    func run() throws {
        try exitTwoOnError("run") { try execute() }
    }

    /// Everything up to the run itself fails with exit 2; the run ends with 0 or 1.
    private func execute() throws {
        let summary = try pace()
        try printSummary(summary)
        if summary.endReason.hasPrefix("device-lost") { throw ExitCode(1) }
        if let code = StandardStreams.incompleteOutputStatus(summary.incompleteOutputs) { throw ExitCode(code) }
    }

    /// Runs to the end (or SIGINT/SIGTERM) and returns the summary; outputs are complete and the
    /// display is closed (CRTC restored) when it returns. `validate` runs this too.
    func pace(onRun: ((PacingRun, RunOutputs) -> Void)? = nil) throws -> RunSummary {
        let config = try makeConfiguration()
        let sceneRenderer: SceneRenderer?
        if scene == "solid" {
            guard !hud else { throw CLIFailure("--hud needs a scene; --scene solid draws plain colours only") }
            sceneRenderer = nil
        } else {
            guard let s = SceneCatalog.scene(named: scene) else {
                throw CLIFailure("unknown scene '\(scene)': choose solid or one of \(SceneCatalog.names.joined(separator: ", "))")
            }
            sceneRenderer = SceneRenderer(scene: s)
        }
        // One HUD state per run: created at the first frame (rates known), updated by every
        // completed frame, drawn over each rendered frame.
        let hudState: HUDState? = hud ? HUDState() : nil
        let fakeConfig = try makeFakeConfiguration(surface: sceneRenderer != nil)
        let out = try RunOutputs(log: log, options: outputs)

        let display = try out.discardOnError { try openBackend(fakeConfig) }
        var runConfig = config
        if display is KMSDisplay { runConfig.commitMargin = 1_000_000 }
        StopSignal.install()
        defer {
            StopSignal.remove()
            if let k = display as? KMSDisplay { try? k.close() }
        }

        let renderer: FrameRenderer
        if let sr = sceneRenderer {
            renderer = { surface, ctx in
                let c = Scenes.FrameContext(frameIndex: ctx.frameIndex, time: ctx.time, refreshHz: ctx.refreshHz, effectiveRateHz: ctx.effectiveRateHz)
                if let h = hudState {
                    if h.stats == nil { h.stats = HUDStats(refreshHz: ctx.refreshHz, effectiveRateHz: ctx.effectiveRateHz) }
                    h.stats!.effectiveRateHz = ctx.effectiveRateHz
                }
                sr.render(base: surface.base, width: surface.width, height: surface.height, stride: surface.stride, context: c,
                          hud: hudState?.stats)
            }
        } else {
            let colours: [UInt32] = [0x00C0_3030, 0x0030_C030, 0x0030_30C0, 0x00C0_C030]
            renderer = { surface, ctx in surface.fill(colours[ctx.frameIndex & 3]) }
        }
        let run = try out.discardOnError { try PacingRun(backend: display, configuration: runConfig, renderer: renderer) }
        out.attach(run, configuration: runConfig)
        if let h = hudState {
            let logFrame = run.onFrame
            run.onFrame = { r in
                logFrame?(r)
                h.frame(r)
            }
        }
        onRun?(run, out)
        // An output file that fails stops being written; the display keeps running.
        return out.finish(try run.run(shouldStop: { StopSignal.received != 0 }))
    }

    func makeConfiguration() throws -> RunConfiguration {
        var c = RunConfiguration()
        if let r = rate { c.range = try FrameRateRange(parsing: r) }
        if let ms = minDuration {
            guard ms.isFinite, ms >= 0, ms <= 10_000 else { throw CLIFailure("--min-duration must be 0 to 10000 ms") }
            c.minimumDuration = Nanoseconds((ms * 1e6).rounded())
        }
        c.contentRate = contentRate
        c.latency = latency
        c.frames = frames
        if let s = duration {
            guard s.isFinite, s > 0, s <= 86_400 else { throw CLIFailure("--duration must be seconds > 0") }
            c.duration = Nanoseconds((s * 1e9).rounded())
        } else if frames == nil {
            c.duration = 5_000_000_000
        }
        if let i = injectLate { c.injectLate = try RunConfiguration.parseInjectLate(i) }
        try c.validate()
        return c
    }

    func makeFakeConfiguration(surface: Bool) throws -> FakeDisplayConfiguration {
        guard fakeRefresh.isFinite, fakeRefresh > 0, fakeRefresh <= 1000 else {
            throw CLIFailure("--fake-refresh must be a rate in Hz between 0 and 1000")
        }
        var c = FakeDisplayConfiguration(refreshHz: fakeRefresh, seed: seed)
        if let v = fakeVRR {
            let p = v.split(separator: ":")
            guard p.count == 2, let lo = Double(p[0]), let hi = Double(p[1]), lo > 0, hi >= lo, hi <= 1000 else {
                throw CLIFailure("--fake-vrr '\(v)' must be MIN:MAX in Hz with 0 < MIN ≤ MAX")
            }
            c.vrrRange = lo...hi
        }
        guard fakeJitterUs.isFinite, fakeJitterUs >= 0 else { throw CLIFailure("--fake-jitter-us must be ≥ 0") }
        c.jitter = Nanoseconds(fakeJitterUs * 1000)
        guard fakeDriftPPM.isFinite, abs(fakeDriftPPM) < 100_000 else { throw CLIFailure("--fake-drift-ppm is out of range") }
        c.driftPPM = fakeDriftPPM
        switch fakeClock {
        case "virtual": c.clock = .virtual
        case "wall": c.clock = .wall
        default: throw CLIFailure("--fake-clock must be virtual or wall")
        }
        if surface {
            c.surfaceWidth = 1280
            c.surfaceHeight = 720
        }
        return c
    }

    func openBackend(_ fake: FakeDisplayConfiguration) throws -> any DisplayBackend {
        switch backend {
        case "fake":
            return FakeDisplay(fake)
        case "kms":
            return try selecting { try KMSDisplay.open(device: device, connector: connector, mode: mode) }
        case "auto":
            do {
                return try KMSDisplay.open(device: device, connector: connector, mode: mode)
            } catch {
                let why = String(describing: error)
                let what = fake.vrrRange.map { "VRR \($0.lowerBound)–\($0.upperBound) Hz" } ?? "\(fake.refreshHz) Hz"
                StandardStreams.errorLine("cadence run: no usable DRM device (\(why)); using the fake display at \(what)")
                return FakeDisplay(fake)
            }
        default:
            throw CLIFailure("--backend must be auto, kms or fake")
        }
    }

    func printSummary(_ s: RunSummary) throws {
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            print(String(decoding: try enc.encode(s), as: UTF8.self))
            return
        }
        let f = { (v: Double) in String(format: "%.3f", v) }
        print("backend           \(s.backend)  refresh \(f(s.refreshHz)) Hz  effective \(f(s.effectiveRateHz)) Hz  latency \(s.latency)")
        print("frames            \(s.frames)  presented \(s.presented) (on time \(s.onTime), late \(s.late))  discarded \(s.discarded)  failed \(s.failed)  unconfirmed \(s.unconfirmed)")
        print("dropped           \(s.droppedRefreshes) refreshes in \(s.dropEvents) events  hitch \(f(s.hitchTimeRatio)) ms/s")
        print("interval ms       mean \(f(s.intervalMs.mean))  stddev \(f(s.intervalMs.stddev))  p50 \(f(s.intervalMs.p50))  p99 \(f(s.intervalMs.p99))  max \(f(s.intervalMs.max))")
        let units = s.intervalRefreshes.sorted { (Int($0.key.filter(\.isNumber)) ?? 0) < (Int($1.key.filter(\.isNumber)) ?? 0) }
        print("interval refr.    " + units.map { "\($0.key)×: \($0.value)" }.joined(separator: "  "))
        if !s.causes.isEmpty {
            print("causes            " + s.causes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "  "))
        }
        print("end               \(s.endReason)  (\(f(s.durationSeconds)) s shown, \(f(s.measuredRateHz)) Hz measured)")
        for o in s.incompleteOutputs ?? [] { print("INCOMPLETE        \(o)") }
    }
}

/// The HUD figures of one `cadence run --hud`, shared by the renderer and the frame hook.
final class HUDState {
    var stats: HUDStats?

    /// Adds a completed frame: its dropped refreshes and, when shown, its interval.
    func frame(_ r: FrameReport) {
        guard stats != nil else { return }
        stats!.droppedRefreshes += r.droppedRefreshes
        if r.wasPresented && r.interval > 0 { stats!.recordFrame(intervalMs: Double(r.interval) / 1e6) }
    }
}
