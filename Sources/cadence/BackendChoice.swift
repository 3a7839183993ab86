import CadenceCore
import DRM
import KMSDisplay

/// How `cadence run` and `cadence validate` choose their display, so that nothing ever runs on
/// the simulator by accident:
///
/// - `fake`: the fake display (virtual time).
/// - `kms`: the DRM device (`--device`, else the first card node); any failure is an error.
/// - `auto`: like `kms`, except that a machine with no DRM card at all (no `--device` given and
///   no /dev/dri/card* node) runs on the fake display and says so in one line. A card that
///   exists but cannot be opened or mastered (EACCES, another DRM master, EBUSY) is an error
///   with the reason and what to do, never a fallback. `validate` never falls back: judging the
///   simulator needs `--backend fake`.
/// - `fake-drm[:PROFILE]`: the real KMS code (``KMSDisplay``) over a fake DRM device playing a
///   ``ProfileFile`` (default: the vkms capture), on virtual time (or the wall clock with
///   `--fake-clock wall`); it names itself "fake-drm" in every summary, so it is a simulator
///   too, chosen only when asked for.
enum BackendChoice {
    /// Who asks: `validate` refuses the fallback.
    enum Purpose { case run, validate }

    /// The line `validate --backend auto` fails with on a machine without a DRM card.
    static let validateNeedsDisplay = "no DRM device: validate needs a real display; use --backend fake to validate the simulator"

    /// Opens the display; `notice` is the one line to print on stderr when `auto` fell back to
    /// the fake display. Throws a one-line ``CLIFailure`` (exit 2).
    static func open(backend: String, device: String?, connector: String?, mode: String?,
                     fake: FakeDisplayConfiguration, source: DeviceSource = .live,
                     purpose: Purpose) throws -> (display: any DisplayBackend, notice: String?) {
        switch backend {
        case "fake":
            return (FakeDisplay(fake), nil)
        case "kms":
            return (try openKMS(device: device, connector: connector, mode: mode, source: source), nil)
        case let b where isFakeDRM(b):
            let fakeDRM = try fakeDRMDevice(b, wallClock: fake.clock == .wall, seed: fake.seed)
            return (try openKMS(device: device, connector: connector, mode: mode, source: .fake(fakeDRM)), nil)
        case "auto":
            if device == nil && source.discover().isEmpty {
                if purpose == .validate { throw CLIFailure(validateNeedsDisplay) }
                let what = fake.vrrRange.map { "VRR \(format($0.lowerBound))–\(format($0.upperBound)) Hz" } ?? "\(format(fake.refreshHz)) Hz"
                return (FakeDisplay(fake), "no DRM device (/dev/dri has no card* nodes): using the fake display at \(what), a simulator")
            }
            return (try openKMS(device: device, connector: connector, mode: mode, source: source), nil)
        default:
            throw CLIFailure("--backend must be auto, kms, fake or fake-drm[:PROFILE]")
        }
    }

    /// True for `fake-drm` and `fake-drm:PROFILE`.
    static func isFakeDRM(_ backend: String) -> Bool { backend == "fake-drm" || backend.hasPrefix("fake-drm:") }

    /// The fake DRM device `backend` (`fake-drm[:PROFILE]`) names; throws a one-line error for a
    /// profile that cannot be found or read.
    static func fakeDRMDevice(_ backend: String, wallClock: Bool = false, seed: UInt64 = 0) throws -> FakeDRMDevice {
        let spec = backend.hasPrefix("fake-drm:") ? String(backend.dropFirst("fake-drm:".count)) : nil
        return try ProfileFile.load(spec).makeDevice(wallClock: wallClock, seed: seed)
    }

    private static func openKMS(device: String?, connector: String?, mode: String?, source: DeviceSource) throws -> KMSDisplay {
        try selecting { try KMSDisplay.open(device: device, connector: connector, mode: mode, source: source) }
    }

    private static func format(_ hz: Double) -> String {
        hz == hz.rounded() ? String(Int(hz)) : String(hz)
    }
}
