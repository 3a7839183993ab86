/// Decoding of DisplayID 1.3 and 2.x sections carried in EDID extension blocks (tag 0x70):
/// timings, product identification, adaptive sync, range limits, tiled topology.

/// What the DisplayID sections declare.
public struct DisplayIDInfo: Sendable, Equatable {
    /// Version byte of the first section (0x12 = 1.2, 0x20 = 2.0).
    public var version = 0
    public var productType = 0
    public var product: DisplayIDProduct?
    /// Native resolution from the display parameters block.
    public var nativeWidth: Int?
    public var nativeHeight: Int?
    /// Image size in mm (display parameters block).
    public var imageSizeMM: (width: Double, height: Double)?
    public var adaptiveSync: [AdaptiveSyncRange] = []
    public var rangeLimits: DisplayIDRangeLimits?
    public var tiles: TiledTopology?

    public var nativeResolution: (width: Int, height: Int)? {
        guard let w = nativeWidth, let h = nativeHeight, w > 0, h > 0 else { return nil }
        return (w, h)
    }

    public static func == (a: DisplayIDInfo, b: DisplayIDInfo) -> Bool {
        a.version == b.version && a.productType == b.productType && a.product == b.product
            && a.nativeWidth == b.nativeWidth && a.nativeHeight == b.nativeHeight
            && a.adaptiveSync == b.adaptiveSync && a.rangeLimits == b.rangeLimits && a.tiles == b.tiles
    }
}

/// DisplayID product identification (tag 0x00 or 0x20).
public struct DisplayIDProduct: Sendable, Equatable {
    /// Three ASCII letters (1.x) or an OUI "XX-XX-XX" (2.x).
    public var vendor: String
    public var productCode: Int
    public var serialNumber: UInt32?
    public var week: Int?
    public var year: Int
    public var isModelYear: Bool
    public var productName: String
}

/// One DisplayID 2.x adaptive-sync descriptor.
public struct AdaptiveSyncRange: Sendable, Equatable {
    public var minHz: Int
    public var maxHz: Int
    /// The range is the panel's native one.
    public var native: Bool
}

/// DisplayID video timing range limits (1.x tag 0x09, 2.x tag 0x25).
public struct DisplayIDRangeLimits: Sendable, Equatable {
    public var minHz: Int
    public var maxHz: Int
    public var minPixelClockKHz: Int
    public var maxPixelClockKHz: Int
}

/// DisplayID tiled display topology (tag 0x12 or 0x28).
public struct TiledTopology: Sendable, Equatable {
    public var horizontalTiles: Int
    public var verticalTiles: Int
    public var column: Int
    public var row: Int
    public var tileWidth: Int
    public var tileHeight: Int
    public var singleEnclosure: Bool
    public var vendor: String
    public var productCode: Int
    public var serialNumber: UInt32
}

extension Decoder {
    mutating func displayIDExtension(_ x: Bytes, block: Int) {
        let version = x[1]
        var length = x[2]
        if edid.displayID == nil {
            var d = DisplayIDInfo()
            d.version = version
            d.productType = x[3]
            edid.displayID = d
        }
        if length > 121 {
            warn("block \(block): DisplayID section length \(length) > 121")
            length = 121
        }
        var sum = 0
        for i in 1..<(min(length + 5, 127) + 1) { sum &+= x[i] }
        if sum & 0xFF != 0 { warn("block \(block): bad DisplayID section checksum") }
        var off = 5
        let end = 5 + length
        while off < end {
            if end - off < 3 { break }
            let tag = x[off], len = x[off + 2]
            if tag == 0 && len == 0 { break }  // filler
            if off + 3 + len > end {
                warn("block \(block): DisplayID data block 0x\(String(tag, radix: 16)) runs past its section")
                break
            }
            displayIDBlock(tag: tag, revision: x[off + 1], x.sub(off + 3, len), block: block)
            off += 3 + len
        }
    }

