import DRM
import EDID

/// What `cadence list` prints about one device: its text block and its JSON object.
extension DeviceInventory {
    /// A mode's sync polarities, interlace, doublescan and vscan ("+hsync +vsync interlace").
    private static func flagText(_ m: ModeInfo) -> String {
        var f: [String] = []
        if m.flags.contains(.phsync) { f.append("+hsync") }
        if m.flags.contains(.nhsync) { f.append("-hsync") }
        if m.flags.contains(.pvsync) { f.append("+vsync") }
        if m.flags.contains(.nvsync) { f.append("-vsync") }
        if m.flags.contains(.interlace) { f.append("interlace") }
        if m.flags.contains(.doublescan) { f.append("doublescan") }
        if m.vscan > 1 { f.append("vscan \(m.vscan)") }
        return f.joined(separator: " ")
    }

    /// `v` in hexadecimal with a `0x` prefix.
    public static func hex(_ v: UInt32) -> String { "0x" + String(v, radix: 16) }

    /// The device's text block: driver, caps, connectors with their panels, properties and
    /// modes (`*` = preferred), encoders, CRTCs, CRC sources, writeback connectors and planes.
    public var text: String {
        var s = "\(path): driver \(version.name) \(version.versionString)"
        if !version.description.isEmpty { s += " (\(version.description))" }
        s += "\n  caps:"
        for (cap, v) in caps { s += " \(cap)=\(v.map(String.init) ?? "?")" }
        s += "\n  client caps: universal planes \(universalPlanes ? "yes" : "no"), atomic \(atomic ? "yes" : "no")\n"
        for (i, (c, edid, props)) in connectors.enumerated() {
            s += "  connector \(c.name) (id \(c.id.rawValue)): \(c.status)"
            if c.status == .connected {
                s += ", \(c.widthMM)x\(c.heightMM) mm, EDID \(edid.map { "\($0) bytes" } ?? "none")"
            }
            s += "\n"
            if c.status == .connected { for l in identities[i].listingLines(indent: "    ") { s += l + "\n" } }
            let shown = props.filter { !$0.info.isBlob }
            if !shown.isEmpty {
                s +=
                    "    properties: " + shown.map { "\($0.info.name)=\($0.displayValue)" }.joined(separator: " ")
                    + "\n"
            }
            for m in c.modes {
                s += "    \(m.isPreferred ? "*" : " ") \(m.description) Hz  clock \(m.clock) kHz"
                s += "  h \(m.hdisplay) \(m.hsyncStart) \(m.hsyncEnd) \(m.htotal)"
                s += "  v \(m.vdisplay) \(m.vsyncStart) \(m.vsyncEnd) \(m.vtotal)"
                let flags = Self.flagText(m)
                if !flags.isEmpty { s += "  \(flags)" }
                s += "\n"
            }
        }
        for e in encoders {
            s += "  encoder \(e.id.rawValue): CRTC \(e.crtcID.rawValue), possible CRTCs \(Self.hex(e.possibleCRTCs))\n"
        }
        for c in crtcs {
            s += "  CRTC \(c.id.rawValue): "
            s += c.mode.map { "\($0.description) Hz, framebuffer \(c.framebufferID.rawValue)" } ?? "off"
            s += "\n"
        }
        s += scanoutText
        for (p, kind) in planes {
            s +=
                "  plane \(p.id.rawValue): \(kind), CRTC \(p.crtcID.rawValue), possible CRTCs \(Self.hex(p.possibleCRTCs)), "
            s += "formats \(p.formats.map(\.description).joined(separator: " "))\n"
        }
        return s
    }

    /// A mode's JSON object: name, size, exact refresh, preferred, clock, totals and flags.
    private static func modeJSON(_ m: ModeInfo) -> JSON {
        .object([
            ("name", .string(m.name)), ("width", .int(Int(m.hdisplay))), ("height", .int(Int(m.vdisplay))),
            ("refreshHz", .number(m.refreshHz, decimals: 4)), ("preferred", .bool(m.isPreferred)),
            ("clockKHz", .int(Int(m.clock))),
            ("htotal", .int(Int(m.htotal))), ("vtotal", .int(Int(m.vtotal))),
            ("interlaced", .bool(m.flags.contains(.interlace))), ("doublescan", .bool(m.flags.contains(.doublescan))),
            ("vscan", .int(Int(m.vscan))), ("flags", .string(flagText(m)))
        ])
    }

