import CadenceSession
import DRM

/// What `list` shows for scanout verification: each CRTC's CRC sources and the writeback
/// connectors.
extension DeviceInventory {
    /// A CRTC's CRC sources for the text listing: the sources, none, or why unknown.
    static func crcText(_ r: Result<[String], CRCError>) -> String {
        switch r {
        case .success(let sources):
            return sources.isEmpty
                ? "sources unknown (the control file lists none)" : "sources " + sources.joined(separator: " ")
        case .failure(.unsupported(let driver, _)): return "none (\(driver) has no CRC for it)"
        case .failure(let e): return "unknown (\(e))"
        }
    }

    /// The text lines: one per CRTC with its CRC sources, one per writeback connector.
    var scanoutText: String {
        var s = ""
        for (i, c) in crtcs.enumerated() { s += "  CRTC \(c.id.rawValue) CRC: " + Self.crcText(crcSources[i]) + "\n" }
        if writeback.isEmpty { s += "  writeback connectors: none\n" }
        for w in writeback {
            s += "  writeback connector \(w.name) (id \(w.id.rawValue)): CRTC \(w.crtc.rawValue), "
            s +=
                "possible CRTCs \(Self.hex(w.possibleCRTCs)), formats \(w.formats.map(\.description).joined(separator: " "))\n"
        }
        return s
    }

    /// The CRTC's `crcSources` (empty: the driver has none; null with `crcError`: unknown).
    func crcJSON(_ i: Int) -> [(String, JSON)] {
        switch crcSources[i] {
        case .success(let sources): return [("crcSources", .array(sources.map(JSON.string)))]
        case .failure(.unsupported): return [("crcSources", .array([]))]
        case .failure(let e): return [("crcSources", .null), ("crcError", .string(e.description))]
        }
    }

    /// The writeback connectors: name, id, CRTC, possible CRTCs, formats.
    var writebackJSON: JSON {
        .array(
            writeback.map { w in
                .object([
                    ("name", .string(w.name)), ("id", .int(Int(w.id.rawValue))), ("crtc", .int(Int(w.crtc.rawValue))),
                    ("possibleCrtcs", .int(Int(w.possibleCRTCs))),
                    ("formats", .array(w.formats.map { .string($0.description) }))
                ])
            })
    }
}
