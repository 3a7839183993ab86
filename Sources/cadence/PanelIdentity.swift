import DRM
import EDID

/// What `cadence list` shows about the panel behind a connector: its decoded EDID (or why there
/// is none) and the connector's `vrr_capable` property.
struct PanelIdentity {
    /// The decoded EDID; nil when the connector has none or it does not decode.
    var edid: EDID?
    /// Why there is no decoded EDID ("no EDID", or the decoder's error).
    var problem: String?
    /// The connector's `vrr_capable` property, nil when the driver has none.
    var vrrCapable: Bool?

    init(bytes: [UInt8]?, properties: [PropertyValue]) {
        vrrCapable = properties.first { $0.info.name == "vrr_capable" }.map { $0.value != 0 }
        guard let bytes, !bytes.isEmpty else {
            problem = "no EDID"
            return
        }
        do { edid = try EDID(bytes) } catch { problem = "EDID does not decode: \(error)" }
    }

    /// Reads the identity of `connector` on `dev` (EDID errors become ``problem``).
    init(device dev: DRMDevice, connector: ConnectorID, properties: [PropertyValue]) {
        let bytes: [UInt8]?
        do { bytes = try dev.edid(of: connector) } catch { bytes = nil }
        self.init(bytes: bytes, properties: properties)
    }

    var vrrCapableText: String { vrrCapable.map { "vrr_capable \($0 ? 1 : 0)" } ?? "no vrr_capable property" }

    /// The lines `list` prints under a connected connector.
    func lines(indent: String) -> [String] {
        guard let e = edid else {
            return [indent + "identity".padded(13) + "\(problem ?? "no EDID"), \(vrrCapableText)"]
        }
        var out = EDIDReport.identityLines(e, indent: indent)
        if let i = out.lastIndex(where: { $0.hasPrefix(indent + "VRR") }) { out[i] += "; \(vrrCapableText)" }
        if !e.warnings.isEmpty { out.append(indent + "EDID".padded(13) + "warnings: " + e.warnings.joined(separator: "; ")) }
        return out
    }

    /// `list --json`'s `identity` object (null fields where the EDID gives nothing).
    var json: JSON {
        var o: [(String, JSON)] = [("edid", .bool(edid != nil)), ("problem", problem.map(JSON.string) ?? .null)]
        if let e = edid {
            o += EDIDReport.identityJSON(e)
            o.append(("edidWarnings", .array(e.warnings.map(JSON.string))))
        }
        o.append(("vrrCapable", vrrCapable.map(JSON.bool) ?? .null))
        return .object(o)
    }
}
