import DRM
import EDID
import Foundation

/// A fake DRM device's profile file (the `fake-drm[:PROFILE]` backend): where it is (a path, or
/// the name of a shipped profile) and what it holds, read with JSONSerialization and parsed by
/// DRM's `FakeDRMProfile` (which knows the `drm_info -j` shape and the `"cadence"` timing keys).
///
///     let device = try FakeDRMProfileFile.load("vkms").makeDevice(wallClock: false, seed: 0)
public struct FakeDRMProfileFile {
    /// The profile used when none is named (captured from vkms).
    public static let defaultName = "vkms"
    /// The environment variable naming directories (colon-separated) of shipped profiles.
    public static let environmentVariable = "CADENCE_PROFILES"

    /// The file it was read from.
    public var path: String
    /// The parsed profile.
    public var profile: FakeDRMProfile
    /// The card node it answers to (drm_info's key, e.g. "/dev/dri/card0").
    public var node: String { profile.node }
    /// Its description (`"cadence": {"description": …}`), or the driver's.
    public var description: String { profile.description }

    /// A new fake device playing the profile; `wallClock` makes waits sleep for real, `seed`
    /// seeds the timestamp jitter.
    public func makeDevice(wallClock: Bool, seed: UInt64) -> FakeDRMDevice {
        profile.makeDevice(wallClock: wallClock, seed: seed)
    }

    /// Parses `spec` as a comma-separated list of profiles, one card each: with more than one,
    /// the cards are /dev/dri/card0, card1, … in the order given (a machine with several GPUs).
    /// Throws a one-line ``SessionError``.
    public static func loadAll(_ spec: String?) throws -> [FakeDRMProfileFile] {
        let parts = (spec ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return [try load(spec)] }
        if parts.contains(where: \.isEmpty) {
            throw SessionError("fake-drm:\(spec ?? ""): an empty profile name in the list")
        }
        return try parts.enumerated().map { i, part in
            var p = try load(part)
            p.profile.node = "/dev/dri/card\(i)"
            return p
        }
    }

    /// Parses `spec` (the part after `fake-drm:`; nil or empty: ``defaultName``): a file path,
    /// or the name of a shipped profile. Throws a one-line ``SessionError``.
    public static func load(_ spec: String?) throws -> FakeDRMProfileFile {
        let path = try locate(spec.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SessionError("profile \(path): cannot be read")
        }
        let top: Any
        do { top = try JSONSerialization.jsonObject(with: data) } catch {
            throw SessionError("profile \(path): not JSON (\(firstLine(error)))")
        }
        do {
            var profile = try FakeDRMProfile(json: json(top))
            // The panel follows flips inside the range its EDID gives (as amdgpu reads it).
            profile.setVRRRanges { bytes in
                guard let r = (try? EDID(bytes))?.adaptiveSyncRange else { return nil }
                return r.minHz...max(r.minHz, r.maxHz)
            }
            return FakeDRMProfileFile(path: path, profile: profile)
        } catch let e as FakeDRMProfileError {
            throw SessionError("profile \(path): \(e.message)")
        }
    }

    /// The file `spec` names: a path (anything with a `/` or ending `.json`), else `NAME.json`
    /// in the profile directories; a bare name that is no shipped profile is read as a file in
    /// the working directory when there is one (never a directory). A file or folder in the
    /// working directory never shadows a shipped profile of the same name.
    public static func locate(_ spec: String) throws -> String {
        if spec.contains("/") || spec.hasSuffix(".json") {
            guard FileManager.default.fileExists(atPath: spec) else {
                throw SessionError("profile \(spec): no such file")
            }
            return spec
        }
        let dirs = searchDirectories()
        for d in dirs {
            let p = d + "/" + spec + ".json"
            if FileManager.default.fileExists(atPath: p) { return p }
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: spec, isDirectory: &isDirectory), !isDirectory.boolValue {
            return spec
        }
        throw SessionError(
            "no profile '\(spec)': not a file, and no \(spec).json in \(dirs.isEmpty ? "any profile directory" : dirs.joined(separator: ", ")) (set \(environmentVariable) to the profiles directory)"
        )
    }

    /// `$CADENCE_PROFILES` (colon-separated), then next to the executable: `profiles/`,
    /// `../share/cadence/profiles`, and `profiles/` in each of the four directories above it
    /// (a build in `.build/debug` finds the repository's `profiles/`).
    public static func searchDirectories() -> [String] {
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
    public static func shippedNames() -> [String] {
        let names = searchDirectories().flatMap { d in
            ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []).filter { $0.hasSuffix(".json") }.map {
                String($0.dropLast(5))
            }
        }
        return Array(Set(names)).sorted()
    }

    /// JSONSerialization's tree as `FakeDRMProfile.JSON`: JSON true/false (Foundation's
    /// NSNumber also answers `is Bool` for 0 and 1, so the number's type decides), exact
    /// integers, other numbers, strings, arrays, objects, null.
    public static func json(_ v: Any) -> FakeDRMProfile.JSON {
        if let n = v as? NSNumber, !(v is String) {
            if String(cString: n.objCType) == "c" { return .bool(n.boolValue) }
            if let i = v as? Int { return .integer(i) }
            return .number(n.doubleValue)
        }
        if let s = v as? String { return .string(s) }
        if let a = v as? [Any] { return .array(a.map(json)) }
        if let o = v as? [String: Any] { return .object(o.mapValues(json)) }
        return .null
    }

    private static func firstLine(_ error: Error) -> String {
        let s = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
        return s.split(separator: "\n").first.map(String.init) ?? s
    }
}
