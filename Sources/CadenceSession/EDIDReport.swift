import EDID

/// Text and JSON renderings of a decoded `EDID`, shared by `cadence edid` and `cadence list`.
public enum EDIDReport {
    /// A refresh in Hz with six decimals.
    public static func hz(_ v: Double) -> String { EDIDFormat.fixed(v, 6) }

    /// "3840x2160@60.000000 Hz" plus the clock and totals.
    private static func timingText(_ t: Timing) -> String {
        "\(t.hActive)x\(t.vActive)\(t.interlaced ? "i" : "") @ \(hz(t.refreshHz)) Hz  (\(EDIDFormat.fixed(Double(t.pixelClockHz) / 1e6, 3)) MHz, \(t.hTotal)x\(EDIDFormat.fixed(t.vTotalPerField, t.interlaced && !t.evenVTotal ? 1 : 0)) total)"
    }

    /// The screen size in mm and cm with the diagonal, or the aspect ratio; nil when neither is given.
    private static func sizeText(_ e: EDID) -> String? {
        if let s = e.sizeCM, let d = e.diagonalInches {
            return "\(s.width * 10) x \(s.height * 10) mm (\(s.width) x \(s.height) cm, \(EDIDFormat.fixed(d, 1))\")"
        }
        if let a = e.aspectRatio { return "aspect ratio \(EDIDFormat.fixed(a, 2)) (no size)" }
        return nil
    }

    /// The model year, or the week and year of manufacture ("?" when not given).
    private static func madeText(_ e: EDID) -> String {
        if let m = e.modelYear { return "model year \(m)" }
        if let y = e.year { return e.week.map { "week \($0) of \(y)" } ?? "\(y)" }
        return "?"
    }

    /// The VRR ranges declared, or "none declared".
    private static func vrrText(_ ranges: [VRRRange]) -> String {
        ranges.isEmpty ? "none declared" : ranges.map(\.description).joined(separator: "; ")
    }

    /// The identity lines (indented by `indent`), as `cadence edid` and `list` print them.
    public static func identityLines(_ e: EDID, indent: String) -> [String] {
        var out: [String] = []
        func line(_ k: String, _ v: String) { out.append(indent + k.padded(13) + v) }
        line("monitor", e.name.map { "\"\($0)\"" } ?? "(no name descriptor)")
        line("manufacturer", "\(e.manufacturer), product code \(e.productCode) (0x\(String(e.productCode, radix: 16)))")
        var serial = e.serialNumber.map(String.init) ?? "-"
        if let s = e.serialString { serial += "  \"\(s)\"" }
        line("serial", serial)
        line("made", madeText(e))
        line("size", sizeText(e) ?? "not given")
        line("preferred", e.preferredTiming.map(timingText) ?? "none")
        line("VRR", vrrText(e.vrrRanges))
        return out
    }

    /// Everything `cadence edid` prints.
    public static func text(_ e: EDID, origin: String) -> String {
        var kinds: [String] = []
        if e.cta != nil { kinds.append("CTA-861") }
        if e.displayID != nil { kinds.append("DisplayID") }
        var s = "\(origin): EDID \(e.version).\(e.revision), \(e.bytes.count) bytes"
        s +=
            e.bytes.count > 128
            ? " (\(e.bytes.count / 128 - 1) extension block(s): \(kinds.joined(separator: ", ")))\n" : "\n"
        s += identityLines(e, indent: "  ").joined(separator: "\n") + "\n"
        var iface = e.isDigital ? "digital" : "analog"
        if let i = e.digitalInterface { iface += ", \(i)" }
        if let b = e.bitsPerColor { iface += ", \(b) bits per colour" }
        s += "  " + "interface".padded(13) + iface + "\n"
        if let n = e.nativeResolution { s += "  " + "native".padded(13) + "\(n.width)x\(n.height)\n" }
        if let r = e.rangeLimits {
            s += "  " + "range limits".padded(13)
            s += "\(r.minVerticalHz)-\(r.maxVerticalHz) Hz V, \(r.minHorizontalKHz)-\(r.maxHorizontalKHz) kHz H"
            s += (r.maxPixelClockMHz.map { ", max \($0) MHz" } ?? "") + " (\(r.kind))\n"
        }
        if let c = e.cta {
            if let h = c.hdmi {
                s +=
                    "  " + "HDMI".padded(13) + "physical address \(h.physicalAddress)"
                    + (h.maxTMDSClockMHz.map { ", max TMDS \($0) MHz" } ?? "") + "\n"
            }
            if let f = c.hdmiForum {
                s +=
                    "  " + "HDMI Forum".padded(13) + "max TMDS \(f.maxTMDSRateMHz) MHz" + (f.allm ? ", ALLM" : "")
                    + "\n"
            }
            if let h = c.hdr {
                s +=
                    "  " + "HDR".padded(13) + (h.eotfs.isEmpty ? "no EOTF" : h.eotfs.joined(separator: " "))
                    + (h.maxLuminance.map { ", max \(EDIDFormat.fixed($0, 1)) cd/m²" } ?? "") + "\n"
            }
        }
        if let t = e.displayID?.tiles {
            s += "  " + "tiles".padded(13)
            s +=
                "\(t.horizontalTiles)x\(t.verticalTiles), this tile at column \(t.column) row \(t.row), \(t.tileWidth)x\(t.tileHeight)\n"
        }
        s += "  timings (\(e.timings.count)):\n"
        for t in e.timings {
            var flags: [String] = []
            if t.preferred { flags.append("preferred") }
            if t.native { flags.append("native") }
            if let f = t.fractionalRefreshHz { flags.append("also \(hz(f)) Hz") }
            s +=
                "    " + "\(t.source)".padded(26) + timingText(t)
                + (flags.isEmpty ? "" : "  " + flags.joined(separator: ", ")) + "\n"
        }
        for w in e.warnings { s += "  warning: \(w)\n" }
        return s
    }

