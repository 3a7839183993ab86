import CadenceCore
import CadenceSession
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
///   ``FakeDRMProfileFile`` (default: the vkms capture), on virtual time (or the wall clock with
///   `--fake-clock wall`); it names itself "fake-drm" in every summary, so it is a simulator
///   too, chosen only when asked for.
enum BackendChoice {
    /// Who asks: `validate` refuses the fallback.
    enum Purpose { case run, validate }

    /// The line `validate --backend auto` fails with on a machine without a DRM card.
    static let validateNeedsDisplay = "no DRM device: validate needs a real display; use --backend fake to validate the simulator"

    /// Opens the display; `notice` is the one line to print on stderr when `auto` fell back to
    /// the fake display. Throws a one-line ``CLIFailure`` (exit 2).
    /// `vrr` (`--vrr`, nil when not given: auto) and `rate` (the link's range) choose variable
    /// refresh on KMS; `notice` then also carries the note when auto wanted VRR that is unavailable.
    static func open(backend: String, device: String?, connector: String?, mode: String?,
                     fake: FakeDisplayConfiguration, source: DeviceSource = .live,
                     purpose: Purpose, vrr: String? = nil, rate: FrameRateRange = .default) throws -> (display: any DisplayBackend, notice: String?) {
        let policy = try vrrPolicy(vrr)
        func kms(_ source: DeviceSource) throws -> (display: any DisplayBackend, notice: String?) {
            let d = try openKMS(device: device, connector: connector, mode: mode, source: source, vrr: policy, rate: rate)
            return (d, d.vrrNote)
        }
        switch backend {
        case "fake":
            if vrr != nil { throw CLIFailure("--vrr is for kms and fake-drm backends: the fake display takes --fake-vrr MIN:MAX") }
            return (FakeDisplay(fake), nil)
        case "kms":
            return try kms(source)
        case let b where isFakeDRM(b):
            return try kms(.fake(try fakeDRMDevices(b, wallClock: fake.clock == .wall, seed: fake.seed)))
        case "auto":
            if device == nil && source.discover().isEmpty {
                if purpose == .validate { throw CLIFailure(validateNeedsDisplay) }
                if policy == .on { throw CLIFailure("--vrr on needs a KMS display, and this machine has no DRM device") }
                let what = fake.vrrRange.map { "VRR \(format($0.lowerBound))–\(format($0.upperBound)) Hz" } ?? "\(format(fake.refreshHz)) Hz"
                return (FakeDisplay(fake), "no DRM device (/dev/dri has no card* nodes): using the fake display at \(what), a simulator")
            }
            return try kms(source)
        default:
            throw CLIFailure("--backend must be auto, kms, fake or fake-drm[:PROFILE]")
        }
    }

    /// True for `fake-drm` and `fake-drm:PROFILE`.
    static func isFakeDRM(_ backend: String) -> Bool { backend == "fake-drm" || backend.hasPrefix("fake-drm:") }

    /// The fake DRM devices `backend` (`fake-drm[:PROFILE[,PROFILE…]]`, one card per profile)
    /// names; throws a one-line error for a profile that cannot be found or read.
    static func fakeDRMDevices(_ backend: String, wallClock: Bool = false, seed: UInt64 = 0) throws -> [FakeDRMDevice] {
        try FakeDRMProfileFile.loadAll(profileSpec(backend)).map { $0.makeDevice(wallClock: wallClock, seed: seed) }
    }

    /// What follows `fake-drm:` (nil for plain `fake-drm`).
    static func profileSpec(_ backend: String) -> String? {
        backend.hasPrefix("fake-drm:") ? String(backend.dropFirst("fake-drm:".count)) : nil
    }

    private static func openKMS(device: String?, connector: String?, mode: String?, source: DeviceSource,
                                vrr: VRRPolicy, rate: FrameRateRange) throws -> KMSDisplay {
        do {
            return try selecting { try KMSDisplay.open(device: device, connector: connector, mode: mode, vrr: vrr, rate: rate, source: source) }
        } catch let f as CLIFailure where vrr == .on && f.description.hasPrefix("VRR unavailable") {
            throw CLIFailure("--vrr on: " + f.description)
        }
    }

    /// `--vrr auto|on|off` (nil: auto); a bad value is one line.
    static func vrrPolicy(_ text: String?) throws -> VRRPolicy {
        guard let text else { return .auto }
        guard let p = VRRPolicy(rawValue: text) else { throw CLIFailure("invalid --vrr '\(text)': expected auto, on or off") }
        return p
    }

    private static func format(_ hz: Double) -> String {
        hz == hz.rounded() ? String(Int(hz)) : String(hz)
    }
}
