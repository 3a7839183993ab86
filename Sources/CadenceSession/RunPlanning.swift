import CadenceCore
import CadenceReport
import DRM
import KMSDisplay
import Scenes

#if canImport(Glibc)
import Glibc
#endif

/// The fake display's options of `cadence run` and `cadence validate` as given (`--fake-*`,
/// `--seed`), checked and turned into its `FakeDisplayConfiguration`. Each bad value is a
/// `RunSpec.Invalid` whose description is one line naming the option.
///
///     let o = FakeDisplayOptions(vrr: "48:144")
///     let config = try o.configuration(backend: "fake", surface: true)
public struct FakeDisplayOptions: Equatable, Sendable {
    /// `--fake-refresh`: the refresh in Hz.
    public var refreshHz: Double
    /// `--fake-vrr`: the VRR range as MIN:MAX in Hz (nil: none).
    public var vrr: String?
    /// `--fake-jitter-us`: the vblank timestamps' jitter, ± µs.
    public var jitterUs: Double
    /// `--fake-drift-ppm`: the clock's drift in ppm.
    public var driftPPM: Double
    /// `--fake-clock`: "virtual" or "wall".
    public var clock: String
    /// `--fake-session-pause`: AT:FOR[,…] in seconds (nil: none).
    public var sessionPause: String?
    /// `--seed`: the jitter's seed.
    public var seed: UInt64

    /// The options as given, each as its property describes; an option not given keeps its
    /// default (60 Hz, no VRR, no jitter or drift, virtual time, no session pause, seed 0).
    /// Nothing is checked until ``configuration(backend:surface:)``.
    public init(
        refreshHz: Double = 60, vrr: String? = nil, jitterUs: Double = 0, driftPPM: Double = 0,
        clock: String = "virtual", sessionPause: String? = nil, seed: UInt64 = 0
    ) {
        self.refreshHz = refreshHz
        self.vrr = vrr
        self.jitterUs = jitterUs
        self.driftPPM = driftPPM
        self.clock = clock
        self.sessionPause = sessionPause
        self.seed = seed
    }

    /// The timing options given (not at their defaults): they shape only the fake display; a
    /// fake DRM device takes its timing from its profile.
    public var timingOptionsGiven: [String] {
        var used: [String] = []
        if refreshHz != 60 { used.append("--fake-refresh") }
        if vrr != nil { used.append("--fake-vrr") }
        if jitterUs != 0 { used.append("--fake-jitter-us") }
        if driftPPM != 0 { used.append("--fake-drift-ppm") }
        return used
    }

    /// The configuration for a run on `backend` (the `--backend` given): timing options with
    /// `kms` or `fake-drm[:…]` are refused; `surface` gives the display a 1280x720 surface to
    /// draw a scene on.
    public func configuration(backend: String, surface: Bool) throws -> FakeDisplayConfiguration {
        typealias Invalid = RunSpec.Invalid
        let timing = timingOptionsGiven
        let source: String?
        switch DisplayChoice.Backend(backend) {
        case .kms?: source = "a real display has its own timing"
        case .fakeDRM?: source = "a fake DRM device takes its timing from its profile's \"cadence\" section"
        default: source = nil
        }
        if !timing.isEmpty, let source {
            let verb = timing.count == 1 ? "is" : "are"
            throw Invalid("\(timing.joined(separator: ", ")) \(verb) for --backend fake only: \(source)")
        }
        guard refreshHz.isFinite, refreshHz > 0, refreshHz <= 1000 else {
            throw Invalid("--fake-refresh must be a rate in Hz between 0 and 1000")
        }
        var c = FakeDisplayConfiguration(refreshHz: refreshHz, seed: seed)
        if let v = vrr {
            let p = v.split(separator: ":")
            guard p.count == 2, let lo = Double(p[0]), let hi = Double(p[1]), lo > 0, hi >= lo, hi <= 1000 else {
                throw Invalid("--fake-vrr '\(v)' must be MIN:MAX in Hz with 0 < MIN ≤ MAX")
            }
            c.vrrRange = lo...hi
        }
        guard jitterUs.isFinite, jitterUs >= 0 else { throw Invalid("--fake-jitter-us must be ≥ 0") }
        c.jitter = Nanoseconds(jitterUs * 1000)
        guard driftPPM.isFinite, abs(driftPPM) < 100_000 else { throw Invalid("--fake-drift-ppm is out of range") }
        c.driftPPM = driftPPM
        switch clock {
        case "virtual": c.clock = .virtual
        case "wall": c.clock = .wall
        default: throw Invalid("--fake-clock must be virtual or wall")
        }
        if let spec = sessionPause {
            for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
                let p = part.split(separator: ":", omittingEmptySubsequences: false)
                guard p.count == 2, let at = Double(p[0]), let d = Double(p[1]), at.isFinite, d.isFinite,
                    at >= 0, d > 0, at <= 86_400, d <= 86_400
                else {
                    throw Invalid("--fake-session-pause '\(spec)' must be AT:FOR[,…] in seconds (AT ≥ 0, FOR > 0)")
                }
                c.faults.append(
                    .sessionPaused(after: Nanoseconds((at * 1e9).rounded()), for: Nanoseconds((d * 1e9).rounded())))
            }
        }
        if surface {
            c.surfaceWidth = 1280
            c.surfaceHeight = 720
        }
        return c
    }
}

