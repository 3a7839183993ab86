import CadenceSession
import DRM
import EDID

/// What `cadence list` prints about the panel behind a connector (`PanelIdentity`).
extension PanelIdentity {
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
