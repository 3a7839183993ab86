/// Decoding of CTA-861 extension blocks (tag 0x02): VICs, HDMI and HDMI Forum VSDBs,
/// AMD FreeSync, HDR static metadata, native and preferred timings.

/// What the CTA-861 extension blocks declare.
public struct CTAInfo: Sendable, Equatable {
    /// Block numbers of the CTA extensions.
    public var blocks: [Int] = []
    public var revision = 0
    /// Number of native DTDs (byte 3 bits 3–0 of the first CTA block).
    public var nativeDTDs = 0
    /// VICs in the order of the video data blocks (the timing list holds their timings).
    public var vics: [Int] = []
    /// VICs with the SVD native bit.
    public var nativeVICs: [Int] = []
    public var hdmi: HDMIVSDB?
    public var hdmiForum: HDMIForumVSDB?
    public var amdFreeSync: AMDFreeSync?
    public var hdr: HDRStaticMetadata?
    /// Video format preference data block entries: VICs (or DTD numbers as negative values).
    public var preferredVICs: [Int] = []
}

/// HDMI 1.x VSDB (OUI 00-0C-03).
public struct HDMIVSDB: Sendable, Equatable {
    /// CEC physical address "a.b.c.d".
    public var physicalAddress: String
    /// Maximum TMDS clock in MHz, nil when not given.
    public var maxTMDSClockMHz: Int?
}

/// HDMI Forum VSDB (OUI C4-5D-D8) or HDMI Forum SCDB (extended tag 0x79).
public struct HDMIForumVSDB: Sendable, Equatable {
    public var version: Int
    /// Maximum TMDS character rate in MHz (0 = not given).
    public var maxTMDSRateMHz: Int
    public var allm: Bool
    /// VRRmin/VRRmax in Hz, nil when 0 (VRR not supported).
    public var vrrMinHz: Int?
    public var vrrMaxHz: Int?
}

/// AMD vendor-specific data block (OUI 00-00-1A): the FreeSync range.
public struct AMDFreeSync: Sendable, Equatable {
    public var version: String
    public var minHz: Int
    public var maxHz: Int
}

/// HDR static metadata data block (extended tag 0x06).
public struct HDRStaticMetadata: Sendable, Equatable {
    /// "SDR", "HDR-gamma", "PQ" (SMPTE ST 2084), "HLG".
    public var eotfs: [String]
    /// Desired content max luminance, max frame-average luminance, min luminance (cd/m²).
    public var maxLuminance: Double?
    public var maxFrameAverageLuminance: Double?
    public var minLuminance: Double?
}

extension Decoder {
    mutating func cta(_ x: Bytes, block: Int) {
        if edid.cta == nil {
            var c = CTAInfo()
            c.revision = x[1]
            c.nativeDTDs = x[1] >= 2 ? x[3] & 0x0F : 0
            edid.cta = c
        }
        edid.cta?.blocks.append(block)
        var dtdStart = x[2]
        if dtdStart == 0 { return }  // no data blocks, no DTDs
        if dtdStart < 4 || dtdStart > 127 {
            warn("block \(block): CTA DTD offset \(dtdStart) is invalid")
            dtdStart = min(max(dtdStart, 4), 127)
        }
        var i = 4
        if x[1] >= 3 {
            while i < dtdStart {
                let tag = x[i] >> 5, len = x[i] & 0x1F
                if i + 1 + len > dtdStart {
                    warn("block \(block): CTA data block at offset \(i) runs past the DTDs (length \(len))")
                    break
                }
                dataBlock(tag: tag, x.sub(i + 1, len), block: block)
                i += 1 + len
            }
        }
        var off = dtdStart
        while off + 18 <= 127 {
            if x[off] == 0 && x[off + 1] == 0 { break }
            detailedTiming(x.sub(off, 18), block: block)
            off += 18
        }
    }

    mutating func dataBlock(tag: Int, _ p: Bytes, block: Int) {
        switch tag {
        case 2:  // video data block
            for i in 0..<p.count {
                let svd = p[i]
                guard svd != 0 && svd != 128 && svd != 254 && svd != 255 else { continue }
                let native = svd >= 129 && svd <= 192
                let vic = native ? svd & 0x7F : svd
                edid.cta?.vics.append(vic)
                if native { edid.cta?.nativeVICs.append(vic) }
                if var t = TimingTables.vic(vic) {
                    t.native = native
                    edid.timings.append(t)
                } else {
                    warn("block \(block): unknown VIC \(vic)")
                }
            }
        case 3: vendorBlock(p, block: block)
        case 7 where p.count >= 1: extendedBlock(p[0], p.sub(1, p.count - 1), block: block)
        default: break
        }
    }