/// The pacing options of `cadence run` and `cadence validate` as given (`--rate`,
/// `--min-duration`, `--content-rate`, `--latency`, `--frames`, `--duration`, `--inject-late`,
/// `--render-cost`, `--adapt`), turned into a `RunConfiguration`.
///
///     let o = RunTimingOptions(frames: 600)
///     let config = try o.configuration(severalOutputs: false, connector: nil)
public struct RunTimingOptions: Equatable, Sendable {
    /// `--rate`: MIN:MAX:PREFERRED in Hz (nil: unconstrained).
    public var rate: String?
    /// `--min-duration`: ms.
    public var minDurationMs: Double?
    /// `--content-rate`: Hz.
    public var contentRate: Double?
    /// `--latency`: the pipelining depth.
    public var latency: Int
    /// `--frames`: stop after these frames.
    public var frames: Int?
    /// `--duration`: seconds (0: until stopped; nil: 5 s unless `frames` is given).
    public var durationSeconds: Double?
    /// `--inject-late`: each entry as given.
    public var injectLate: [String]
    /// `--render-cost`: FROM-TO:MS[,…].
    public var renderCost: String?
    /// `--adapt`: step the rate with the misses.
    public var adapt: Bool

    /// The options as given, each as its property describes; an option not given keeps its
    /// default (nil, latency 1, no `--inject-late`, no `--adapt`): nothing given runs 5 s at
    /// latency 1. Nothing is checked until ``configuration(severalOutputs:connector:)``.
    public init(
        rate: String? = nil, minDurationMs: Double? = nil, contentRate: Double? = nil, latency: Int = 1,
        frames: Int? = nil, durationSeconds: Double? = nil, injectLate: [String] = [], renderCost: String? = nil,
        adapt: Bool = false
    ) {
        self.rate = rate
        self.minDurationMs = minDurationMs
        self.contentRate = contentRate
        self.latency = latency
        self.frames = frames
        self.durationSeconds = durationSeconds
        self.injectLate = injectLate
        self.renderCost = renderCost
        self.adapt = adapt
    }

    /// Every `--inject-late` given: the frames late on every output and on named ones.
    public func injectLatePlan() throws -> RunSpec.InjectLatePlan { try RunSpec.injectLate(injectLate) }

    /// The configuration: for one output (`severalOutputs` false) every `--inject-late` entry is
    /// on it (`connector`, nil: the first connected); for several each output's own are set
    /// when the outputs are known. A bad value throws one line (`RunSpec.Invalid`, or the rate
    /// range's own error), then the configuration is validated (`RunConfiguration.Invalid`,
    /// which names the setting).
    public func configuration(severalOutputs: Bool, connector: String?) throws -> RunConfiguration {
        typealias Invalid = RunSpec.Invalid
        var c = RunConfiguration()
        if let r = rate { c.range = try FrameRateRange(parsing: r) }
        if let ms = minDurationMs {
            guard ms.isFinite, ms >= 0, ms <= 10_000 else { throw Invalid("--min-duration must be 0 to 10000 ms") }
            c.minimumDuration = Nanoseconds((ms * 1e6).rounded())
        }
        c.contentRate = contentRate
        c.latency = latency
        c.frames = frames
        if let s = durationSeconds {
            guard s.isFinite, s >= 0, s <= 86_400 else {
                throw Invalid("--duration must be 0 (until stopped) to 86400 seconds")
            }
            // 0: until SIGINT/SIGTERM/SIGHUP (or --frames).
            c.duration = s == 0 ? nil : Nanoseconds((s * 1e9).rounded())
        } else if frames == nil {
            c.duration = 5_000_000_000
        }
        let plan = try injectLatePlan()
        c.injectLate =
            severalOutputs ? plan.everyOutput : try plan.frames(of: connector ?? "the output") { _ in true }
        if let r = renderCost { c.renderCost = try RunSpec.renderCost(r) }
        c.adapt = adapt
        try c.validate()
        return c
    }
}

/// The lines `cadence run`, `validate` and `measure` show for the session library's notices and
/// refusals, each naming the options at fault.
public enum RunPlanning {
    /// The line when `display` cannot pipeline as deep as `requested` (KMS: 3 buffers, so
    /// latency 2 at most), else nil.
    public static func latencyNotice(requested: Int, display: any DisplayBackend) -> String? {
        let cap = 1 + display.queueCapacity
        guard requested > cap else { return nil }
        return
            "\(display.name) has \(display.queueCapacity + 2) buffers, so frame latency is capped at \(cap): --latency \(requested) runs as \(cap)"
    }