    /// A timing's JSON object.
    private static func timingJSON(_ t: Timing) -> JSON {
        .object([
            ("width", .int(t.hActive)), ("height", .int(t.vActive)), ("interlaced", .bool(t.interlaced)),
            ("refreshHz", .number(t.refreshHz, decimals: 6)),
            ("fractionalRefreshHz", t.fractionalRefreshHz.map { .number($0, decimals: 6) } ?? .null),
            ("pixelClockKHz", .int(t.pixelClockHz / 1000)), ("htotal", .int(t.hTotal)),
            ("vtotal", .number(t.vTotalPerField, decimals: 1)),
            ("source", .string(t.source.description)), ("preferred", .bool(t.preferred)), ("native", .bool(t.native))
        ])
    }

    /// A VRR range's JSON object.
    private static func vrrJSON(_ r: VRRRange) -> JSON {
        .object([
            ("minHz", .number(r.minHz, decimals: 3)), ("maxHz", .number(r.maxHz, decimals: 3)),
            ("source", .string(r.source.rawValue))
        ])
    }

    /// The identity object `list --json` carries per connector (and the top of `edid --json`).
    public static func identityJSON(_ e: EDID) -> [(String, JSON)] {
        [
            ("name", .optional(e.name)), ("manufacturer", .string(e.manufacturer)),
            ("productCode", .int(e.productCode)),
            ("serialNumber", e.serialNumber.map { .int(Int($0)) } ?? .null),
            ("serialString", .optional(e.serialString)),
            ("week", .optional(e.week)), ("year", .optional(e.year)), ("modelYear", .optional(e.modelYear)),
            (
                "sizeMM",
                e.sizeCM.map { .object([("width", .int($0.width * 10)), ("height", .int($0.height * 10))]) } ?? .null
            ),
            ("diagonalInches", e.diagonalInches.map { .number($0, decimals: 1) } ?? .null),
            ("preferredTiming", e.preferredTiming.map(timingJSON) ?? .null),
            ("vrrRanges", .array(e.vrrRanges.map(vrrJSON))),
            ("adaptiveSyncRange", e.adaptiveSyncRange.map(vrrJSON) ?? .null)
        ]
    }

    /// Everything `cadence edid --json` prints.
    public static func json(_ e: EDID, origin: String) -> JSON {
        var o: [(String, JSON)] = [
            ("source", .string(origin)), ("bytes", .int(e.bytes.count)),
            ("version", .string("\(e.version).\(e.revision)"))
        ]
        o += identityJSON(e)
        o += [
            ("strings", .array(e.strings.map(JSON.string))), ("digital", .bool(e.isDigital)),
            ("interface", .optional(e.digitalInterface?.description)), ("bitsPerColor", .optional(e.bitsPerColor)),
            ("sizeCM", e.sizeCM.map { .object([("width", .int($0.width)), ("height", .int($0.height))]) } ?? .null),
            ("aspectRatio", e.aspectRatio.map { .number($0, decimals: 2) } ?? .null),
            ("preferredIsNative", .bool(e.firstDTDIsNative)),
            (
                "nativeResolution",
                e.nativeResolution.map { .object([("width", .int($0.width)), ("height", .int($0.height))]) } ?? .null
            ),
            (
                "rangeLimits",
                e.rangeLimits.map { r in
                    .object([
                        ("minVerticalHz", .int(r.minVerticalHz)), ("maxVerticalHz", .int(r.maxVerticalHz)),
                        ("minHorizontalKHz", .int(r.minHorizontalKHz)), ("maxHorizontalKHz", .int(r.maxHorizontalKHz)),
                        ("maxPixelClockMHz", .optional(r.maxPixelClockMHz)), ("kind", .string(r.kind))
                    ])
                } ?? .null
            ),
            ("cta", e.cta.map(ctaJSON) ?? .null),
            ("displayID", e.displayID.map(displayIDJSON) ?? .null),
            ("timings", .array(e.timings.map(timingJSON))),
            ("warnings", .array(e.warnings.map(JSON.string)))
        ]
        return .object(o)
    }

