/// The atomic properties a modeset and page flips set, as typed property IDs looked up once by
/// name: a driver that lacks one fails at lookup with a ``DRMError`` naming it, so that callers
/// never look properties up by string.

/// The connector's properties Cadence sets.
public struct ConnectorProperties: Equatable, Sendable {
    /// `CRTC_ID`: the CRTC driving the connector.
    public var crtcID: PropertyID
    /// `vrr_capable` (read-only; amdgpu, i915 and others): nil when the driver has none.
    public var vrrCapable: PropertyID?
}

/// The CRTC's properties Cadence sets.
public struct CRTCProperties: Equatable, Sendable {
    /// `MODE_ID`: blob of the mode.
    public var modeID: PropertyID
    /// `ACTIVE`: 1 while the CRTC scans out.
    public var active: PropertyID
    /// `VRR_ENABLED`: nil when the driver has none.
    public var vrrEnabled: PropertyID?
}

/// The primary plane's properties Cadence sets (source in 16.16 fixed point, destination in
/// pixels).
public struct PlaneProperties: Equatable, Sendable {
    public var framebufferID: PropertyID
    public var crtcID: PropertyID
    public var srcX: PropertyID, srcY: PropertyID, srcW: PropertyID, srcH: PropertyID
    public var crtcX: PropertyID, crtcY: PropertyID, crtcW: PropertyID, crtcH: PropertyID

    /// The plane showing `framebuffer` unscaled over the whole `width`×`height` CRTC.
    public func fullScreen(_ plane: PlaneID, framebuffer: FramebufferID, crtc: CRTCID, width: UInt64, height: UInt64) -> [AtomicProperty] {
        let o = plane.rawValue
        return [
            AtomicProperty(object: o, property: framebufferID, value: UInt64(framebuffer.rawValue)),
            AtomicProperty(object: o, property: crtcID, value: UInt64(crtc.rawValue)),
            AtomicProperty(object: o, property: srcX, value: 0), AtomicProperty(object: o, property: srcY, value: 0),
            AtomicProperty(object: o, property: srcW, value: width << 16), AtomicProperty(object: o, property: srcH, value: height << 16),
            AtomicProperty(object: o, property: crtcX, value: 0), AtomicProperty(object: o, property: crtcY, value: 0),
            AtomicProperty(object: o, property: crtcW, value: width), AtomicProperty(object: o, property: crtcH, value: height),
        ]
    }
}

extension DRMDevice {
    /// The connector's atomic properties.
    public func connectorProperties(_ id: ConnectorID, name: String) throws -> ConnectorProperties {
        let t = try propertyIDs(of: id, type: .connector)
        let need = Lookup(table: t, object: name)
        return ConnectorProperties(crtcID: try need("CRTC_ID"), vrrCapable: t["vrr_capable"])
    }

    /// The CRTC's atomic properties.
    public func crtcProperties(_ id: CRTCID) throws -> CRTCProperties {
        let t = try propertyIDs(of: id, type: .crtc)
        let need = Lookup(table: t, object: "\(id)")
        return CRTCProperties(modeID: try need("MODE_ID"), active: try need("ACTIVE"), vrrEnabled: t["VRR_ENABLED"])
    }

    /// The plane's atomic properties.
    public func planeProperties(_ id: PlaneID) throws -> PlaneProperties {
        let need = Lookup(table: try propertyIDs(of: id, type: .plane), object: "\(id)")
        return PlaneProperties(framebufferID: try need("FB_ID"), crtcID: try need("CRTC_ID"),
                               srcX: try need("SRC_X"), srcY: try need("SRC_Y"), srcW: try need("SRC_W"), srcH: try need("SRC_H"),
                               crtcX: try need("CRTC_X"), crtcY: try need("CRTC_Y"), crtcW: try need("CRTC_W"), crtcH: try need("CRTC_H"))
    }
}

/// A required property by name, or EINVAL naming it.
private struct Lookup {
    var table: [String: PropertyID]
    var object: String
    func callAsFunction(_ name: String) throws -> PropertyID {
        guard let id = table[name] else { throw DRMError(call: "find property \(name)", object: object, errno: .invalidArgument) }
        return id
    }
}
