/// Decoding of the 128-byte EDID base block and the dispatch of extension blocks.

/// Bounds-checked byte access: reading past the end gives 0 (the caller checks lengths and
/// reports truncation; nothing here can trap).
struct Bytes {
    let b: [UInt8]
    let start: Int
    let end: Int

    init(_ b: [UInt8], _ start: Int = 0, _ count: Int? = nil) {
        self.b = b
        self.start = max(0, min(start, b.count))
        self.end = max(self.start, min(b.count, self.start + (count ?? b.count)))
    }

    var count: Int { end - start }

    subscript(_ i: Int) -> Int {
        let j = start + i
        return (i >= 0 && j < end) ? Int(b[j]) : 0
    }

    func sub(_ offset: Int, _ count: Int) -> Bytes { Bytes(b, start + max(0, offset), max(0, min(count, self.count - offset))) }

    /// Little-endian unsigned integer of `n` bytes at `i`.
    func le(_ i: Int, _ n: Int) -> Int {
        var v = 0
        for k in stride(from: n - 1, through: 0, by: -1) { v = v << 8 | self[i + k] }
        return v
    }
}

/// The decoding pass: fills an ``EDID`` block by block.
struct Decoder {
    var edid: EDID
    var dtdCount = 0

    mutating func warn(_ s: String) { edid.warnings.append(s) }

    mutating func run() {
        let all = edid.bytes
        let blocks = all.count / 128
        if checksum(Bytes(all, 0, 128)) != 0 { warn("block 0: bad checksum") }
        base(Bytes(all, 0, 128))
        if edid.extensionCount + 1 < blocks {
            warn("\(blocks - 1) extension blocks present, the base block announces \(edid.extensionCount)")
        } else if edid.extensionCount + 1 > blocks {
            warn("the base block announces \(edid.extensionCount) extension blocks, \(blocks - 1) present (truncated)")
        }
        for n in stride(from: 1, to: blocks, by: 1) {
            let blk = Bytes(all, n * 128, 128)
            if checksum(blk) != 0 { warn("block \(n): bad checksum") }
            switch blk[0] {
            case 0x02: cta(blk, block: n)
            case 0x70: displayIDExtension(blk, block: n)
            case 0xF0: break  // block map
            default: warn("block \(n): extension tag 0x\(String(blk[0], radix: 16)) not decoded")
            }
        }
        markNative()
    }

    func checksum(_ b: Bytes) -> Int {
        var s = 0
        for i in 0..<b.count { s &+= b[i] }
        return s & 0xFF
    }

    /// Extracts a descriptor string the way edid-decode does: printable characters up to a
    /// newline; trailing spaces are dropped.
    static func string(_ b: Bytes, _ at: Int, _ len: Int) -> String {
        var scalars: [UInt8] = []
        for i in 0..<len {
            let c = b[at + i]
            if c == 0x0A { break }
            if c >= 0x20 && c < 0x7F { scalars.append(UInt8(c)) } else { break }
        }
        while scalars.last == 0x20 { scalars.removeLast() }
        return String(decoding: scalars, as: UTF8.self)
    }

    static func pnp(_ hi: Int, _ lo: Int) -> String {
        let v = hi << 8 | lo
        let letters = [(v >> 10) & 0x1F, (v >> 5) & 0x1F, v & 0x1F].map { UInt8(0x40 + $0) }
        return String(decoding: letters, as: UTF8.self)
    }

    mutating func base(_ x: Bytes) {
        edid.version = x[0x12]
        edid.revision = x[0x13]
        edid.manufacturer = Self.pnp(x[0x08], x[0x09])
        edid.productCode = x.le(0x0A, 2)
        let sn = x.le(0x0C, 4)
        edid.serialNumber = sn == 0 ? nil : UInt32(truncatingIfNeeded: sn)
        let week = x[0x10], year = 1990 + x[0x11]
        if week == 0xFF {
            edid.modelYear = year
        } else {
            edid.year = year
            if week != 0 { edid.week = week }
        }
        let input = x[0x14]
        edid.isDigital = input & 0x80 != 0
        if edid.isDigital && edid.version == 1 && edid.revision >= 4 {
            let depth = (input & 0x70) >> 4
            if depth != 0 && depth != 7 { edid.bitsPerColor = depth * 2 + 4 }
            edid.digitalInterface = DigitalInterface(input & 0x0F)
        }
        if x[0x15] != 0 && x[0x16] != 0 {
            edid.sizeCM = (x[0x15], x[0x16])
        } else if edid.revision >= 4 && (x[0x15] != 0 || x[0x16] != 0) {
            edid.aspectRatio = x[0x15] != 0 ? Double(x[0x15] + 99) / 100 : 100 / Double(x[0x16] + 99)
        }
        edid.extensionCount = x[0x7E]
        edid.firstDTDIsNative = x[0x18] & 0x02 != 0
        edid.continuousFrequency = x[0x18] & 0x01 != 0
        // Established timings: 17 bits of bytes 0x23–0x25 (byte 0x25 bit 7 = 1152x870).
        let bits = x[0x23] << 16 | x[0x24] << 8 | x[0x25]
        for (i, t) in TimingTables.established.enumerated() where bits & (1 << (23 - i)) != 0 {
            edid.timings.append(t)
        }
        for i in 0..<8 { standardTiming(x[0x26 + 2 * i], x[0x27 + 2 * i]) }
        for i in 0..<4 { descriptor(x.sub(0x36 + 18 * i, 18), block: 0) }
    }

