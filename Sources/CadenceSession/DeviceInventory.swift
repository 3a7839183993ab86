import DRM

/// Everything a card says about itself (what `cadence list` shows): the driver, capabilities
/// and client caps, the connectors with their panels, encoders, CRTCs with their CRC sources,
/// writeback connectors and planes. Reading asks for the universal-planes, atomic and
/// writeback client caps; it never asks for DRM master (a read-only node will do).
public struct DeviceInventory {
    /// Reading the driver's version or the card's resources failed (nothing else was read).
    public struct Unreadable: Error {
        /// The failure.
        public var error: DRMError
    }

    /// The capabilities read.
    public static let reportedCapabilities: [DeviceCapability] = [
        .dumbBuffer, .dumbPreferShadow, .timestampMonotonic, .asyncPageFlip, .crtcInVBlankEvent
    ]

    /// The card's node.
    public var path: String
    /// The driver's name, version and description.
    public var version: DriverVersion
    /// Each of ``reportedCapabilities`` with its value (nil: the kernel did not say).
    public var caps: [(DeviceCapability, UInt64?)]
    /// Whether the atomic client cap was granted.
    public var atomic: Bool
    /// Whether the universal-planes client cap was granted.
    public var universalPlanes: Bool
    /// Each connector, the size of its EDID (nil: none) and its properties.
    public var connectors: [(Connector, edidBytes: Int?, properties: [PropertyValue])]
    /// The panel behind each connector (same order): decoded EDID, vrr_capable.
    public var identities: [PanelIdentity]
    /// The encoders.
    public var encoders: [Encoder]
    /// The CRTCs.
    public var crtcs: [CRTCState]
    /// Each CRTC's CRC sources (debugfs `crtc-M/crc/control`), or why they cannot be read.
    public var crcSources: [Result<[String], CRCError>]
    /// The writeback connectors (listed after enabling the writeback client cap).
    public var writeback: [WritebackConnector]
    /// The planes and their kinds.
    public var planes: [(Plane, PlaneKind)]

    /// Reads `dev`; throws ``Unreadable`` when its version or resources cannot be read, and
    /// the `DRMError` of a connector, encoder or CRTC that cannot.
    public init(_ dev: DRMDevice) throws {
        path = dev.path
        do { version = try dev.version() } catch let e as DRMError { throw Unreadable(error: e) }
        caps = Self.reportedCapabilities.map { ($0, try? dev.capability($0)) }
        universalPlanes = (try? dev.enable(.universalPlanes)) != nil
        atomic = (try? dev.enable(.atomic)) != nil
        let res: CardResources
        do { res = try dev.resources() } catch let e as DRMError { throw Unreadable(error: e) }
        connectors = try res.connectors.map { id in
            let c = try dev.connector(id)
            return (c, (try? dev.edid(of: id))??.count, (try? dev.properties(of: id, type: .connector)) ?? [])
        }
        identities = connectors.map { PanelIdentity(device: dev, connector: $0.0.id, properties: $0.properties) }
        encoders = try res.encoders.map { try dev.encoder($0) }
        crtcs = try res.crtcs.map { try dev.crtc($0) }
        (crcSources, writeback) = Self.scanoutSources(dev, crtcs: res.crtcs.count)
        planes = ((try? dev.planeIDs()) ?? []).compactMap { id in
            guard let p = try? dev.plane(id) else { return nil }
            return (p, (try? dev.planeKind(id)) ?? .overlay)
        }
    }

    /// Each CRTC's CRC sources (or why unknown) and the writeback connectors (after enabling the
    /// writeback client cap; none when the kernel refuses it).
    public static func scanoutSources(
        _ dev: DRMDevice, crtcs: Int
    ) -> ([Result<[String], CRCError>], [WritebackConnector]) {
        let crc = (0..<crtcs).map { i in Result { () throws(CRCError) in try dev.crcSources(crtcIndex: i) } }
        let writeback = (try? dev.enable(.writebackConnectors)) != nil ? (try? dev.writebackConnectors()) ?? [] : []
        return (crc, writeback)
    }
}

extension DeviceInventory {
    /// The mode `connector` is driven at: the mode of the CRTC its encoder feeds (nil when
    /// nothing drives it).
    public func drivenMode(of connector: Connector) -> ModeInfo? {
        let encoder = encoders.first { $0.id == connector.encoderID }
        return encoder.flatMap { e in crtcs.first { $0.id == e.crtcID } }?.mode
    }
}
