/// Builds EDIDs byte by byte for the tests: a base block, CTA-861 and DisplayID extensions,
/// with correct checksums unless told otherwise.
struct EDIDBuilder {
    var manufacturer = "DEL"
    var product = 0x4321
    var serial: UInt32 = 123_456
    var week = 12
    var year = 2021
    var revision = 4
    /// Digital, 10 bits per colour, DisplayPort.
    var input: UInt8 = 0x80 | 0x30 | 0x05
    var sizeCM = (60, 34)
    /// Features byte 0x18: bit 1 preferred/native, bit 0 continuous frequency.
    var features: UInt8 = 0x02
    var established: [UInt8] = [0, 0, 0]
    var standard: [(UInt8, UInt8)] = []
    var descriptors: [[UInt8]] = []
    var extensions: [[UInt8]] = []
    /// Overrides the extension count byte (nil: the number of extensions).
    var announcedExtensions: Int?

    func bytes() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: 128)
        b[0..<8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        let l = Array(manufacturer.utf8).map { Int($0) - 0x40 }
        let id = l[0] << 10 | l[1] << 5 | l[2]
        b[8] = UInt8(id >> 8); b[9] = UInt8(id & 0xFF)
        b[10] = UInt8(product & 0xFF); b[11] = UInt8(product >> 8)
        for i in 0..<4 { b[12 + i] = UInt8((serial >> (8 * UInt32(i))) & 0xFF) }
        b[16] = UInt8(week); b[17] = UInt8(year - 1990)
        b[18] = 1; b[19] = UInt8(revision)
        b[20] = input; b[21] = UInt8(sizeCM.0); b[22] = UInt8(sizeCM.1); b[23] = 120; b[24] = features
        b[35] = established[0]; b[36] = established[1]; b[37] = established[2]
        for i in 0..<8 {
            let s = i < standard.count ? standard[i] : (1, 1)
            b[38 + 2 * i] = s.0; b[39 + 2 * i] = s.1
        }
        for i in 0..<4 {
            let d = i < descriptors.count ? descriptors[i] : Self.dummy()
            b[54 + 18 * i ..< 72 + 18 * i] = d[0..<18]
        }
        b[126] = UInt8(announcedExtensions ?? extensions.count)
        Self.seal(&b)
        return b + extensions.flatMap { $0 }
    }

    /// Sets byte 127 so the block sums to 0 mod 256.
    static func seal(_ b: inout [UInt8], at base: Int = 0) {
        var s = 0
        for i in base..<(base + 127) { s += Int(b[i]) }
        b[base + 127] = UInt8((256 - s % 256) % 256)
    }

    static func dummy() -> [UInt8] { [0, 0, 0, 0x10] + [UInt8](repeating: 0, count: 14) }

    /// An 18-byte detailed timing descriptor.
    static func dtd(clockKHz: Int, h: Int, hblank: Int, hfp: Int, hsync: Int, v: Int, vblank: Int, vfp: Int, vsync: Int,
                    mm: (Int, Int) = (600, 340), flags: UInt8 = 0x1E) -> [UInt8] {
        let c = clockKHz / 10
        return [
            UInt8(c & 0xFF), UInt8(c >> 8), UInt8(h & 0xFF), UInt8(hblank & 0xFF), UInt8((h >> 8) << 4 | hblank >> 8),
            UInt8(v & 0xFF), UInt8(vblank & 0xFF), UInt8((v >> 8) << 4 | vblank >> 8),
            UInt8(hfp & 0xFF), UInt8(hsync & 0xFF), UInt8((vfp & 0xF) << 4 | vsync & 0xF),
            UInt8((hfp >> 8) << 6 | (hsync >> 8) << 4 | (vfp >> 4) << 2 | vsync >> 4),
            UInt8(mm.0 & 0xFF), UInt8(mm.1 & 0xFF), UInt8((mm.0 >> 8) << 4 | mm.1 >> 8), 0, 0, flags,
        ]
    }

    /// A string descriptor (0xFC name, 0xFF serial, 0xFE text): 13 bytes, newline then spaces.
    static func text(_ tag: UInt8, _ s: String) -> [UInt8] {
        var t = Array(s.utf8.prefix(13))
        if t.count < 13 { t.append(0x0A) }
        while t.count < 13 { t.append(0x20) }
        return [0, 0, 0, tag, 0] + t
    }

    static func rangeLimits(vmin: Int, vmax: Int, hmin: Int, hmax: Int, clockMHz: Int, offsets: UInt8 = 0, kind: UInt8 = 0x01) -> [UInt8] {
        [0, 0, 0, 0xFD, offsets, UInt8(vmin), UInt8(vmax), UInt8(hmin), UInt8(hmax), UInt8(clockMHz / 10), kind, 0x0A]
            + [UInt8](repeating: 0x20, count: 6)
    }

    /// A CTA-861 revision 3 block with `blocks` (each a whole data block with its header) and DTDs.
    static func cta(_ blocks: [[UInt8]], dtds: [[UInt8]] = [], nativeDTDs: Int = 1) -> [UInt8] {
        var b: [UInt8] = [0x02, 0x03, 0, UInt8(0xF0 | nativeDTDs)]
        for d in blocks { b += d }
        b[2] = UInt8(b.count)
        for d in dtds { b += d }
        b += [UInt8](repeating: 0, count: 128 - b.count)
        seal(&b)
        return b
    }

    static func dataBlock(_ tag: Int, _ payload: [UInt8]) -> [UInt8] { [UInt8(tag << 5 | payload.count)] + payload }

    /// A DisplayID extension block: one section of `version` with `blocks` (tag, rev, len, payload).
    static func displayID(version: UInt8, productType: UInt8 = 0, _ blocks: [[UInt8]]) -> [UInt8] {
        var sec: [UInt8] = [version, 0, productType, 0]
        for d in blocks { sec += d }
        sec[1] = UInt8(sec.count - 4)
        var s = 0
        for v in sec { s += Int(v) }
        sec.append(UInt8((256 - s % 256) % 256))
        var b: [UInt8] = [0x70] + sec
        b += [UInt8](repeating: 0, count: 128 - b.count)
        seal(&b)
        return b
    }

    /// A realistic 27" 2560x1440 DP monitor: 144 Hz CVT-RB preferred timing, range limits
    /// 48–144 Hz, name and serial string, one CTA block with FreeSync.
    static func monitor() -> EDIDBuilder {
        var e = EDIDBuilder()
        e.features = 0x03
        e.descriptors = [
            dtd(clockKHz: 580_080, h: 2560, hblank: 160, hfp: 48, hsync: 32, v: 1440, vblank: 41, vfp: 3, vsync: 5, mm: (597, 336)),
            rangeLimits(vmin: 48, vmax: 144, hmin: 30, hmax: 230, clockMHz: 600),
            text(0xFC, "DELL S2721DGF"),
            text(0xFF, "7XK2L13"),
        ]
        e.extensions = [cta([dataBlock(2, [16 | 0x80, 4, 31]), dataBlock(3, [0x1A, 0x00, 0x00, 0x01, 0x01, 48, 144, 0x00])])]
        return e
    }
}
