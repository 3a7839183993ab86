// A small PNG reader for tests, written independently of the encoder: chunk CRCs, zlib
// header and Adler-32, an inflater for stored and fixed-Huffman blocks, and all five filters.
@testable import Raster

struct DecodedPNG {
    var width: Int
    var height: Int
    /// 0xRRGGBB per pixel, row-major.
    var rgb: [UInt32]
}

enum PNGDecodeError: Error { case bad(String) }

struct BitReader {
    let data: [UInt8]
    var pos = 0
    var bit = 0
    mutating func bits(_ n: Int) throws -> Int {
        var v = 0
        for i in 0..<n {
            guard pos < data.count else { throw PNGDecodeError.bad("inflate: out of data") }
            v |= Int((data[pos] >> UInt8(bit)) & 1) << i
            bit += 1
            if bit == 8 { bit = 0; pos += 1 }
        }
        return v
    }
    /// Reads a Huffman code MSB-first, one bit at a time.
    mutating func codeBit(_ v: Int) throws -> Int { (v << 1) | (try bits(1)) }
}

func inflate(_ data: [UInt8]) throws -> [UInt8] {
    var r = BitReader(data: data)
    var out = [UInt8]()
    let lBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    let lExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    let dBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    let dExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    var final = 0
    repeat {
        final = try r.bits(1)
        let type = try r.bits(2)
        if type == 0 {
            if r.bit != 0 { r.bit = 0; r.pos += 1 }
            guard r.pos + 4 <= data.count else { throw PNGDecodeError.bad("stored header") }
            let len = Int(data[r.pos]) | Int(data[r.pos + 1]) << 8
            let nlen = Int(data[r.pos + 2]) | Int(data[r.pos + 3]) << 8
            guard len == (~nlen & 0xFFFF) else { throw PNGDecodeError.bad("stored length check") }
            r.pos += 4
            out += data[r.pos..<r.pos + len]
            r.pos += len
        } else if type == 1 {
            while true {
                // Fixed literal/length code: 7, 8 or 9 bits.
                var c = 0
                for _ in 0..<7 { c = try r.codeBit(c) }
                var sym: Int
                if c <= 0x17 {
                    sym = 256 + c
                } else {
                    c = try r.codeBit(c)
                    if c >= 0x30 && c <= 0xBF { sym = c - 0x30 }
                    else if c >= 0xC0 && c <= 0xC7 { sym = 280 + c - 0xC0 }
                    else { c = try r.codeBit(c); sym = 144 + c - 0x190 }
                }
                if sym < 256 { out.append(UInt8(sym)); continue }
                if sym == 256 { break }
                let li = sym - 257
                guard li < 29 else { throw PNGDecodeError.bad("length code") }
                let length = lBase[li] + (try r.bits(lExtra[li]))
                var dc = 0
                for _ in 0..<5 { dc = try r.codeBit(dc) }
                guard dc < 30 else { throw PNGDecodeError.bad("distance code") }
                let dist = dBase[dc] + (try r.bits(dExtra[dc]))
                guard dist <= out.count else { throw PNGDecodeError.bad("distance too far") }
                for _ in 0..<length { out.append(out[out.count - dist]) }
            }
        } else {
            throw PNGDecodeError.bad("block type \(type) not supported by the test inflater")
        }
    } while final == 0
    return out
}

func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

func decodePNG(_ png: [UInt8]) throws -> DecodedPNG {
    guard png.count > 8, Array(png[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { throw PNGDecodeError.bad("signature") }
    var i = 8
    var width = 0, height = 0
    var idat = [UInt8]()
    var sawEnd = false
    while i + 12 <= png.count {
        let len = Int(be32(png, i))
        let type = String(decoding: png[i + 4..<i + 8], as: UTF8.self)
        guard i + 12 + len <= png.count else { throw PNGDecodeError.bad("chunk overruns file") }
        let body = Array(png[i + 4..<i + 8 + len])
        guard CRC32.checksum(body) == be32(png, i + 8 + len) else { throw PNGDecodeError.bad("CRC of \(type)") }
        let data = Array(body[4...])
        switch type {
        case "IHDR":
            width = Int(be32(data, 0)); height = Int(be32(data, 4))
            guard data[8] == 8, data[9] == 2, data[12] == 0 else { throw PNGDecodeError.bad("not 8-bit RGB") }
        case "IDAT": idat += data
        case "IEND": sawEnd = true
        default: break
        }
        i += 12 + len
    }
    guard sawEnd, i == png.count else { throw PNGDecodeError.bad("no IEND at the end") }
    guard idat.count > 6, (Int(idat[0]) << 8 | Int(idat[1])) % 31 == 0, idat[0] & 0x0F == 8 else { throw PNGDecodeError.bad("zlib header") }
    let raw = try inflate(Array(idat[2..<idat.count - 4]))
    let adler = raw.withUnsafeBytes { Adler32.checksum($0) }
    guard adler == be32(idat, idat.count - 4) else { throw PNGDecodeError.bad("Adler-32") }
    let rowBytes = width * 3 + 1
    guard raw.count == rowBytes * height else { throw PNGDecodeError.bad("image data size \(raw.count)") }
    var prev = [Int](repeating: 0, count: width * 3)
    var rgb = [UInt32](repeating: 0, count: width * height)
    for y in 0..<height {
        let f = raw[y * rowBytes]
        var cur = [Int](repeating: 0, count: width * 3)
        for k in 0..<(width * 3) {
            let x = Int(raw[y * rowBytes + 1 + k])
            let a = k >= 3 ? cur[k - 3] : 0, b = prev[k], c = k >= 3 ? prev[k - 3] : 0
            let pred: Int
            switch f {
            case 0: pred = 0
            case 1: pred = a
            case 2: pred = b
            case 3: pred = (a + b) / 2
            case 4:
                let p = a + b - c
                let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                pred = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            default: throw PNGDecodeError.bad("filter \(f)")
            }
            cur[k] = (x + pred) & 0xFF
        }
        for xx in 0..<width {
            rgb[y * width + xx] = UInt32(cur[xx * 3]) << 16 | UInt32(cur[xx * 3 + 1]) << 8 | UInt32(cur[xx * 3 + 2])
        }
        prev = cur
    }
    return DecodedPNG(width: width, height: height, rgb: rgb)
}
