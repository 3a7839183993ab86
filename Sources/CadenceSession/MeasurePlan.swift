import CadenceCore
import DRM
import KMSDisplay

/// What `cadence measure` does, for one output or several, already parsed: the card to open,
/// the outputs to flip, for how long, and the checks. ``MeasureSession/open(_:notice:)`` opens
/// it.
public struct MeasurePlan {
    /// The outputs measured: one (a group of one), or several at once.
    public enum Outputs: Equatable, Sendable {
        /// One output: `connector` (`NAME` or `cardN-NAME`; nil: the first connected) in `mode`
        /// (`WxH[@HZ]`; nil: its preferred mode).
        case one(connector: String?, mode: String?)
        /// Several outputs: `connectors` (or `["all"]`: every connected one, on every card unless
        /// a device is given), each in `mode` (nil: its preferred mode).
        case several(connectors: [String], mode: String?)
    }

    /// Flips after the modeset that settle the pipeline and are not measured, unless a plan says
    /// otherwise.
    public static let defaultWarmupFlips = 3

    /// The card asked for: `kms` (or `auto`, the same here: measuring never falls back to a
    /// simulator) or `fakeDRM`; the fake display has no CRTC to measure and is refused.
    public var backend: DisplayChoice.Backend
    /// The card node (nil: the one a `cardN-NAME` connector names, else the first card; with
    /// several outputs and `all`, every card).
    public var device: String?
    /// Where `kms` and `auto` find and open their cards.
    public var source: DeviceSource
    /// The outputs to measure.
    public var outputs: Outputs
    /// Seconds to flip for after the warm-up (more than 0, at most a day).
    public var durationSeconds: Double
    /// Flips after the modeset that are not measured.
    public var warmupFlips: Int
    /// How each output's buffers are allocated.
    public var allocator: BufferAllocator
    /// The modeset API.
    public var api: ModesetAPI
    /// Check every measured flip against the CRTC's CRC (one output, fixed refresh).
    public var crc: Bool
    /// `off`: measure the fixed refresh; `on`: sweep rates across the panel's VRR range (one
    /// output); `auto`: sweep when VRR is available, else measure the fixed refresh.
    public var vrr: VRRPolicy

    /// A plan measuring `outputs` for `durationSeconds` on `backend`; no checks, fixed refresh,
    /// ``defaultWarmupFlips`` flips of warm-up, until set.
    public init(
        backend: DisplayChoice.Backend = .kms, device: String? = nil, source: DeviceSource = .live,
        outputs: Outputs = .one(connector: nil, mode: nil), durationSeconds: Double = 5,
        allocator: BufferAllocator = .dumb, api: ModesetAPI = .auto
    ) {
        self.backend = backend
        self.device = device
        self.source = source
        self.outputs = outputs
        self.durationSeconds = durationSeconds
        self.warmupFlips = Self.defaultWarmupFlips
        self.allocator = allocator
        self.api = api
        self.crc = false
        self.vrr = .off
    }
}

/// One output's measurement of its fixed refresh: where it ran, what was recorded, and the
/// verdict.
public struct MeasureResult {
    /// Why a measurement fails.
    public enum Failure {
        /// Fewer than two flips were recorded: nothing to measure (`flips` were).
        case tooFewFlips(Int)
        /// A timestamp check failed.
        case check(TimestampCheck)
        /// The CRC check saw mismatches (the summary counts them).
        case scanout(ScanoutSummary)
    }

    /// Its name (nil for a one-output measurement).
    public let name: OutputName?
    /// Its card node.
    public let device: String
    /// Its card's driver.
    public let driver: String
    /// The fake DRM device's name when the card is a simulator (nil for a real card).
    public let simulator: String?
    /// The connector and mode measured.
    public let selection: OutputSelection
    /// The modeset API used.
    public let api: ModesetAPI
    /// How its buffers were allocated.
    public let allocator: BufferAllocator
    /// The plan's duration, seconds.
    public let durationSeconds: Double
    /// Flips not measured after the modeset.
    public let warmupFlips: Int
    /// The flips recorded.
    public let recording: FlipRecording
    /// The refresh measured from them, with its checks.
    public let measurement: RefreshMeasurement

    /// What failed, in order: too few flips, each failed timestamp check, the CRC check's
    /// mismatches. Empty when the measurement passed.
    public var failures: [Failure] {
        var f: [Failure] = []
        if measurement.flips < 2 { f.append(.tooFewFlips(measurement.flips)) }
        for c in measurement.checks where c.passed == false { f.append(.check(c)) }
        if let v = recording.scanout, v.mismatches > 0 { f.append(.scanout(v)) }
        return f
    }
}

/// A VRR sweep of one output (``MeasurePlan/vrr``): the range swept and each step.
public struct VRRSweepResult {
    /// Its card node.
    public let device: String
    /// Its card's driver.
    public let driver: String
    /// The fake DRM device's name when the card is a simulator (nil for a real card).
    public let simulator: String?
    /// The connector and its fixed mode.
    public let selection: OutputSelection
    /// The panel's VRR range, Hz.
    public let range: ClosedRange<Double>
    /// Each rate asked for and what the panel made of it, in order.
    public let steps: [VRRSweepStep]
    /// True when the sweep was stopped before its last step.
    public let stopped: Bool

    /// The steps in the range whose mean interval missed the requested one by more than 1%.
    public var missed: [VRRSweepStep] { steps.filter { !$0.belowRange && !$0.held } }
}
