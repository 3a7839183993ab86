import CadenceCore
import CadenceSession
import DRM
import KMSDisplay

/// `--backend auto|kms|fake|fake-drm[:PROFILE]` for `cadence run` and `cadence validate`:
/// CadenceSession's `DisplayChoice` (which says what each does, and that nothing runs on the
/// simulator by accident) with the options' text and their one-line errors.
enum BackendChoice {
    /// Who asks: `validate` refuses the fallback.
    typealias Purpose = DisplayChoice.Purpose

    /// The line `validate --backend auto` fails with on a machine without a DRM card.
    static let validateNeedsDisplay = RunPlanning.refusalLine(.validateNeedsDisplay)

    /// Opens the display; `notice` is the one line to print on stderr when `auto` fell back to
    /// the fake display. Throws a one-line ``CLIFailure`` (exit 2).
    /// `vrr` (`--vrr`, nil when not given: auto) and `rate` (the link's range) choose variable
    /// refresh on KMS; `notice` then also carries the note when auto wanted VRR that is unavailable.
    static func open(backend: String, device: String?, connector: String?, mode: String?,
                     fake: FakeDisplayConfiguration, source: DeviceSource = .live,
                     purpose: Purpose, vrr: String? = nil, rate: FrameRateRange = .default) throws -> (display: any DisplayBackend, notice: String?) {
        let policy = try vrrPolicy(vrr)
        guard let choice = DisplayChoice.Backend(backend) else {
            throw CLIFailure("--backend must be auto, kms, fake or fake-drm[:PROFILE]")
        }
        do {
            return try DisplayChoice.open(backend: choice, device: device, connector: connector, mode: mode, fake: fake,
                                          source: source, purpose: purpose, vrr: vrr == nil ? nil : policy, rate: rate)
        } catch let refusal as DisplayChoice.Refusal {
            throw failure(refusal)
        } catch let e as OutputSelectionError {
            throw CLIFailure(e.description)
        }
    }

    /// The one line of a refusal of the display choice, naming the options.
    static func failure(_ refusal: DisplayChoice.Refusal) -> CLIFailure { CLIFailure(RunPlanning.refusalLine(refusal)) }

    /// True for `fake-drm` and `fake-drm:PROFILE`.
    static func isFakeDRM(_ backend: String) -> Bool {
        if case .fakeDRM? = DisplayChoice.Backend(backend) { return true }
        return false
    }

    /// The fake DRM devices `backend` (`fake-drm[:PROFILE[,PROFILE…]]`, one card per profile)
    /// names; throws a one-line error for a profile that cannot be found or read.
    static func fakeDRMDevices(_ backend: String, wallClock: Bool = false, seed: UInt64 = 0) throws -> [FakeDRMDevice] {
        try DisplayChoice.fakeDRMDevices(profiles: profileSpec(backend), wallClock: wallClock, seed: seed)
    }

    /// What follows `fake-drm:` (nil for plain `fake-drm`).
    static func profileSpec(_ backend: String) -> String? {
        backend.hasPrefix("fake-drm:") ? String(backend.dropFirst("fake-drm:".count)) : nil
    }

    /// `--vrr auto|on|off` (nil: auto); a bad value is one line.
    static func vrrPolicy(_ text: String?) throws -> VRRPolicy {
        guard let text else { return .auto }
        guard let p = VRRPolicy(rawValue: text) else { throw CLIFailure("invalid --vrr '\(text)': expected auto, on or off") }
        return p
    }
}
