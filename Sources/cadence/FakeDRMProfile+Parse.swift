import DRM
import EDID
import Foundation

/// Reading `drm_info -j` JSON (and the `"cadence"` section) into a ``FakeDRMProfile``.
extension FakeDRMProfile {
    /// drm_info's capability names → DRM_CAP_*.
    static let capabilityNames: [String: DeviceCapability] = [
        "DUMB_BUFFER": .dumbBuffer, "VBLANK_HIGH_CRTC": .vblankHighCRTC, "DUMB_PREFERRED_DEPTH": .dumbPreferredDepth,
        "DUMB_PREFER_SHADOW": .dumbPreferShadow, "PRIME": .prime, "TIMESTAMP_MONOTONIC": .timestampMonotonic,
        "ASYNC_PAGE_FLIP": .asyncPageFlip, "ADDFB2_MODIFIERS": .addFB2Modifiers, "PAGE_FLIP_TARGET": .pageFlipTarget,
        "CRTC_IN_VBLANK_EVENT": .crtcInVBlankEvent,
    ]
    /// DRM_MODE_CONNECTOR_WRITEBACK.
    static let writebackConnectorType: UInt32 = 18
    /// Connector properties the fake device answers itself.
    static let builtinProperties: Set<String> = ["EDID", "DPMS", "CRTC_ID"]