    /// The CTA-861 extension's JSON object.
    private static func ctaJSON(_ c: CTAInfo) -> JSON {
        .object([
            ("revision", .int(c.revision)), ("nativeDTDs", .int(c.nativeDTDs)),
            ("vics", .array(c.vics.map(JSON.int))), ("nativeVICs", .array(c.nativeVICs.map(JSON.int))),
            (
                "hdmi",
                c.hdmi.map {
                    .object([
                        ("physicalAddress", .string($0.physicalAddress)),
                        ("maxTMDSClockMHz", .optional($0.maxTMDSClockMHz))
                    ])
                } ?? .null
            ),
            (
                "hdmiForum",
                c.hdmiForum.map {
                    .object([
                        ("version", .int($0.version)), ("maxTMDSRateMHz", .int($0.maxTMDSRateMHz)),
                        ("allm", .bool($0.allm)), ("vrrMinHz", .optional($0.vrrMinHz)),
                        ("vrrMaxHz", .optional($0.vrrMaxHz))
                    ])
                } ?? .null
            ),
            (
                "amdFreeSync",
                c.amdFreeSync.map {
                    .object([("version", .string($0.version)), ("minHz", .int($0.minHz)), ("maxHz", .int($0.maxHz))])
                } ?? .null
            ),
            (
                "hdr",
                c.hdr.map { h in
                    .object([
                        ("eotfs", .array(h.eotfs.map(JSON.string))),
                        ("maxLuminance", h.maxLuminance.map { .number($0, decimals: 3) } ?? .null),
                        (
                            "maxFrameAverageLuminance",
                            h.maxFrameAverageLuminance.map { .number($0, decimals: 3) } ?? .null
                        ),
                        ("minLuminance", h.minLuminance.map { .number($0, decimals: 3) } ?? .null)
                    ])
                } ?? .null
            )
        ])
    }

    /// The DisplayID extension's JSON object.
    private static func displayIDJSON(_ d: DisplayIDInfo) -> JSON {
        .object([
            ("version", .string("\(d.version >> 4).\(d.version & 15)")), ("productType", .int(d.productType)),
            (
                "product",
                d.product.map { p in
                    .object([
                        ("vendor", .string(p.vendor)), ("productCode", .int(p.productCode)),
                        ("serialNumber", p.serialNumber.map { .int(Int($0)) } ?? .null), ("week", .optional(p.week)),
                        ("year", .int(p.year)), ("modelYear", .bool(p.isModelYear)),
                        ("productName", .string(p.productName))
                    ])
                } ?? .null
            ),
            (
                "nativeResolution",
                d.nativeResolution.map { .object([("width", .int($0.width)), ("height", .int($0.height))]) } ?? .null
            ),
            (
                "adaptiveSync",
                .array(
                    d.adaptiveSync.map {
                        .object([("minHz", .int($0.minHz)), ("maxHz", .int($0.maxHz)), ("native", .bool($0.native))])
                    })
            ),
            (
                "rangeLimits",
                d.rangeLimits.map {
                    .object([
                        ("minHz", .int($0.minHz)), ("maxHz", .int($0.maxHz)),
                        ("minPixelClockKHz", .int($0.minPixelClockKHz)), ("maxPixelClockKHz", .int($0.maxPixelClockKHz))
                    ])
                } ?? .null
            ),
            (
                "tiles",
                d.tiles.map { t in
                    .object([
                        ("horizontal", .int(t.horizontalTiles)), ("vertical", .int(t.verticalTiles)),
                        ("column", .int(t.column)),
                        ("row", .int(t.row)), ("width", .int(t.tileWidth)), ("height", .int(t.tileHeight)),
                        ("singleEnclosure", .bool(t.singleEnclosure)), ("vendor", .string(t.vendor)),
                        ("productCode", .int(t.productCode)), ("serialNumber", .int(Int(t.serialNumber)))
                    ])
                } ?? .null
            )
        ])
    }
}

extension String {
    /// Left-justified in `width` columns.
    public func padded(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
