import SystemPackage

/// ``FakeDRMDevice``'s object and property queries: resources, connectors (with their
/// properties as the kernel lists them), encoders, CRTCs, planes, properties and blobs — the
/// read side of the scripted device that `list`, output selection and atomic commits use.
extension FakeDRMDevice {
    func getResources(_ fd: Int32) throws -> CardResources {
        try record("drmModeGetResources")
        if isNotDRM { throw Errno(rawValue: 25) }
        let writeback = wb.enabledFDs.contains(fd) ? writebackConnectors.map(\.id) : []
        return CardResources(framebuffers: fbs.keys.sorted().map(FramebufferID.init), crtcs: crtcs.map(\.id),
                             connectors: connectors.map(\.id) + writeback, encoders: encoders.map(\.id))
    }

    func connectorProps(_ c: FakeConnector) -> [(id: PropertyID, value: UInt64)] {
        let crtc = crtcState.first { $0.value.connectors.contains(c.id) }?.key.rawValue ?? 0
        var out: [(id: PropertyID, value: UInt64)] = [
            (prop("EDID"), c.edid != nil ? UInt64(c.id.rawValue + 500) : 0),
            (prop("DPMS"), 0),
            (prop("CRTC_ID"), UInt64(crtc)),
        ]
        for (k, v) in c.properties.sorted(by: { $0.key < $1.key }) where !out.contains(where: { $0.id == prop(k) }) { out.append((prop(k), v)) }
        for (k, v) in propValues[c.id.rawValue] ?? [:] where !out.contains(where: { $0.id == k }) { out.append((k, v)) }
        return out
    }

    func getConnector(_ fd: Int32, _ id: ConnectorID) throws -> Connector {
        try record("drmModeGetConnector")
        if let w = writebackConnectors.first(where: { $0.id == id }) {
            guard wb.enabledFDs.contains(fd) else { throw Errno.noSuchFileOrDirectory }
            return writebackConnector(w)
        }
        guard let c = connectors.first(where: { $0.id == id }) else { throw Errno.noSuchFileOrDirectory }
        let enc = crtcState.contains { $0.value.connectors.contains(id) } ? c.encoders.first ?? EncoderID(0) : EncoderID(0)
        let size: (width: Int, height: Int) = c.status == .connected ? c.sizeMM ?? (260, 195) : (0, 0)
        return Connector(id: c.id, encoderID: enc, type: c.type, typeID: c.typeID, status: c.status,
                         widthMM: size.width, heightMM: size.height,
                         modes: c.status == .connected ? c.modes : [], encoders: c.encoders, properties: connectorProps(c))
    }

    func getEncoder(_ fd: Int32, _ id: EncoderID) throws -> Encoder {
        try record("drmModeGetEncoder")
        guard var e = encoders.first(where: { $0.id == id }) else { throw Errno.noSuchFileOrDirectory }
        let driving = connectors.filter { $0.encoders.contains(id) }.map(\.id)
        e.crtcID = crtcState.first { !Set($0.value.connectors).isDisjoint(with: driving) }?.key ?? CRTCID(0)
        e.possibleClones = possibleClones(of: id)
        return e
    }

    func getCRTC(_ fd: Int32, _ id: CRTCID) throws -> CRTCState {
        try record("drmModeGetCrtc")
        guard let rt = crtcState[id] else { throw Errno.noSuchFileOrDirectory }
        return CRTCState(id: id, framebufferID: rt.fb, mode: rt.mode, gammaSize: 256)
    }

    func getPlaneResources(_ fd: Int32) throws -> [PlaneID] {
        try record("drmModeGetPlaneResources")
        return planes.map(\.plane.id)
    }

    func getPlane(_ fd: Int32, _ id: PlaneID) throws -> Plane {
        try record("drmModeGetPlane")
        guard var p = planes.first(where: { $0.plane.id == id })?.plane else { throw Errno.noSuchFileOrDirectory }
        // A primary plane shows its CRTC's framebuffer: the one it was bound to, else the first it can drive.
        if planes.first(where: { $0.plane.id == id })?.kind == .primary,
           let c = planeBinding[id.rawValue] ?? crtcs.indices.first(where: { p.possibleCRTCs & (1 << UInt32($0)) != 0 }).map({ crtcs[$0].id }) {
            p.crtcID = crtcState[c]?.active == true ? c : CRTCID(0)
            p.framebufferID = crtcState[c]?.fb ?? FramebufferID(0)
        }
        return p
    }

    func getObjectProperties(_ fd: Int32, _ object: UInt32, _ type: ObjectType) throws -> [(id: PropertyID, value: UInt64)] {
        try record("drmModeObjectGetProperties")
        switch type {
        case .connector:
            if let w = writebackConnectors.first(where: { $0.id.rawValue == object }) { return writebackProps(w) }
            guard let c = connectors.first(where: { $0.id.rawValue == object }) else { throw Errno.noSuchFileOrDirectory }
            return connectorProps(c)
        case .crtc:
            guard let rt = crtcState[CRTCID(object)] else { throw Errno.noSuchFileOrDirectory }
            return [(prop("ACTIVE"), rt.active ? 1 : 0), (prop("MODE_ID"), 0), (prop("VRR_ENABLED"), rt.vrrEnabled ? 1 : 0)]
        case .plane:
            guard let p = planes.first(where: { $0.plane.id.rawValue == object }) else { throw Errno.noSuchFileOrDirectory }
            return [(prop("type"), p.kind.rawValue)] + ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
                                                        "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"].map { (prop($0), 0) }
        default:
            throw Errno.invalidArgument
        }
    }

    func getProperty(_ fd: Int32, _ id: PropertyID) throws -> PropertyInfo {
        try record("drmModeGetProperty")
        guard let name = propNames.first(where: { $0.value == id })?.key else { throw Errno.noSuchFileOrDirectory }
        switch name {
        case "type":
            return PropertyInfo(id: id, name: name, flags: 0x8 | 0x4, enums: [
                .init(name: "Overlay", value: 0), .init(name: "Primary", value: 1), .init(name: "Cursor", value: 2)])
        case "EDID", "WRITEBACK_PIXEL_FORMATS": return PropertyInfo(id: id, name: name, flags: 0x10 | 0x4)
        case "MODE_ID": return PropertyInfo(id: id, name: name, flags: 0x10)
        case "DPMS": return PropertyInfo(id: id, name: name, flags: 0x8, enums: [.init(name: "On", value: 0), .init(name: "Off", value: 3)])
        default: return PropertyInfo(id: id, name: name, flags: 0x2, values: [0, UInt64(UInt32.max)])
        }
    }

    func getPropertyBlob(_ fd: Int32, _ id: BlobID) throws -> [UInt8] {
        try record("drmModeGetPropertyBlob")
        guard let b = blobs[id.rawValue] else { throw Errno.noSuchFileOrDirectory }
        return b
    }

    func createPropertyBlob(_ fd: Int32, _ bytes: [UInt8]) throws -> BlobID {
        try record("drmModeCreatePropertyBlob")
        nextBlob += 1
        blobs[nextBlob] = bytes
        return BlobID(nextBlob)
    }

    func destroyPropertyBlob(_ fd: Int32, _ id: BlobID) throws {
        try record("drmModeDestroyPropertyBlob")
        guard blobs.removeValue(forKey: id.rawValue) != nil else { throw Errno.noSuchFileOrDirectory }
    }
}