    static func parse(_ top: Any, path: String) throws -> FakeDRMProfile {
        guard let root = top as? [String: Any] else { throw ProfileError("not a drm_info -j object (expected {\"/dev/dri/card0\": {…}})") }
        let cadence = root["cadence"] as? [String: Any] ?? [:]
        guard let node = root.keys.filter({ $0 != "cadence" && root[$0] is [String: Any] }).sorted().first,
              let dev = root[node] as? [String: Any] else {
            throw ProfileError("no device object (drm_info -j gives one per node, e.g. \"/dev/dri/card0\": {…})")
        }
        guard let driver = dev["driver"] as? [String: Any], let driverName = driver["name"] as? String else {
            throw ProfileError("\(node): no driver.name")
        }
        let version = driver["version"] as? [String: Any] ?? [:]
        let driverVersion = DriverVersion(name: driverName, major: int(version["major"]) ?? 0, minor: int(version["minor"]) ?? 0,
                                          patch: int(version["patch"]) ?? 0, date: version["date"] as? String ?? "",
                                          description: driver["desc"] as? String ?? "")
        var caps: [DeviceCapability: UInt64] = [:]
        for (k, v) in driver["caps"] as? [String: Any] ?? [:] {
            if let cap = capabilityNames[k], let n = int(v), n >= 0 { caps[cap] = UInt64(n) }
        }
        let clientCaps = driver["client_caps"] as? [String: Any] ?? [:]
        let atomic = (clientCaps["ATOMIC"] as? Bool) ?? (int(clientCaps["ATOMIC"]).map { $0 != 0 } ?? true)

        guard let rawConnectors = dev["connectors"] as? [[String: Any]] else { throw ProfileError("\(node): no connectors array") }
        guard !rawConnectors.isEmpty else { throw ProfileError("\(node): no connectors") }
        let edids = try (cadence["edid"] as? [String: Any] ?? [:]).mapValues { try bytes($0, what: "cadence.edid") }
        var typeCounts: [UInt32: UInt32] = [:]
        var connectors: [FakeDRMDevice.FakeConnector] = []
        var connectorEncoder: [(ConnectorID, UInt32)] = []
        for (i, c) in rawConnectors.enumerated() {
            guard let id = uint32(c["id"]), let type = uint32(c["type"]) else { throw ProfileError("connector \(i): no id or type") }
            // drm_info sets the writeback client cap; the kernel hides writeback connectors from
            // clients that do not, as Cadence does not.
            if type == Self.writebackConnectorType { continue }
            typeCounts[type, default: 0] += 1
            let typeID = uint32(c["type_id"]) ?? typeCounts[type]!
            let name = "\(Connector.typeName(type))-\(typeID)"
            let status = uint32(c["status"]).flatMap(ConnectionStatus.init(rawValue:)) ?? .unknown
            let modes = try (c["modes"] as? [[String: Any]] ?? []).enumerated().map { try mode($1, what: "connector \(name) mode \($0)") }
            var props: [String: UInt64] = [:]
            var edid = edids[name]
            for (k, v) in c["properties"] as? [String: Any] ?? [:] {
                guard let p = v as? [String: Any] else { continue }
                if k == "EDID", edid == nil, let d = p["data"], !(d is NSNull) { edid = try bytes(d, what: "connector \(name) EDID") }
                // Range properties with a value (vrr_capable, non-desktop); the rest the fake models itself.
                if !builtinProperties.contains(k), uint32(p["type"]) == 2, let value = int(p["value"]), value >= 0 { props[k] = UInt64(value) }
            }
            let size = (int(c["phy_width"]), int(c["phy_height"]))
            var fc = FakeDRMDevice.FakeConnector(id: ConnectorID(id), type: type, typeID: typeID, status: status, modes: modes,
                                                 encoders: (c["encoders"] as? [Any] ?? []).compactMap(uint32).map(EncoderID.init),
                                                 edid: edid, sizeMM: size.0.flatMap { w in size.1.map { (w, $0) } }, properties: props)
            // The panel follows flips inside the range its EDID gives (as amdgpu reads it).
            if let e = edid.flatMap({ try? EDID($0) }), let r = e.adaptiveSyncRange, r.maxHz > r.minHz { fc.vrrRangeHz = r.minHz...r.maxHz }
            connectors.append(fc)
            connectorEncoder.append((ConnectorID(id), uint32(c["encoder_id"]) ?? 0))
        }
        guard !connectors.isEmpty else { throw ProfileError("\(node): no connectors (besides writeback ones)") }
        let encoders = try (dev["encoders"] as? [[String: Any]] ?? []).enumerated().map { i, e in
            guard let id = uint32(e["id"]) else { throw ProfileError("encoder \(i): no id") }
            return (Encoder(id: EncoderID(id), type: uint32(e["type"]) ?? 0, possibleCRTCs: uint32(e["possible_crtcs"]) ?? 1),
                    crtc: uint32(e["crtc_id"]) ?? 0)
        }
        guard !encoders.isEmpty else { throw ProfileError("\(node): no encoders") }
        var crtcs: [CRTCState] = []
        var presets: [(index: Int, mode: ModeInfo, fb: UInt32, connectors: [ConnectorID])] = []
        for (i, c) in (dev["crtcs"] as? [[String: Any]] ?? []).enumerated() {
            guard let id = uint32(c["id"]) else { throw ProfileError("crtc \(i): no id") }
            crtcs.append(CRTCState(id: CRTCID(id)))
            if let m = c["mode"] as? [String: Any], let fb = uint32(c["fb_id"]), fb != 0 {
                let driven = connectorEncoder.filter { ce in encoders.contains { $0.0.id.rawValue == ce.1 && $0.crtc == id } }.map(\.0)
                presets.append((i, try mode(m, what: "crtc \(id) mode"), fb, driven))
            }
        }
        guard !crtcs.isEmpty else { throw ProfileError("\(node): no crtcs") }
        let planes = try (dev["planes"] as? [[String: Any]] ?? []).enumerated().map { i, p in
            guard let id = uint32(p["id"]) else { throw ProfileError("plane \(i): no id") }
            let type = ((p["properties"] as? [String: Any])?["type"] as? [String: Any]).flatMap { int($0["value"]) } ?? 0
            return (plane: Plane(id: PlaneID(id), possibleCRTCs: uint32(p["possible_crtcs"]) ?? 1,
                                 formats: (p["formats"] as? [Any] ?? []).compactMap(uint32).map(PixelFormat.init(rawValue:))),
                    kind: PlaneKind(rawValue: UInt64(max(0, type))) ?? .overlay)
        }
        guard planes.contains(where: { $0.kind == .primary }) else { throw ProfileError("\(node): no primary plane") }

        let timing = try Timing(cadence)
        let description = cadence["description"] as? String ?? "\(driverName) (\(driverVersion.description))"
        return FakeDRMProfile(path: path, node: node, description: description) { d in
            d.driver = driverVersion
            d.capabilities = caps
            d.supportsAtomic = atomic
            d.connectors = connectors
            d.encoders = encoders.map(\.0)
            d.crtcs = crtcs
            d.planes = planes
            d.hasVBlank = timing.vblank
            d.refreshOverrideHz = timing.refreshOverrideHz
            d.vblankJitterNs = timing.jitterNs
            d.receiptLatencyNs = timing.eventLatencyNs
            d.commitLatencyNs = timing.commitLatencyNs
            d.vrrResponseNs = timing.vrrResponseNs
            for p in presets { d.preset(crtcIndex: p.index, mode: p.mode, framebuffer: FramebufferID(p.fb), connectors: p.connectors) }
        }
    }

