import CadenceCore
import CadenceReport
import DRM
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
