import Testing
@testable import Raster
#if canImport(Glibc)
import Glibc
#endif

@Suite struct PNGTests {
    @Test func checksumsMatchKnownValues() {
        // Standard check values for "123456789".
        let digits = Array("123456789".utf8)
        #expect(CRC32.checksum(digits) == 0xCBF4_3926)
        #expect(digits.withUnsafeBytes { Adler32.checksum($0) } == 0x091E_01DE)
    }

    @Test func deflateRoundTripsThroughAnIndependentInflater() throws {
        var input = [UInt8]()
        var s: UInt32 = 99
        for i in 0..<70_000 {
            s ^= s << 13; s ^= s >> 17; s ^= s << 5
            input.append(i % 1000 < 600 ? UInt8(i % 7) : UInt8(truncatingIfNeeded: s))
        }
        let compressed = input.withUnsafeBytes { Deflate.compress($0) }
        #expect(compressed.count < input.count)
        #expect(try inflate(compressed) == input)
        #expect(try inflate([UInt8]().withUnsafeBytes { Deflate.compress($0) }) == [])
    }

    @Test func encodedImageDecodesToTheSamePixels() throws {
        let bmp = Bitmap(width: 67, height: 41)
        drawMixture(bmp.canvas)
        let png = PNGWriter.encode(bmp.canvas)
        let img = try decodePNG(png)
        #expect(img.width == 67 && img.height == 41)
        for y in 0..<41 { for x in 0..<67 { #expect(img.rgb[y * 67 + x] == bmp.canvas.pixel(x: x, y: y)! & 0xFF_FFFF) } }
    }

    @Test func writesAFileAndReportsUnwritablePaths() throws {
        let bmp = Bitmap(width: 4, height: 4)
        bmp.canvas.clear(Color(rgb: 0x336699))
        let path = "/tmp/cadence-raster-test-\(getpid()).png"
        try PNGWriter.write(bmp.canvas, to: path)
        defer { unlink(path) }
        guard let f = fopen(path, "rb") else { Issue.record("file not written"); return }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = fread(&bytes, 1, 4096, f)
        fclose(f)
        let img = try decodePNG(Array(bytes[0..<n]))
        #expect(img.rgb.allSatisfy { $0 == 0x336699 })
        #expect(throws: PNGWriter.WriteError.self) { try PNGWriter.write(bmp.canvas, to: "/nonexistent-dir/x.png") }
    }
}

/// True when `python3` with Pillow is installed (then PNGs are also checked with it).
let pillowAvailable: Bool = {
    #if os(Linux)
    return system("python3 -c 'import PIL' >/dev/null 2>&1") == 0
    #else
    return false
    #endif
}()

@Suite struct PillowTests {
    @Test(.enabled(if: pillowAvailable, "python3 with Pillow is not installed"))
    func pillowReadsTheSameSizeAndPixels() throws {
        #if os(Linux)
        let bmp = Bitmap(width: 33, height: 21)
        drawMixture(bmp.canvas)
        let path = "/tmp/cadence-pillow-\(getpid()).png"
        try PNGWriter.write(bmp.canvas, to: path)
        defer { unlink(path) }
        // Pillow prints every pixel as hex; compare with the canvas.
        let out = "/tmp/cadence-pillow-\(getpid()).txt"
        defer { unlink(out) }
        let script = "from PIL import Image; im = Image.open('\(path)'); im.load(); print(im.size[0], im.size[1], im.mode); d = im.tobytes(); print(' '.join('%02x%02x%02x' % (d[i], d[i + 1], d[i + 2]) for i in range(0, len(d), 3)))"
        #expect(system("python3 -c \"\(script)\" > \(out)") == 0)
        guard let f = fopen(out, "r") else { Issue.record("no output"); return }
        var text = ""
        var buf = [CChar](repeating: 0, count: 65536)
        while fgets(&buf, Int32(buf.count), f) != nil { text += buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        fclose(f)
        let lines = text.split(separator: "\n")
        #expect(lines.first == "33 21 RGB")
        let pixels = lines.count > 1 ? lines[1].split(separator: " ").map { UInt32($0, radix: 16)! } : []
        #expect(pixels.count == 33 * 21)
        for (i, v) in pixels.enumerated() { #expect(v == bmp.canvas.pixel(x: i % 33, y: i / 33)! & 0xFF_FFFF) }
        #endif
    }
}
