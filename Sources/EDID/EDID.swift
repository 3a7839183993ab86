/// A pure Swift EDID / CTA-861 / DisplayID decoder: panel identity, timings with exact
/// refresh, range limits and every VRR range a display advertises. No libdrm, no Foundation.
///
/// ```swift
/// let edid = try EDID(bytes)          // throws EDIDError for input that is not an EDID
/// print(edid.name ?? "?", edid.preferredTiming?.refreshHz ?? 0, edid.vrrRanges)
/// ```
/// Damaged input never traps: a bad checksum, a truncated extension, a data block that runs past
/// its block, or unknown blocks are decoded as far as they go and listed in ``warnings``.

/// Why bytes could not be decoded as an EDID at all.
public struct EDIDError: Error, Equatable, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ message: String) { description = message }
}

/// The physical interface a digital EDID 1.4 names (byte 0x14 bits 3–0).
public enum DigitalInterface: Sendable, Equatable, CustomStringConvertible {
    case undefined, dvi, hdmiA, hdmiB, mddi, displayPort
    case reserved(Int)

    init(_ v: Int) {
        switch v {
        case 0: self = .undefined
        case 1: self = .dvi
        case 2: self = .hdmiA
        case 3: self = .hdmiB
        case 4: self = .mddi
        case 5: self = .displayPort
        default: self = .reserved(v)
        }
    }

    public var description: String {
        switch self {
        case .undefined: return "undefined"
        case .dvi: return "DVI"
        case .hdmiA: return "HDMI-a"
        case .hdmiB: return "HDMI-b"
        case .mddi: return "MDDI"
        case .displayPort: return "DisplayPort"
        case .reserved(let v): return "reserved(\(v))"
        }
    }
}

/// The display range limits descriptor (0xFD), with EDID 1.4's +255 offsets applied.
public struct RangeLimits: Sendable, Equatable {
    public var minVerticalHz: Int
    public var maxVerticalHz: Int
    public var minHorizontalKHz: Int
    public var maxHorizontalKHz: Int
    /// Maximum pixel clock in MHz (multiple of 10), nil when not given.
    public var maxPixelClockMHz: Int?
    /// "GTF", "Bare Limits", "Secondary GTF", "CVT" or "Unknown".
    public var kind: String
}

/// A variable-refresh range and where the display declares it.
public struct VRRRange: Sendable, Equatable, CustomStringConvertible {
    public enum Source: String, Sendable, Equatable {
        /// EDID display range limits (a continuous-frequency display; for DP adaptive sync
        /// panels this is the range drivers use).
        case rangeLimits = "edid-range-limits"
        /// HDMI Forum VSDB or SCDB VRRmin/VRRmax.
        case hdmiForum = "hdmi-forum"
        /// AMD vendor-specific block (FreeSync).
        case amdFreeSync = "amd-freesync"
        /// DisplayID 2.x Adaptive-Sync data block.
        case displayIDAdaptiveSync = "displayid-adaptive-sync"
        /// DisplayID video timing range limits (1.3 tag 0x09, 2.x dynamic 0x25).
        case displayIDRangeLimits = "displayid-range-limits"
    }

    public var minHz: Double
    public var maxHz: Double
    public var source: Source

    public var description: String { "\(EDIDFormat.fixed(minHz, 0))–\(EDIDFormat.fixed(maxHz, 0)) Hz (\(source.rawValue))" }
}

/// An EDID decoded: base block, CTA-861 and DisplayID extensions.
public struct EDID: Sendable {
    /// The input bytes (whole 128-byte blocks).
    public var bytes: [UInt8]
    /// EDID structure version and revision (1 and 3 for "1.3").
    public var version: Int = 0
    public var revision: Int = 0
    /// Three-letter PNP manufacturer id ("SAM", "DEL").
    public var manufacturer: String = ""
    public var productCode: Int = 0
    /// The 32-bit serial number, nil when 0.
    public var serialNumber: UInt32?
    /// The serial number string descriptor (0xFF).
    public var serialString: String?
    /// The monitor name descriptor (0xFC); a name split over several descriptors is joined.
    public var name: String?
    /// Alphanumeric data string descriptors (0xFE).
    public var strings: [String] = []
    /// Week of manufacture 1–54, nil when 0 or a model year.
    public var week: Int?
    /// Year of manufacture, nil when the EDID gives a model year.
    public var year: Int?
    public var modelYear: Int?
    public var isDigital = false
    /// EDID 1.4 digital interface and bits per colour, nil when not given.
    public var digitalInterface: DigitalInterface?
    public var bitsPerColor: Int?
    /// Maximum image size in cm, nil when variable or given as an aspect ratio.
    public var sizeCM: (width: Int, height: Int)?
    /// EDID 1.4 aspect ratio (width / height) given instead of a size.
    public var aspectRatio: Double?
    /// Byte 0x18 bit 1: the first DTD is the native pixel format and preferred refresh (EDID
    /// 1.4), or the preferred timing (EDID 1.3).
    public var firstDTDIsNative = false
    /// Byte 0x18 bit 0: continuous-frequency display (EDID 1.4; GTF-capable before).
    public var continuousFrequency = false
    /// Every timing in decode order: established, standard, DTDs, CTA VICs and DTDs, DisplayID.
    public var timings: [Timing] = []
    public var rangeLimits: RangeLimits?
    public var cta: CTAInfo?
    public var displayID: DisplayIDInfo?
    /// Number of extension blocks the base block announces.
    public var extensionCount = 0
    /// Problems found while decoding (bad checksums, truncation, malformed blocks).
    public var warnings: [String] = []

