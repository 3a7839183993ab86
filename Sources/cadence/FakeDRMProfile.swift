import DRM
import Foundation

/// A device profile for `--backend fake-drm[:PROFILE]`: the output of `drm_info -j` (Debian
/// package drm-info) for one card, plus an optional `"cadence"` object for timing, read into a
/// ``FakeDRMDevice`` so that the real KMS code runs over it.
///
/// From drm_info's object for the first node (`"/dev/dri/card0": {…}`) only what the fake
/// device models is read: `driver` (name, desc, version, `caps`, `client_caps.ATOMIC`),
/// `connectors` (id, type, status, phy_width/phy_height, encoders, modes, range properties such
/// as `vrr_capable`, the `EDID` property's `data` when it is a hex string or a byte array),
/// `encoders` (id, type, possible_crtcs), `crtcs` (id, the mode it shows and its fb_id) and
/// `planes` (id, possible_crtcs, formats, the `type` property). Everything else is ignored.
/// drm_info leaves blob data such as the EDID null, so `"cadence": {"edid": {"Virtual-1":
/// "00ffffffffffff00…"}}` gives a connector its EDID by name. The other `"cadence"` keys:
/// `vblank` (false: no vblank interrupt, like bochs and virtio-gpu; default true),
/// `refreshOverrideHz` (the vblank period follows this rate, not the mode's timing),
/// `vblankJitterUs` (± on every event timestamp), `eventLatencyUs` (timestamp to readable,
/// default 40), `commitLatencyUs` (commit to completion without vblank, default 1000) and
/// `vrrResponseUs` (under VRR: a flip's commit to the start of the refresh it starts, default
/// 100). A connector with `vrr_capable` 1 whose EDID gives a VRR range behaves as an
/// adaptive-sync panel in that range once `VRR_ENABLED` is set.
struct FakeDRMProfile {
    /// The profile `--backend fake-drm` uses without `:PROFILE` (captured from vkms).
    static let defaultName = "vkms"
    /// The environment variable naming directories (colon-separated) of shipped profiles.
    static let environmentVariable = "CADENCE_PROFILES"

    /// The file it was read from.
    var path: String
    /// The card node it answers to (drm_info's key, e.g. "/dev/dri/card0").
    var node: String
    /// Its description (`"cadence": {"description": …}`), or the driver's.
    var description: String
    var configure: (FakeDRMDevice) -> Void

    /// A new fake device playing the profile; `wallClock` makes waits sleep for real, `seed`
    /// seeds the timestamp jitter.
    func makeDevice(wallClock: Bool, seed: UInt64) -> FakeDRMDevice {
        let d = FakeDRMDevice(path: node)
        configure(d)
        d.usesWallClock = wallClock
        d.jitterSeed = seed
        d.simulatorName = wallClock ? "fake-drm-wall" : "fake-drm"
        return d
    }

    /// Parses `spec` (the part after `fake-drm:`; nil or empty: ``defaultName``): a file path,
    /// or the name of a shipped profile. Throws a one-line ``CLIFailure``.
    static func load(_ spec: String?) throws -> FakeDRMProfile {
        let path = try locate(spec.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIFailure("profile \(path): cannot be read")
        }
        let top: Any
        do { top = try JSONSerialization.jsonObject(with: data) } catch {
            throw CLIFailure("profile \(path): not JSON (\(firstLine(error)))")
        }
        do {
            return try parse(top, path: path)
        } catch let e as ProfileError {
            throw CLIFailure("profile \(path): \(e.message)")
        }
    }

    /// The file `spec` names: an existing path, else `NAME.json` in the profile directories.
    static func locate(_ spec: String) throws -> String {
        if spec.contains("/") || spec.hasSuffix(".json") || FileManager.default.fileExists(atPath: spec) {
            guard FileManager.default.fileExists(atPath: spec) else { throw CLIFailure("profile \(spec): no such file") }
            return spec
        }
        let dirs = searchDirectories()
        for d in dirs {
            let p = d + "/" + spec + ".json"
            if FileManager.default.fileExists(atPath: p) { return p }
        }
        throw CLIFailure("no profile '\(spec)': not a file, and no \(spec).json in \(dirs.isEmpty ? "any profile directory" : dirs.joined(separator: ", ")) (set \(environmentVariable) to the profiles directory)")
    }

    /// `$CADENCE_PROFILES` (colon-separated), then next to the executable: `profiles/`,
    /// `../share/cadence/profiles`, and `profiles/` in each of the four directories above it
    /// (a build in `.build/debug` finds the repository's `profiles/`).
    static func searchDirectories() -> [String] {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment[environmentVariable] {
            dirs += env.split(separator: ":").map(String.init)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        dirs.append(exe.appendingPathComponent("profiles").path)
        dirs.append(exe.appendingPathComponent("../share/cadence/profiles").standardized.path)
        var up = exe
        for _ in 0..<4 {
            up = up.deletingLastPathComponent()
            dirs.append(up.appendingPathComponent("profiles").path)
        }
        var seen = Set<String>()
        return dirs.filter { FileManager.default.fileExists(atPath: $0) && seen.insert($0).inserted }
    }

    /// The names of the shipped profiles found in ``searchDirectories()``.
    static func shippedNames() -> [String] {
        let names = searchDirectories().flatMap { d in
            ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []).filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
        }
        return Array(Set(names)).sorted()
    }

    private static func firstLine(_ error: Error) -> String {
        let s = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
        return s.split(separator: "\n").first.map(String.init) ?? s
    }
}

/// A profile of the wrong shape: what is missing or wrong, with where.
struct ProfileError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