    /// The stderr line of `notice`: `cadence run: …` for one output, `cadence COMMAND: NAME: …`
    /// for one of several.
    public static func noticeLine(_ notice: OutputGroupRun.Notice, command: String) -> String {
        func line(_ output: String?, _ text: String) -> String {
            output.map { "cadence \(command): \($0): \(text)" } ?? "cadence run: \(text)"
        }
        switch notice {
        case .display(let output, let text), .unevenRate(let output, let text): return line(output, text)
        case .latencyCapped(let output, let requested, let display):
            return line(output, latencyNotice(requested: requested, display: display) ?? "")
        }
    }

    /// The one line of a refusal of the run.
    public static func refusalLine(_ refusal: OutputGroupRun.Refusal) -> String {
        switch refusal {
        case .severalOutputsNeedKMS:
            return
                "several outputs need a KMS display: --backend kms or fake-drm[:PROFILE] (the fake display has one output)"
        case .checksNeedOneOutput:
            return "--verify is not supported with several outputs yet: run one --connector at a time"
        case .injectLateTargetNotDriven(let target, let driven):
            return "--inject-late \(target)=…: the run drives \(driven), not \(target)"
        case .injectLateTargetAmbiguous(let target, let outputs):
            return
                "--inject-late \(target)=…: \(target) is on several cards: name one (\(outputs.joined(separator: ", ")))"
        case .injectLateTargetNotRun(let target, let outputs):
            return
                "--inject-late \(target)=…: \(target) is not one of the outputs run (\(outputs.joined(separator: ", ")))"
        case .checkNeedsKMS(let check, let display):
            return "--verify \(check) needs a KMS display (the \(display) display has no CRTC)"
        case .crcUnavailable(let e): return crcRefusalLine(e)
        case .writebackUnavailable(let e): return "--verify writeback: \(e)"
        }
    }

    /// The one line of a refusal of the display choice.
    public static func refusalLine(_ refusal: DisplayChoice.Refusal) -> String {
        switch refusal {
        case .vrrOnFake: return "--vrr is for kms and fake-drm backends: the fake display takes --fake-vrr MIN:MAX"
        case .validateNeedsDisplay:
            return "no DRM device: validate needs a real display; use --backend fake to validate the simulator"
        case .vrrOnWithoutDevice: return "--vrr on needs a KMS display, and this machine has no DRM device"
        case .vrrUnavailable(let why): return "--vrr on: " + why
        }
    }

    /// The one line for a CRC capture (`--verify crc`) that cannot start.
    public static func crcRefusalLine(_ e: CRCError) -> String {
        switch e {
        case .unsupported(let driver, _): return "--verify crc: not supported by \(driver)"
        default: return "--verify crc: \(e)"
        }
    }

    /// The scene `--scene NAME` draws: nil for `solid` (plain colours, no rendering cost),
    /// else the catalog's scene of that name. A `RunSpec.Invalid` of one line for an unknown
    /// name, or for `hud` (`--hud`) with `solid`.
    public static func scene(named name: String, hud: Bool) throws -> (any Scene)? {
        if name == "solid" {
            guard !hud else { throw RunSpec.Invalid("--hud needs a scene; --scene solid draws plain colours only") }
            return nil
        }
        guard let s = SceneCatalog.scene(named: name) else {
            throw RunSpec.Invalid(
                "unknown scene '\(name)': choose solid or one of \(SceneCatalog.names.joined(separator: ", "))")
        }
        return s
    }

    /// The rotation `--log-max-size` (`maxSize`) and `--log-keep` (`keep`) ask for (nil:
    /// none); a `RunSpec.Invalid` of one line for a bad size or count, or either without
    /// `--log` (`log`).
    public static func logRotation(log: String?, maxSize: String?, keep: Int?) throws -> LogRotation? {
        typealias Invalid = RunSpec.Invalid
        guard let text = maxSize else {
            if keep != nil { throw Invalid("--log-keep needs --log-max-size (the size at which the log rotates)") }
            return nil
        }
        guard log != nil else { throw Invalid("--log-max-size needs --log FILE") }
        let bytes: Int64
        do { bytes = try LogRotation.parseSize(text) } catch { throw Invalid("--log-max-size \(error)") }
        guard bytes >= LogRotation.minimumBytes else {
            throw Invalid(
                "--log-max-size \(text) is below the minimum of 64K (a log file must hold its header and many frames)")
        }
        let n = keep ?? LogRotation.defaultKeep
        guard (0...LogRotation.maximumKeep).contains(n) else {
            throw Invalid("--log-keep must be 0 to \(LogRotation.maximumKeep) (earlier files kept)")
        }
        return LogRotation(maxBytes: bytes, keep: n)
    }
}

extension OutputGroupRun {
    /// Runs the outputs until the end or SIGINT, SIGTERM or SIGHUP (`run(shouldStop:)`), with
    /// the signals' handlers installed for the run and removed after. A parent may start the
    /// process with those signals blocked (the mask is inherited through exec): they are
    /// unblocked first, so that the handlers run.
    public func runUntilSignalled() throws -> [Result] {
        let stop = SignalStop()
        defer { stop.remove() }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        return try run(shouldStop: { stop.isRequested })
    }
}