    /// Decodes `bytes`. Throws ``EDIDError`` only when they cannot be an EDID (shorter than
    /// 128 bytes, or no EDID header); everything else is decoded as far as it goes, with warnings.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 128 else {
            throw EDIDError(bytes.isEmpty ? "empty input: no EDID" : "\(bytes.count) bytes: an EDID has at least 128")
        }
        let header: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        guard Array(bytes[0..<8]) == header else { throw EDIDError("no EDID header (00 FF FF FF FF FF FF 00)") }
        let whole = bytes.count / 128 * 128
        if whole != bytes.count {
            warnings.append("length \(bytes.count) is not a multiple of 128: the last \(bytes.count - whole) bytes are ignored")
        }
        self.bytes = Array(bytes[0..<whole])
        var d = Decoder(edid: self)
        d.run()
        self = d.edid
    }

    /// The timing the display prefers: the base block's first DTD (EDID 1.4, or 1.3 with
    /// byte 0x18 bit 1), else the first DisplayID type 1/7 timing with its preferred bit; nil
    /// when neither exists.
    public var preferredTiming: Timing? { timings.first { $0.preferred } }

    /// The native resolution: DisplayID display parameters, else the preferred timing's.
    public var nativeResolution: (width: Int, height: Int)? {
        if let n = displayID?.nativeResolution { return n }
        return preferredTiming.map { ($0.hActive, $0.vActive) }
    }

    /// Every VRR range the EDID declares, in block order: range limits (when the display is
    /// continuous-frequency capable or EDID < 1.4), HDMI Forum, AMD FreeSync, DisplayID.
    public var vrrRanges: [VRRRange] {
        var out: [VRRRange] = []
        if let r = rangeLimits, r.maxVerticalHz > r.minVerticalHz {
            out.append(VRRRange(minHz: Double(r.minVerticalHz), maxHz: Double(r.maxVerticalHz), source: .rangeLimits))
        }
        if let hf = cta?.hdmiForum, let lo = hf.vrrMinHz, let hi = hf.vrrMaxHz {
            out.append(VRRRange(minHz: Double(lo), maxHz: Double(hi), source: .hdmiForum))
        }
        if let a = cta?.amdFreeSync { out.append(VRRRange(minHz: Double(a.minHz), maxHz: Double(a.maxHz), source: .amdFreeSync)) }
        if let d = displayID {
            for a in d.adaptiveSync { out.append(VRRRange(minHz: Double(a.minHz), maxHz: Double(a.maxHz), source: .displayIDAdaptiveSync)) }
            if let r = d.rangeLimits { out.append(VRRRange(minHz: Double(r.minHz), maxHz: Double(r.maxHz), source: .displayIDRangeLimits)) }
        }
        return out
    }

    /// The range a variable-refresh output can use: DisplayID adaptive sync, else HDMI Forum
    /// VRR, else AMD FreeSync, else the EDID range limits when the display is
    /// continuous-frequency (EDID 1.4) and the range spans more than 10 Hz (as amdgpu requires
    /// for DP adaptive sync); nil for a fixed-rate display.
    public var adaptiveSyncRange: VRRRange? {
        let all = vrrRanges
        for s in [VRRRange.Source.displayIDAdaptiveSync, .hdmiForum, .amdFreeSync] {
            if let r = all.first(where: { $0.source == s }) { return r }
        }
        if continuousFrequency, revision >= 4, let r = all.first(where: { $0.source == .rangeLimits }), r.maxHz - r.minHz > 10 {
            return r
        }
        return nil
    }

    /// Diagonal in inches from the base block's size, nil when not given.
    public var diagonalInches: Double? {
        guard let s = sizeCM else { return nil }
        let w = Double(s.width), h = Double(s.height)
        return (w * w + h * h).squareRoot() / 2.54
    }
}

extension EDID {
    /// Bytes from hex text: pairs of hex digits separated by white space, commas or colons,
    /// optionally "0x"-prefixed (edid-decode's hex dump, `xxd -p`, a sysfs dump pasted as text).
    /// Nil when the text has anything else, or an odd number of digits.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var digits: [UInt8] = []
        var prev: UInt8 = 0
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(c - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digits.append(c - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digits.append(c - 55)
            case UInt8(ascii: "x"), UInt8(ascii: "X"):
                // Only as the "0x" prefix.
                guard prev == UInt8(ascii: "0"), digits.last == 0 else { return nil }
                digits.removeLast()
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: ":"):
                break
            default:
                return nil
            }
            prev = c
        }
        guard digits.count % 2 == 0 else { return nil }
        var i = 0
        while i < digits.count {
            out.append(digits[i] << 4 | digits[i + 1])
            i += 2
        }
        return out
    }
}