    /// The device's JSON object (one element of `list --json`'s `devices`).
    public var json: JSON {
        .object([
            ("path", .string(path)),
            ("driver", .string(version.name)), ("driverVersion", .string(version.versionString)),
            ("driverDescription", .string(version.description)),
            ("caps", .object(caps.map { ($0.0.description, $0.1.map { .int(Int($0)) } ?? .null) })),
            ("universalPlanes", .bool(universalPlanes)), ("atomic", .bool(atomic)),
            (
                "connectors",
                .array(
                    connectors.indices.map { i in
                        let (c, edid, props) = connectors[i]
                        return .object([
                            ("name", .string(c.name)), ("id", .int(Int(c.id.rawValue))),
                            ("status", .string(c.status.description)),
                            ("widthMM", .int(c.widthMM)), ("heightMM", .int(c.heightMM)),
                            ("edidBytes", edid.map { .int($0) } ?? .null), ("identity", identities[i].listingJSON),
                            (
                                "properties",
                                .object(
                                    props.map { p in
                                        (
                                            p.info.name,
                                            p.info.enumName(p.value).map(JSON.string)
                                                ?? .int(Int(truncatingIfNeeded: p.value))
                                        )
                                    })
                            ),
                            ("modes", .array(c.modes.map(Self.modeJSON)))
                        ])
                    })
            ),
            (
                "encoders",
                .array(
                    encoders.map { e in
                        .object([
                            ("id", .int(Int(e.id.rawValue))), ("crtc", .int(Int(e.crtcID.rawValue))),
                            ("possibleCrtcs", .int(Int(e.possibleCRTCs)))
                        ])
                    })
            ),
            (
                "crtcs",
                .array(
                    crtcs.indices.map { i in
                        let c = crtcs[i]
                        return .object(
                            [
                                ("id", .int(Int(c.id.rawValue))), ("framebuffer", .int(Int(c.framebufferID.rawValue))),
                                ("mode", c.mode.map(Self.modeJSON) ?? .null)
                            ] + crcJSON(i))
                    })
            ),
            ("writebackConnectors", writebackJSON),
            (
                "planes",
                .array(
                    planes.map { p, kind in
                        .object([
                            ("id", .int(Int(p.id.rawValue))), ("type", .string(kind.description)),
                            ("crtc", .int(Int(p.crtcID.rawValue))), ("possibleCrtcs", .int(Int(p.possibleCRTCs))),
                            ("formats", .array(p.formats.map { .string($0.description) }))
                        ])
                    })
            )
        ])
    }

    /// `list --json`'s one object: the fake DRM backend and its profiles (when `profiles` is not
    /// empty), then the `devices` objects.
    public static func listingJSON(_ devices: [JSON], profiles: [String]) -> String {
        let sim: [(String, JSON)] =
            profiles.isEmpty
            ? [] : [("backend", .string("fake-drm")), ("profile", .string(profiles.joined(separator: ",")))]
        return JSON.object(sim + [("devices", .array(devices))]).rendered
    }

    /// A CRTC's CRC sources for the text listing: the sources, none, or why unknown.
    public static func crcText(_ r: Result<[String], CRCError>) -> String {
        switch r {
        case .success(let sources):
            return sources.isEmpty
                ? "sources unknown (the control file lists none)" : "sources " + sources.joined(separator: " ")
        case .failure(.unsupported(let driver, _)): return "none (\(driver) has no CRC for it)"
        case .failure(let e): return "unknown (\(e))"
        }
    }

    /// The text lines: one per CRTC with its CRC sources, one per writeback connector.
    private var scanoutText: String {
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
    public func crcJSON(_ i: Int) -> [(String, JSON)] {
        switch crcSources[i] {
        case .success(let sources): return [("crcSources", .array(sources.map(JSON.string)))]
        case .failure(.unsupported): return [("crcSources", .array([]))]
        case .failure(let e): return [("crcSources", .null), ("crcError", .string(e.description))]
        }
    }

    /// The writeback connectors: name, id, CRTC, possible CRTCs, formats.
    private var writebackJSON: JSON {
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

/// What `cadence list` prints about the panel behind a connected connector.
extension PanelIdentity {
    /// "vrr_capable 1", "vrr_capable 0", or "no vrr_capable property".
    private var vrrCapableDescription: String {
        vrrCapable.map { "vrr_capable \($0 ? 1 : 0)" } ?? "no vrr_capable property"
    }

    /// The lines `list` prints under a connected connector, each starting with `indent`: the
    /// EDID's identity lines with vrr_capable after the VRR ranges and the EDID's warnings, or
    /// why there is no identity.
    public func listingLines(indent: String) -> [String] {
        guard let e = edid else {
            return [indent + "identity".padded(13) + "\(problem ?? "no EDID"), \(vrrCapableDescription)"]
        }
        var out = EDIDReport.identityLines(e, indent: indent)
        if let i = out.lastIndex(where: { $0.hasPrefix(indent + "VRR") }) { out[i] += "; \(vrrCapableDescription)" }
        if !e.warnings.isEmpty {
            out.append(indent + "EDID".padded(13) + "warnings: " + e.warnings.joined(separator: "; "))
        }
        return out
    }

    /// `list --json`'s `identity` object (null fields where the EDID gives nothing).
    public var listingJSON: JSON {
        var o: [(String, JSON)] = [("edid", .bool(edid != nil)), ("problem", .optional(problem))]
        if let e = edid {
            o += EDIDReport.identityJSON(e)
            o.append(("edidWarnings", .array(e.warnings.map(JSON.string))))
        }
        o.append(("vrrCapable", vrrCapable.map(JSON.bool) ?? .null))
        return .object(o)
    }
}
