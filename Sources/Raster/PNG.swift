#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CRC-32 (ISO-HDLC, the one PNG and zlib use).
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// Continues a CRC over `bytes` (start with 0).
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return ~c
    }

    /// The CRC of `bytes`.
    public static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        Array(bytes).withUnsafeBytes { update(0, $0) }
    }
}

/// Adler-32 (the zlib stream checksum).
public enum Adler32 {
    /// The Adler-32 of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var i = 0
        let n = bytes.count
        while i < n {
            // 5552 bytes is the most that cannot overflow 32 bits before the reduction.
            let end = min(n, i + 5552)
            while i < end {
                a &+= UInt32(bytes[i])
                b &+= a
                i += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }
}

/// A DEFLATE compressor (RFC 1951): greedy LZ77 matching with a hash of 3-byte prefixes over
/// a 32 KiB window, coded as one block with the fixed Huffman codes.
public enum Deflate {
    static let lengthBase: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distBase: [Int] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    static let distExtra: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// LSB-first bit writer.
    struct BitWriter {
        var out: [UInt8] = []
        var acc: UInt64 = 0
        var n = 0
        mutating func write(_ bits: UInt32, _ count: Int) {
            acc |= UInt64(bits) << UInt64(n)
            n += count
            while n >= 8 {
                out.append(UInt8(truncatingIfNeeded: acc))
                acc >>= 8
                n -= 8
            }
        }
        /// Writes a Huffman code (defined MSB-first) of `count` bits.
        mutating func writeCode(_ code: UInt32, _ count: Int) {
            var r: UInt32 = 0
            for i in 0..<count { r |= ((code >> UInt32(i)) & 1) << UInt32(count - 1 - i) }
            write(r, count)
        }
        mutating func flush() {
            if n > 0 { out.append(UInt8(truncatingIfNeeded: acc)) }
            acc = 0
            n = 0
        }
    }

    static func writeLiteral(_ w: inout BitWriter, _ v: Int) {
        switch v {
        case 0...143: w.writeCode(UInt32(0x30 + v), 8)
        case 144...255: w.writeCode(UInt32(0x190 + v - 144), 9)
        case 256...279: w.writeCode(UInt32(v - 256), 7)
        default: w.writeCode(UInt32(0xC0 + v - 280), 8)
        }
    }

    static func writeMatch(_ w: inout BitWriter, length: Int, distance: Int) {
        var li = lengthBase.count - 1
        while lengthBase[li] > length { li -= 1 }
        writeLiteral(&w, 257 + li)
        if lengthExtra[li] > 0 { w.write(UInt32(length - lengthBase[li]), lengthExtra[li]) }
        var di = distBase.count - 1
        while distBase[di] > distance { di -= 1 }
        w.writeCode(UInt32(di), 5)
        if distExtra[di] > 0 { w.write(UInt32(distance - distBase[di]), distExtra[di]) }
    }

    /// Compresses `input` into a raw DEFLATE stream.
    public static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var w = BitWriter()
        w.out.reserveCapacity(input.count / 4 + 64)
        w.write(1, 1)  // BFINAL
        w.write(1, 2)  // BTYPE = 01, fixed Huffman
        let n = input.count
        let hashBits = 15
        var head = [Int32](repeating: -1, count: 1 << hashBits)
        var i = 0
        head.withUnsafeMutableBufferPointer { head in
            @inline(__always) func hash(_ p: Int) -> Int {
                let v = UInt32(input[p]) | UInt32(input[p + 1]) << 8 | UInt32(input[p + 2]) << 16
                return Int((v &* 2_654_435_761) >> UInt32(32 - hashBits))
            }
            while i < n {
                var bestLen = 0, bestDist = 0
                if i + 3 <= n {
                    let h = hash(i)
                    let cand = Int(head[h])
                    head[h] = Int32(i)
                    if cand >= 0 && i - cand <= 32768 {
                        let maxLen = min(258, n - i)
                        var l = 0
                        while l < maxLen && input[cand + l] == input[i + l] { l += 1 }
                        if l >= 3 { bestLen = l; bestDist = i - cand }
                    }
                }
                if bestLen >= 3 {
                    writeMatch(&w, length: bestLen, distance: bestDist)
                    // Index the positions inside the match too (cheaply: every one).
                    var j = i + 1
                    let end = min(i + bestLen, n - 2)
                    while j < end {
                        head[hash(j)] = Int32(j)
                        j += 1
                    }
                    i += bestLen
                } else {
                    writeLiteral(&w, Int(input[i]))
                    i += 1
                }
            }
        }
        writeLiteral(&w, 256)
        w.flush()
        return w.out
    }