    /// A standard timing that names a DMT timing is decoded exactly; one computed with GTF/CVT
    /// formulas is not listed (its refresh would not be exact).
    mutating func standardTiming(_ b1: Int, _ b2: Int) {
        if (b1 == 0x01 && b2 == 0x01) || (b1 == 0 && b2 == 0) || (b1 == 0x20 && b2 == 0x20) { return }
        if var e = TimingTables.dmt(std: b1 << 8 | b2)?.timing {
            e.source = .standard
            edid.timings.append(e)
        }
    }

    /// An 18-byte descriptor: a detailed timing or a display descriptor.
    mutating func descriptor(_ x: Bytes, block: Int) {
        if x[0] != 0 || x[1] != 0 {
            detailedTiming(x, block: block)
            return
        }
        switch x[3] {
        case 0xFC: edid.name = (edid.name ?? "") + Self.string(x, 5, 13)  // a long name spans several
        case 0xFF: edid.serialString = Self.string(x, 5, 13)
        case 0xFE: edid.strings.append(Self.string(x, 5, 13))
        case 0xFD: rangeLimits(x)
        case 0xFA:
            for i in 0..<6 { standardTiming(x[5 + 2 * i], x[6 + 2 * i]) }
        default: break
        }
    }

    mutating func detailedTiming(_ x: Bytes, block: Int) {
        dtdCount += 1
        let clock = x.le(0, 2) * 10_000
        guard clock >= 10_000_000 else {
            warn("block \(block): DTD \(dtdCount) has a pixel clock below 10 MHz (invalid)")
            return
        }
        let hact = x[2] | (x[4] & 0xF0) << 4
        let hbl = x[3] | (x[4] & 0x0F) << 8
        let vact = x[5] | (x[7] & 0xF0) << 4
        let vbl = x[6] | (x[7] & 0x0F) << 8
        let hfp = x[8] | (x[11] & 0xC0) << 2
        let hsync = x[9] | (x[11] & 0x30) << 4
        let vfp = x[10] >> 4 | (x[11] & 0x0C) << 2
        let vsync = x[10] & 0x0F | (x[11] & 0x03) << 4
        let hborder = x[15], vborder = x[16]
        let flags = x[17]
        let interlaced = flags & 0x80 != 0
        // Blanking includes the borders (EDID 1.3 reading, what real EDIDs do); porches do not.
        var t = Timing(pixelClockHz: clock, hActive: hact, hFrontPorch: hfp, hSync: hsync,
                       hBackPorch: hbl - 2 * hborder - hsync - hfp, hBorder: hborder,
                       vActive: interlaced ? vact * 2 : vact, vFrontPorch: vfp, vSync: vsync,
                       vBackPorch: vbl - 2 * vborder - vsync - vfp, vBorder: vborder,
                       interlaced: interlaced,
                       hSyncPositive: flags & 0x18 >= 0x10 && flags & 0x02 != 0,
                       vSyncPositive: flags & 0x18 == 0x18 && flags & 0x04 != 0,
                       imageSizeMM: (x[12] | (x[14] & 0xF0) << 4, x[13] | (x[14] & 0x0F) << 8),
                       source: .detailed(block: block, number: dtdCount))
        t.aspect = Self.ratio(t.hActive, t.vActive)
        if interlaced, t.hActive == 1920, t.vActive == 1080, clock == 72_000_000, hfp == 32, hsync == 168,
           t.hBackPorch == 184, vfp == 23, vsync == 5, t.vBackPorch == 57, hborder == 0, vborder == 0 {
            t.evenVTotal = true  // CTA VIC 39's timing
        }
        // EDID 1.4: the first DTD is always the preferred timing; before, only with byte 0x18 bit 1.
        if block == 0 && dtdCount == 1 && (edid.revision >= 4 || edid.firstDTDIsNative) { t.preferred = true }
        edid.timings.append(t)
    }

    /// The picture aspect ratio of w×h reduced to the usual names (16:9, 4:3 …).
    static func ratio(_ w: Int, _ h: Int) -> (h: Int, v: Int) {
        guard w > 0, h > 0 else { return (0, 0) }
        var a = w, b = h
        while b != 0 { (a, b) = (b, a % b) }
        return (w / a, h / a)
    }

    mutating func rangeLimits(_ x: Bytes) {
        var vmin = x[5], vmax = x[6], hmin = x[7], hmax = x[8]
        if edid.revision >= 4 {
            if x[4] & 0x02 != 0 {
                vmax += 255
                if x[4] & 0x01 != 0 { vmin += 255 }
            }
            if x[4] & 0x08 != 0 {
                hmax += 255
                if x[4] & 0x04 != 0 { hmin += 255 }
            }
        }
        let kind: String
        switch x[10] {
        case 0x00: kind = "GTF"
        case 0x01: kind = "Bare Limits"
        case 0x02: kind = "Secondary GTF"
        case 0x04: kind = "CVT"
        default: kind = "Unknown"
        }
        if vmin > vmax { warn("range limits: minimum vertical rate \(vmin) Hz > maximum \(vmax) Hz") }
        edid.rangeLimits = RangeLimits(minVerticalHz: vmin, maxVerticalHz: vmax, minHorizontalKHz: hmin,
                                       maxHorizontalKHz: hmax, maxPixelClockMHz: x[9] == 0 ? nil : x[9] * 10, kind: kind)
    }

    /// CTA "native detailed modes": the first N DTDs of the base block and CTA blocks.
    mutating func markNative() {
        guard let n = edid.cta?.nativeDTDs, n > 0 else { return }
        var seen = 0
        for i in edid.timings.indices {
            guard case .detailed(let b, _) = edid.timings[i].source else { continue }
            if b == 0 || edid.cta?.blocks.contains(b) == true {
                if seen < n { edid.timings[i].native = true }
                seen += 1
            }
        }
    }
}