    /// The `"cadence"` section's timing keys.
    struct Timing {
        var vblank = true
        var refreshOverrideHz: Double?
        var jitterNs: Int64 = 0
        var eventLatencyNs: Int64 = 40_000
        var commitLatencyNs: Int64 = 1_000_000
        var vrrResponseNs: Int64 = 100_000

        init(_ c: [String: Any]) throws {
            if let v = c["vblank"] { guard FakeDRMProfile.isBool(v), let b = v as? Bool else { throw ProfileError("cadence.vblank must be true or false") }; vblank = b }
            func number(_ key: String, max: Double) throws -> Double? {
                guard let v = c[key] else { return nil }
                guard let d = (v as? NSNumber)?.doubleValue, !FakeDRMProfile.isBool(v), d.isFinite, d >= 0, d <= max else {
                    throw ProfileError("cadence.\(key) must be a number from 0 to \(Int(max))")
                }
                return d
            }
            if let hz = try number("refreshOverrideHz", max: 1000) {
                guard hz > 0 else { throw ProfileError("cadence.refreshOverrideHz must be > 0") }
                refreshOverrideHz = hz
            }
            if let us = try number("vblankJitterUs", max: 100_000) { jitterNs = Int64(us * 1000) }
            if let us = try number("eventLatencyUs", max: 1_000_000) { eventLatencyNs = Int64(us * 1000) }
            if let us = try number("commitLatencyUs", max: 1_000_000) { commitLatencyNs = Int64(us * 1000) }
            if let us = try number("vrrResponseUs", max: 100_000) { vrrResponseNs = Int64(us * 1000) }
        }
    }

    /// A drm_info mode object.
    static func mode(_ m: [String: Any], what: String) throws -> ModeInfo {
        func u16(_ k: String) throws -> UInt16 {
            guard let v = int(m[k]), v >= 0, v <= Int(UInt16.max) else { throw ProfileError("\(what): no \(k)") }
            return UInt16(v)
        }
        guard let clock = uint32(m["clock"]), clock > 0 else { throw ProfileError("\(what): no clock") }
        let mode = ModeInfo(clock: clock, hdisplay: try u16("hdisplay"), hsyncStart: try u16("hsync_start"), hsyncEnd: try u16("hsync_end"),
                            htotal: try u16("htotal"), hskew: (try? u16("hskew")) ?? 0, vdisplay: try u16("vdisplay"),
                            vsyncStart: try u16("vsync_start"), vsyncEnd: try u16("vsync_end"), vtotal: try u16("vtotal"),
                            vscan: (try? u16("vscan")) ?? 0, vrefresh: uint32(m["vrefresh"]),
                            flags: ModeFlags(rawValue: uint32(m["flags"]) ?? 0), type: ModeType(rawValue: uint32(m["type"]) ?? 0),
                            name: m["name"] as? String)
        guard mode.htotal > 0, mode.vtotal > 0 else { throw ProfileError("\(what): htotal and vtotal must be > 0") }
        return mode
    }

    /// An EDID as a hex string (spaces and newlines allowed) or an array of bytes.
    static func bytes(_ v: Any, what: String) throws -> [UInt8] {
        if let a = v as? [Any] {
            let b = a.compactMap { int($0) }.filter { (0...255).contains($0) }.map(UInt8.init)
            guard b.count == a.count, !b.isEmpty else { throw ProfileError("\(what): expected bytes 0–255") }
            return b
        }
        guard let s = v as? String else { throw ProfileError("\(what): expected a hex string or an array of bytes") }
        let hex = Array(s.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }.map(Character.init))
        guard !hex.isEmpty, hex.count % 2 == 0 else { throw ProfileError("\(what): odd-length or empty hex") }
        return try stride(from: 0, to: hex.count, by: 2).map { i in
            guard let b = UInt8(String(hex[i...i + 1]), radix: 16) else { throw ProfileError("\(what): not hex") }
            return b
        }
    }

    /// JSON true/false (Foundation's NSNumber answers `is Bool` for 0 and 1 too).
    static func isBool(_ v: Any?) -> Bool {
        guard let n = v as? NSNumber else { return v is Bool }
        return String(cString: n.objCType) == "c"
    }

    static func int(_ v: Any?) -> Int? {
        guard let v, !isBool(v), !(v is String) else { return nil }
        if let i = v as? Int { return i }
        if let n = v as? NSNumber, n.doubleValue == n.doubleValue.rounded(), abs(n.doubleValue) < 9e18 { return n.intValue }
        return nil
    }

    static func uint32(_ v: Any?) -> UInt32? { int(v).flatMap { $0 >= 0 && $0 <= Int(UInt32.max) ? UInt32($0) : nil } }
}
