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

    /// Reads a profile from decoded `drm_info -j` JSON; throws ``FakeDRMProfileError`` (one
    /// line) when it is of the wrong shape.
    public init(json top: JSON) throws {
        guard let root = top.object else { throw FakeDRMProfileError("not a drm_info -j object (expected {\"/dev/dri/card0\": {…}})") }
        let cadence = root["cadence"]?.object ?? [:]
        guard let node = root.keys.filter({ $0 != "cadence" && root[$0]?.object != nil }).sorted().first,
              let dev = root[node]?.object else {
            throw FakeDRMProfileError("no device object (drm_info -j gives one per node, e.g. \"/dev/dri/card0\": {…})")
        }
        guard let driver = dev["driver"]?.object, let driverName = driver["name"]?.string else {
            throw FakeDRMProfileError("\(node): no driver.name")
        }
        let version = driver["version"]?.object ?? [:]
        let driverVersion = DriverVersion(name: driverName, major: version["major"]?.int ?? 0, minor: version["minor"]?.int ?? 0,
                                          patch: version["patch"]?.int ?? 0, date: version["date"]?.string ?? "",
                                          description: driver["desc"]?.string ?? "")
        var caps: [DeviceCapability: UInt64] = [:]
        for (k, v) in driver["caps"]?.object ?? [:] {
            if let cap = Self.capabilityNames[k], let n = v.int, n >= 0 { caps[cap] = UInt64(n) }
        }
        let clientCaps = driver["client_caps"]?.object ?? [:]
        let atomic = clientCaps["ATOMIC"]?.bool ?? (clientCaps["ATOMIC"]?.int.map { $0 != 0 } ?? true)

        guard let rawConnectors = Self.objects(dev["connectors"]) else {
            throw FakeDRMProfileError("\(node): no connectors array")
        }
        guard !rawConnectors.isEmpty else { throw FakeDRMProfileError("\(node): no connectors") }
        let edids = try (cadence["edid"]?.object ?? [:]).mapValues { try Self.bytes($0, what: "cadence.edid") }
        var typeCounts: [UInt32: UInt32] = [:]
        var connectors: [FakeDRMDevice.FakeConnector] = []
        var connectorEncoder: [(ConnectorID, UInt32)] = []
        var writeback: [FakeWritebackConnector] = []
        for (i, c) in rawConnectors.enumerated() {
            guard let id = Self.uint32(c["id"]), let type = Self.uint32(c["type"]) else { throw FakeDRMProfileError("connector \(i): no id or type") }
            // drm_info sets the writeback client cap; the kernel lists writeback connectors only
            // to clients that do: they are kept apart, with the formats they write.
            if type == Self.writebackConnectorType {
                writeback.append(Self.writeback(c, id: id, index: writeback.count))
                continue
            }
            typeCounts[type, default: 0] += 1
            let typeID = Self.uint32(c["type_id"]) ?? typeCounts[type]!
            let name = "\(Connector.typeName(type))-\(typeID)"
            let status = Self.uint32(c["status"]).flatMap(ConnectionStatus.init(rawValue:)) ?? .unknown
            let modes = try (Self.objects(c["modes"]) ?? []).enumerated().map { try Self.mode($1, what: "connector \(name) mode \($0)") }
            var props: [String: UInt64] = [:]
            var edid = edids[name]
            for (k, v) in c["properties"]?.object ?? [:] {
                guard let p = v.object else { continue }
                if k == "EDID", edid == nil, let d = p["data"], d != .null { edid = try Self.bytes(d, what: "connector \(name) EDID") }
                // Range properties with a value (vrr_capable, non-desktop); the rest the fake models itself.
                if !Self.builtinProperties.contains(k), Self.uint32(p["type"]) == 2, let value = p["value"]?.int, value >= 0 { props[k] = UInt64(value) }
            }
            let size = (c["phy_width"]?.int, c["phy_height"]?.int)
            connectors.append(.init(id: ConnectorID(id), type: type, typeID: typeID, status: status, modes: modes,
                                    encoders: (c["encoders"]?.array ?? []).compactMap(Self.uint32).map(EncoderID.init),
                                    edid: edid, sizeMM: size.0.flatMap { w in size.1.map { (w, $0) } }, properties: props))
            connectorEncoder.append((ConnectorID(id), Self.uint32(c["encoder_id"]) ?? 0))
        }
        guard !connectors.isEmpty else { throw FakeDRMProfileError("\(node): no connectors (besides writeback ones)") }
        let encoders = try (Self.objects(dev["encoders"]) ?? []).enumerated().map { i, e in
            guard let id = Self.uint32(e["id"]) else { throw FakeDRMProfileError("encoder \(i): no id") }
            let encoder = Encoder(
                id: EncoderID(id), type: Self.uint32(e["type"]) ?? 0,
                possibleCRTCs: Self.uint32(e["possible_crtcs"]) ?? 1,
                possibleClones: Self.uint32(e["possible_clones"]) ?? 0)
            return (encoder, crtc: Self.uint32(e["crtc_id"]) ?? 0)
        }
        guard !encoders.isEmpty else { throw FakeDRMProfileError("\(node): no encoders") }
        var crtcs: [CRTCState] = []
        var presets: [Preset] = []
        for (i, c) in (Self.objects(dev["crtcs"]) ?? []).enumerated() {
            guard let id = Self.uint32(c["id"]) else { throw FakeDRMProfileError("crtc \(i): no id") }
            crtcs.append(CRTCState(id: CRTCID(id)))
            if let m = c["mode"]?.object, let fb = Self.uint32(c["fb_id"]), fb != 0 {
                let driven = connectorEncoder.filter { ce in encoders.contains { $0.0.id.rawValue == ce.1 && $0.crtc == id } }.map(\.0)
                presets.append(Preset(index: i, mode: try Self.mode(m, what: "crtc \(id) mode"), framebuffer: fb, connectors: driven))
            }
        }
        guard !crtcs.isEmpty else { throw FakeDRMProfileError("\(node): no crtcs") }
        let planes = try (Self.objects(dev["planes"]) ?? []).enumerated().map { i, p in
            guard let id = Self.uint32(p["id"]) else { throw FakeDRMProfileError("plane \(i): no id") }
            let type = p["properties"]?.object?["type"]?.object?["value"]?.int ?? 0
            return (plane: Plane(id: PlaneID(id), possibleCRTCs: Self.uint32(p["possible_crtcs"]) ?? 1,
                                 formats: (p["formats"]?.array ?? []).compactMap(Self.uint32).map(PixelFormat.init(rawValue:))),
                    kind: PlaneKind(rawValue: UInt64(max(0, type))) ?? .overlay)
        }
        guard planes.contains(where: { $0.kind == .primary }) else { throw FakeDRMProfileError("\(node): no primary plane") }

        self.node = node
        description = cadence["description"]?.string ?? "\(driverName) (\(driverVersion.description))"
        self.driver = driverVersion
        capabilities = caps
        supportsAtomic = atomic
        self.connectors = connectors
        self.encoders = try Self.clones(encoders.map(\.0), cadence["possibleClones"], node: node)
        self.crtcs = crtcs
        self.planes = planes.map(\.plane)
        planeKinds = planes.map(\.kind)
        timing = try Timing(cadence)
        self.presets = presets
        if let list = cadence["crcSources"] {
            guard let items = list.array?.map(\.string), items.allSatisfy({ $0 != nil }) else {
                throw FakeDRMProfileError("\(node): cadence.crcSources must be an array of strings")
            }
            crcSources = items.compactMap { $0 }
        } else {
            crcSources = driverName == "vkms" ? ["auto"] : []
        }
        writebackConnectors = try Self.writeback(writeback, formats: cadence["writebackFormats"], node: node)
    }

    /// The encoders with `cadence.possibleClones` applied: an object from encoder ids (strings) to
    /// the `possible_clones` mask that replaces drm_info's.
    static func clones(_ encoders: [Encoder], _ override: JSON?, node: String) throws -> [Encoder] {
        guard let override else { return encoders }
        guard let map = override.object else {
            throw FakeDRMProfileError("\(node): cadence.possibleClones must be an object of encoder ids to masks")
        }
        var out = encoders
        for (key, value) in map {
            guard let id = UInt32(key), let i = out.firstIndex(where: { $0.id.rawValue == id }),
                let mask = uint32(value)
            else {
                throw FakeDRMProfileError("\(node): cadence.possibleClones: \(key) is not an encoder id with a mask")
            }
            out[i].possibleClones = mask
        }
        return out
    }

    /// The `"cadence"` section's timing keys.
    struct Timing: Sendable {
        var vblank = true
        var refreshOverrideHz: Double?
        var jitterNs: Int64 = 0
        var eventLatencyNs: Int64 = 40_000
        var commitLatencyNs: Int64 = 1_000_000
        var vrrResponseNs: Int64 = 100_000

        init(_ c: [String: JSON]) throws {
            if let v = c["vblank"] {
                guard let b = v.bool else { throw FakeDRMProfileError("cadence.vblank must be true or false") }
                vblank = b
            }
            func number(_ key: String, max: Double) throws -> Double? {
                guard let v = c[key] else { return nil }
                guard let d = v.number, d.isFinite, d >= 0, d <= max else {
                    throw FakeDRMProfileError("cadence.\(key) must be a number from 0 to \(Int(max))")
                }
                return d
            }
            if let hz = try number("refreshOverrideHz", max: 1000) {
                guard hz > 0 else { throw FakeDRMProfileError("cadence.refreshOverrideHz must be > 0") }
                refreshOverrideHz = hz
            }
            if let us = try number("vblankJitterUs", max: 100_000) { jitterNs = Int64(us * 1000) }
            if let us = try number("eventLatencyUs", max: 1_000_000) { eventLatencyNs = Int64(us * 1000) }
            if let us = try number("commitLatencyUs", max: 1_000_000) { commitLatencyNs = Int64(us * 1000) }
            if let us = try number("vrrResponseUs", max: 100_000) { vrrResponseNs = Int64(us * 1000) }
        }
    }

    /// A drm_info mode object.
    static func mode(_ m: [String: JSON], what: String) throws -> ModeInfo {
        func u16(_ k: String) throws -> UInt16 {
            guard let v = m[k]?.int, v >= 0, v <= Int(UInt16.max) else { throw FakeDRMProfileError("\(what): no \(k)") }
            return UInt16(v)
        }
        guard let clock = uint32(m["clock"]), clock > 0 else { throw FakeDRMProfileError("\(what): no clock") }
        let mode = ModeInfo(clock: clock, hdisplay: try u16("hdisplay"), hsyncStart: try u16("hsync_start"), hsyncEnd: try u16("hsync_end"),
                            htotal: try u16("htotal"), hskew: (try? u16("hskew")) ?? 0, vdisplay: try u16("vdisplay"),
                            vsyncStart: try u16("vsync_start"), vsyncEnd: try u16("vsync_end"), vtotal: try u16("vtotal"),
                            vscan: (try? u16("vscan")) ?? 0, vrefresh: uint32(m["vrefresh"]),
                            flags: ModeFlags(rawValue: uint32(m["flags"]) ?? 0), type: ModeType(rawValue: uint32(m["type"]) ?? 0),
                            name: m["name"]?.string)
        guard mode.htotal > 0, mode.vtotal > 0 else { throw FakeDRMProfileError("\(what): htotal and vtotal must be > 0") }
        return mode
    }

    /// An EDID as a hex string (whitespace allowed) or an array of bytes.
    static func bytes(_ v: JSON, what: String) throws -> [UInt8] {
        if let a = v.array {
            let b = a.compactMap(\.int).filter { (0...255).contains($0) }.map(UInt8.init)
            guard b.count == a.count, !b.isEmpty else { throw FakeDRMProfileError("\(what): expected bytes 0–255") }
            return b
        }
        guard let s = v.string else { throw FakeDRMProfileError("\(what): expected a hex string or an array of bytes") }
        let hex = Array(s.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard !hex.isEmpty, hex.count % 2 == 0 else { throw FakeDRMProfileError("\(what): odd-length or empty hex") }
        return try stride(from: 0, to: hex.count, by: 2).map { i in
            guard let hi = hexDigit(hex[i]),
                  let lo = hexDigit(hex[i + 1]) else { throw FakeDRMProfileError("\(what): not hex") }
            return hi << 4 | lo
        }
    }

    static func hexDigit(_ c: Unicode.Scalar) -> UInt8? {
        switch c.value {
        case 0x30...0x39: return UInt8(c.value - 0x30)
        case 0x41...0x46: return UInt8(c.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(c.value - 0x61 + 10)
        default: return nil
        }
    }

    /// An array of objects (nil when it is not one, or any element is not an object).
    static func objects(_ v: JSON?) -> [[String: JSON]]? {
        guard let a = v?.array else { return nil }
        let o = a.compactMap(\.object)
        return o.count == a.count ? o : nil
    }

    static func uint32(_ v: JSON?) -> UInt32? { v?.int.flatMap { $0 >= 0 && $0 <= Int(UInt32.max) ? UInt32($0) : nil } }
}