    /// Wraps `input` in a zlib stream (header, DEFLATE data, Adler-32).
    public static func zlib(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        out += compress(input)
        let a = Adler32.checksum(input)
        out += [UInt8(a >> 24), UInt8((a >> 16) & 0xFF), UInt8((a >> 8) & 0xFF), UInt8(a & 0xFF)]
        return out
    }
}

/// Writes 8-bit RGB PNG files (colour type 2) from a canvas; alpha is dropped, as scanout
/// ignores it. Each row uses the filter (None, Sub, Up, Average or Paeth) with the smallest
/// sum of absolute differences, then one zlib stream.
public enum PNGWriter {
    /// Errors writing a file.
    public enum WriteError: Error, CustomStringConvertible {
        case cannotOpen(path: String, reason: String)
        case writeFailed(path: String, reason: String)
        public var description: String {
            switch self {
            case .cannotOpen(let path, let reason): return "cannot open \(path) for writing: \(reason)"
            case .writeFailed(let path, let reason): return "cannot write \(path): \(reason)"
            }
        }
    }

    /// The PNG encoding of `canvas`'s full bounds.
    public static func encode(_ canvas: Canvas) -> [UInt8] {
        let w = canvas.width, h = canvas.height
        let rowBytes = w * 3 + 1
        var raw = [UInt8](repeating: 0, count: rowBytes * h)
        var prev = [UInt8](repeating: 0, count: w * 3)
        var cur = [UInt8](repeating: 0, count: w * 3)
        var cand = [UInt8](repeating: 0, count: w * 3)
        var best = [UInt8](repeating: 0, count: w * 3)
        for y in 0..<h {
            let p = canvas.row(y)
            for x in 0..<w {
                let v = p[x]
                cur[x * 3] = UInt8((v >> 16) & 0xFF)
                cur[x * 3 + 1] = UInt8((v >> 8) & 0xFF)
                cur[x * 3 + 2] = UInt8(v & 0xFF)
            }
            var bestType: UInt8 = 0
            var bestCost = Int.max
            for type: UInt8 in 0...4 {
                var cost = 0
                for i in 0..<(w * 3) {
                    let a = i >= 3 ? Int(cur[i - 3]) : 0
                    let b = Int(prev[i])
                    let c = i >= 3 ? Int(prev[i - 3]) : 0
                    let pred: Int
                    switch type {
                    case 0: pred = 0
                    case 1: pred = a
                    case 2: pred = b
                    case 3: pred = (a + b) >> 1
                    default:
                        let pp = a + b - c
                        let pa = abs(pp - a), pb = abs(pp - b), pc = abs(pp - c)
                        pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c)
                    }
                    let f = UInt8(truncatingIfNeeded: Int(cur[i]) - pred)
                    cand[i] = f
                    cost += f < 128 ? Int(f) : 256 - Int(f)
                }
                if cost < bestCost {
                    bestCost = cost
                    bestType = type
                    swap(&cand, &best)
                }
            }
            raw[y * rowBytes] = bestType
            for i in 0..<(w * 3) { raw[y * rowBytes + 1 + i] = best[i] }
            swap(&prev, &cur)
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr = [UInt8]()
        ihdr += bigEndian(UInt32(w))
        ihdr += bigEndian(UInt32(h))
        ihdr += [8, 2, 0, 0, 0]  // depth 8, RGB, deflate, adaptive filtering, no interlace
        appendChunk(&png, "IHDR", ihdr)
        appendChunk(&png, "IDAT", raw.withUnsafeBytes { Deflate.zlib($0) })
        appendChunk(&png, "IEND", [])
        return png
    }

    /// Encodes `canvas` and writes it to `path`.
    public static func write(_ canvas: Canvas, to path: String) throws {
        let bytes = encode(canvas)
        guard let f = fopen(path, "wb") else {
            throw WriteError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        let closed = fclose(f)
        if written != bytes.count || closed != 0 {
            throw WriteError.writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    static func appendChunk(_ png: inout [UInt8], _ type: String, _ data: [UInt8]) {
        png += bigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        png += typed
        png += bigEndian(CRC32.checksum(typed))
    }
}
