import DRM
import EDID

/// The panel behind a connector (what `cadence list` shows about it): its decoded EDID (or why
/// there is none) and the connector's `vrr_capable` property.
public struct PanelIdentity {
    /// The decoded EDID; nil when the connector has none or it does not decode.
    public var edid: EDID?
    /// Why there is no decoded EDID ("no EDID", or the decoder's error).
    public var problem: String?
    /// The connector's `vrr_capable` property, nil when the driver has none.
    public var vrrCapable: Bool?

    /// The identity of an EDID's `bytes` (nil or empty: none) and a connector's `properties`.
    public init(bytes: [UInt8]?, properties: [PropertyValue]) {
        vrrCapable = properties.first { $0.info.name == "vrr_capable" }.map { $0.value != 0 }
        guard let bytes, !bytes.isEmpty else {
            problem = "no EDID"
            return
        }
        do { edid = try EDID(bytes) } catch { problem = "EDID does not decode: \(error)" }
    }

    /// Reads the identity of `connector` on `dev` (EDID errors become ``problem``).
    public init(device dev: DRMDevice, connector: ConnectorID, properties: [PropertyValue]) {
        let bytes: [UInt8]?
        do { bytes = try dev.edid(of: connector) } catch { bytes = nil }
        self.init(bytes: bytes, properties: properties)
    }
}
