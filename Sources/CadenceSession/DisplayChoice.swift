import CadenceCore
import DRM
import KMSDisplay

/// How a run chooses its display, so that nothing ever runs on the simulator by accident:
///
/// - ``Backend/fake``: the fake display (virtual time).
/// - ``Backend/kms``: the DRM device (the one given, else the first card node); any failure is
///   an error.
/// - ``Backend/auto``: like `kms`, except that a machine with no DRM card at all (no device
///   given and no /dev/dri/card* node) runs on the fake display and says so in one line. A card
///   that exists but cannot be opened or mastered (EACCES, another DRM master, EBUSY) is an
///   error with the reason and what to do, never a fallback. ``Purpose/validate`` never falls
///   back: judging the simulator needs `fake`.
/// - ``Backend/fakeDRM(profiles:)``: the real KMS code (`KMSDisplay`) over a fake DRM device
///   playing a ``FakeDRMProfileFile`` (default: the vkms capture), on virtual time (or the wall
///   clock); it names itself "fake-drm" in every summary, so it is a simulator too, chosen only
///   when asked for.
public enum DisplayChoice {
    /// Who asks: `validate` refuses the fallback.
    public enum Purpose: Sendable { case run, validate }

    /// The display asked for.
    public enum Backend: Equatable, Sendable {
        case auto, kms, fake
        /// Fake DRM devices playing profiles: `PROFILE[,PROFILE…]`, one card each (nil: the
        /// default profile).
        case fakeDRM(profiles: String?)

        /// Parses "auto", "kms", "fake", "fake-drm" or "fake-drm:PROFILE[,PROFILE…]"; nil for
        /// anything else.
        public init?(_ text: String) {
            switch text {
            case "auto": self = .auto
            case "kms": self = .kms
            case "fake": self = .fake
            case "fake-drm": self = .fakeDRM(profiles: nil)
            case let t where t.hasPrefix("fake-drm:"): self = .fakeDRM(profiles: String(t.dropFirst("fake-drm:".count)))
            default: return nil
            }
        }
    }

    /// What the choice refuses, besides the device's own errors (`OutputSelectionError`,
    /// ``SessionError`` for a profile).
    public enum Refusal: Error, Equatable, Sendable {
        /// A VRR policy was given for the fake display (which takes its own VRR range).
        case vrrOnFake
        /// `validate` on a machine without a DRM card.
        case validateNeedsDisplay
        /// VRR `on` on a machine without a DRM card.
        case vrrOnWithoutDevice
        /// VRR `on` and the output has none: the reason (it starts "VRR unavailable").
        case vrrUnavailable(String)
    }

    /// Opens the display; `notice` is the one line to show when `auto` fell back to the fake
    /// display, or the note when VRR was wanted (`auto`) but is unavailable. `vrr` is the
    /// policy given (nil: none given, `auto` on KMS) and `rate` the link's range.
    public static func open(
        backend: Backend, device: String?, connector: String?, mode: String?,
        fake: FakeDisplayConfiguration, source: DeviceSource = .live,
        purpose: Purpose, vrr: VRRPolicy? = nil, rate: FrameRateRange = .default
    ) throws -> (display: any DisplayBackend, notice: String?) {
        let policy = vrr ?? .auto
        func kms(_ source: DeviceSource) throws -> (display: any DisplayBackend, notice: String?) {
            let d = try openKMS(
                device: device, connector: connector, mode: mode, source: source, vrr: policy, rate: rate)
            return (d, d.vrrNote)
        }
        switch backend {
        case .fake:
            if vrr != nil { throw Refusal.vrrOnFake }
            return (FakeDisplay(fake), nil)
        case .kms:
            return try kms(source)
        case .fakeDRM(let profiles):
            return try kms(
                .fake(try fakeDRMDevices(profiles: profiles, wallClock: fake.clock == .wall, seed: fake.seed)))
        case .auto:
            if device == nil && source.discover().isEmpty {
                if purpose == .validate { throw Refusal.validateNeedsDisplay }
                if policy == .on { throw Refusal.vrrOnWithoutDevice }
                let what =
                    fake.vrrRange.map { "VRR \(format($0.lowerBound))–\(format($0.upperBound)) Hz" }
                    ?? "\(format(fake.refreshHz)) Hz"
                return (
                    FakeDisplay(fake),
                    "no DRM device (/dev/dri has no card* nodes): using the fake display at \(what), a simulator"
                )
            }
            return try kms(source)
        }
    }

    /// The fake DRM devices `profiles` (`PROFILE[,PROFILE…]`, one card per profile; nil: the
    /// default) names; throws a one-line ``SessionError`` for a profile that cannot be found or
    /// read.
    public static func fakeDRMDevices(
        profiles: String?, wallClock: Bool = false, seed: UInt64 = 0
    ) throws -> [FakeDRMDevice] {
        try FakeDRMProfileFile.loadAll(profiles).map { $0.makeDevice(wallClock: wallClock, seed: seed) }
    }

    private static func openKMS(
        device: String?, connector: String?, mode: String?, source: DeviceSource,
        vrr: VRRPolicy, rate: FrameRateRange
    ) throws -> KMSDisplay {
        do {
            return try KMSDisplay.open(
                device: device, connector: connector, mode: mode, vrr: vrr, rate: rate, source: source)
        } catch let e as OutputSelectionError where vrr == .on && e.kind == .vrrUnavailable {
            throw Refusal.vrrUnavailable(e.description)
        }
    }

    private static func format(_ hz: Double) -> String {
        hz == hz.rounded() ? String(Int(hz)) : String(hz)
    }
}