    mutating func displayIDBlock(tag: Int, revision: Int, _ p: Bytes, block: Int) {
        switch tag {
        case 0x00, 0x20: productID(p, v2: tag == 0x20)
        case 0x01:
            guard p.count >= 12 else { return }
            edid.displayID?.imageSizeMM = (Double(p.le(0, 2)) / 10, Double(p.le(2, 2)) / 10)
            edid.displayID?.nativeWidth = p.le(4, 2)
            edid.displayID?.nativeHeight = p.le(6, 2)
        case 0x21:
            guard p.count >= 12 else { return }
            edid.displayID?.nativeWidth = p.le(4, 2)
            edid.displayID?.nativeHeight = p.le(6, 2)
        case 0x03, 0x22:
            let size = 20
            var i = 0
            while i + size <= p.count {
                displayIDTiming(p.sub(i, size), type7: tag == 0x22, revision: revision, block: block)
                i += size
            }
        case 0x07:  // supported DMT timings bitmap
            for byte in 0..<p.count {
                for bit in 0..<8 where p[byte] & (1 << bit) != 0 {
                    if var t = TimingTables.dmt(id: byte * 8 + bit + 1) {
                        t.source = .dmt(byte * 8 + bit + 1)
                        edid.timings.append(t)
                    }
                }
            }
        case 0x09:
            guard p.count >= 15 else { return }
            edid.displayID?.rangeLimits = DisplayIDRangeLimits(minHz: p[10], maxHz: p[11],
                                                               minPixelClockKHz: (p.le(0, 3) + 1) * 10,
                                                               maxPixelClockKHz: (p.le(3, 3) + 1) * 10)
        case 0x25:
            guard p.count >= 9 else { return }
            let maxHz = revision & 7 != 0 ? p[7] + (p[8] & 3) << 8 : p[7]
            edid.displayID?.rangeLimits = DisplayIDRangeLimits(minHz: p[6], maxHz: maxHz,
                                                               minPixelClockKHz: p.le(0, 3) + 1, maxPixelClockKHz: p.le(3, 3) + 1)
        case 0x12, 0x28:
            guard p.count >= 22 else { return }
            let vendor = tag == 0x28
                ? [p[13], p[14], p[15]].map { hex2($0) }.joined(separator: "-")
                : String(decoding: [p[13], p[14], p[15]].map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
            edid.displayID?.tiles = TiledTopology(
                horizontalTiles: ((p[1] >> 4) | ((p[3] >> 2) & 0x30)) + 1,
                verticalTiles: ((p[1] & 0xF) | (p[3] & 0x30)) + 1,
                column: (p[2] >> 4) | (((p[3] >> 2) & 0x3) << 4),
                row: (p[2] & 0xF) | ((p[3] & 0x3) << 4),
                tileWidth: p.le(4, 2) + 1, tileHeight: p.le(6, 2) + 1,
                singleEnclosure: p[0] & 0x80 != 0, vendor: vendor, productCode: p.le(16, 2),
                serialNumber: UInt32(truncatingIfNeeded: p.le(18, 4)))
        case 0x2B:
            let size = 6 + ((revision >> 4) & 7)
            var i = 0
            while i + size <= p.count {
                edid.displayID?.adaptiveSync.append(AdaptiveSyncRange(minHz: p[i + 2], maxHz: 1 + p[i + 3] + (p[i + 4] & 3) * 256,
                                                                      native: p[i] & 1 != 0))
                i += size
            }
        default: break
        }
    }

    mutating func productID(_ p: Bytes, v2: Bool) {
        guard p.count >= 12 else { return }
        let vendor = v2 ? [p[0], p[1], p[2]].map { hex2($0) }.joined(separator: "-")
                        : String(decoding: [p[0], p[1], p[2]].map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
        let sn = p.le(5, 4)
        let week = p[9]
        let nameLen = p[11]
        edid.displayID?.product = DisplayIDProduct(
            vendor: vendor, productCode: p.le(3, 2), serialNumber: sn == 0 ? nil : UInt32(truncatingIfNeeded: sn),
            week: week != 0 && week <= 0x36 ? week : nil, year: 2000 + p[10], isModelYear: week == 0xFF,
            productName: Self.string(p, 12, min(nameLen, max(0, p.count - 12))))
    }

    mutating func displayIDTiming(_ x: Bytes, type7: Bool, revision: Int, block: Int) {
        let clock = (type7 ? 1000 : 10_000) * (1 + x.le(0, 3))
        let flags = x[3]
        let hact = 1 + x.le(4, 2), hbl = 1 + x.le(6, 2)
        let hfp = 1 + (x[8] | (x[9] & 0x7F) << 8), hsync = 1 + x.le(10, 2)
        let vact = 1 + x.le(12, 2), vbl = 1 + x.le(14, 2)
        var vfp = 1 + (x[16] | (x[17] & 0x7F) << 8), vsync = 1 + x.le(18, 2)
        var vbp = vbl - vfp - vsync
        let interlaced = flags & 0x10 != 0
        if interlaced {
            vfp /= 2; vsync /= 2; vbp /= 2
        }
        let aspects: [(Int, Int)] = [(1, 1), (5, 4), (4, 3), (15, 9), (16, 9), (16, 10), (64, 27), (256, 135)]
        let a = flags & 0xF
        let t = Timing(pixelClockHz: clock, hActive: hact, hFrontPorch: hfp, hSync: hsync, hBackPorch: hbl - hfp - hsync,
                       vActive: vact, vFrontPorch: vfp, vSync: vsync, vBackPorch: vbp, interlaced: interlaced,
                       hSyncPositive: x[9] & 0x80 != 0, vSyncPositive: x[17] & 0x80 != 0,
                       aspect: a < aspects.count ? aspects[a] : (0, 0),
                       source: .displayID(type: type7 ? 7 : 1, block: block),
                       preferred: revision & 7 < 2 && flags & 0x80 != 0)
        edid.timings.append(t)
    }
}

func hex2(_ v: Int) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[(v >> 4) & 0xF], digits[v & 0xF]])
}