    mutating func vendorBlock(_ p: Bytes, block: Int) {
        guard p.count >= 3 else {
            warn("block \(block): vendor-specific data block shorter than its OUI")
            return
        }
        let oui = p[2] << 16 | p[1] << 8 | p[0]
        let x = p.sub(3, p.count - 3)
        switch oui {
        case 0x000C03: hdmiVSDB(x, block: block)
        case 0xC45DD8:
            let hf = hdmiForum(x)
            edid.cta?.hdmiForum = hf
        case 0x00001A:
            guard x.count >= 4 else {
                warn("block \(block): AMD vendor-specific data block too short")
                return
            }
            edid.cta?.amdFreeSync = AMDFreeSync(version: "\(x[0]).\(x[1])", minHz: x[2], maxHz: x[3])
        default: break
        }
    }

    /// HDMI 1.x VSDB payload after the OUI.
    mutating func hdmiVSDB(_ x: Bytes, block: Int) {
        guard x.count >= 2 else {
            warn("block \(block): HDMI VSDB too short")
            return
        }
        let pa = "\(x[0] >> 4).\(x[0] & 15).\(x[1] >> 4).\(x[1] & 15)"
        edid.cta?.hdmi = HDMIVSDB(physicalAddress: pa, maxTMDSClockMHz: x.count > 3 && x[3] != 0 ? x[3] * 5 : nil)
        // HDMI VICs: byte 5 (after the OUI: index 4) flags, then latencies, then the video block.
        guard x.count > 5, x[4] & 0x20 != 0 else { return }
        var i = 5
        if x[4] & 0x80 != 0 { i += 2 }
        if x[4] & 0x40 != 0 { i += 2 }
        guard i + 1 < x.count else { return }
        let vicLen = x[i + 1] >> 5
        i += 2
        for k in 0..<vicLen where i + k < x.count {
            if let t = TimingTables.hdmiVIC(x[i + k]) { edid.timings.append(t) }
        }
    }

    /// HDMI Forum VSDB/SCDB payload from its version byte.
    func hdmiForum(_ x: Bytes) -> HDMIForumVSDB {
        let vmin = x.count > 5 ? x[5] & 0x3F : 0
        let vmax = x.count > 6 ? (x[5] & 0xC0) << 2 | x[6] : 0
        return HDMIForumVSDB(version: x[0], maxTMDSRateMHz: x[1] * 5, allm: x.count > 4 && x[4] & 0x02 != 0,
                             vrrMinHz: vmin == 0 ? nil : vmin, vrrMaxHz: vmax == 0 ? nil : vmax)
    }

    mutating func extendedBlock(_ ext: Int, _ x: Bytes, block: Int) {
        switch ext {
        case 0x06:  // HDR static metadata
            guard x.count >= 2 else {
                warn("block \(block): HDR static metadata block too short")
                return
            }
            let names = ["SDR", "HDR-gamma", "PQ", "HLG"]
            let eotfs = (0..<4).filter { x[0] & (1 << $0) != 0 }.map { names[$0] }
            func lum(_ v: Int) -> Double { 50 * pow2(Double(v) / 32) }
            var h = HDRStaticMetadata(eotfs: eotfs)
            if x.count > 2 { h.maxLuminance = lum(x[2]) }
            if x.count > 3 { h.maxFrameAverageLuminance = lum(x[3]) }
            if x.count > 4, let mx = h.maxLuminance {
                let r = Double(x[4]) / 255
                h.minLuminance = mx * r * r / 100
            }
            edid.cta?.hdr = h
        case 0x0D:  // video format preference
            for i in 0..<x.count {
                let s = x[i]
                if s >= 129 && s <= 144 { edid.cta?.preferredVICs.append(-(s - 128)) } else if s != 0 { edid.cta?.preferredVICs.append(s) }
            }
        case 0x79:  // HDMI Forum sink capability data block: two bytes, then the HF-VSDB layout
            guard x.count >= 3 else { return }
            let hf = hdmiForum(x.sub(2, x.count - 2))
            edid.cta?.hdmiForum = hf
        default: break
        }
    }
}

/// 2^x for the luminance formulas (no Foundation): exp2 by squaring of the integer part and a
/// series for the fraction.
func pow2(_ x: Double) -> Double {
    guard x.isFinite, x < 1024, x > -1024 else { return x > 0 ? .infinity : 0 }
    let n = x.rounded(.down)
    var r = 1.0
    var k = Int(abs(n))
    var b = n >= 0 ? 2.0 : 0.5
    while k > 0 {
        if k & 1 == 1 { r *= b }
        b *= b
        k >>= 1
    }
    // 2^f = e^(f ln2), series.
    let y = (x - n) * 0.693_147_180_559_945_3
    var term = 1.0, sum = 1.0
    for i in 1..<30 {
        term *= y / Double(i)
        sum += term
    }
    return r * sum
}
