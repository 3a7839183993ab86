import Testing
@testable import Raster

#if canImport(Glibc)
import Glibc
#endif

@Suite struct PixelMemoryTests {
    #if os(Linux)
    private let isLinux = true
    #else
    private let isLinux = false
    #endif

    /// The process's virtual size in KiB (VmSize in /proc/self/status; 0 where there is none).
    private func virtualKiB() -> Int {
        #if os(Linux)
        guard let f = fopen("/proc/self/status", "r") else { return 0 }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, f) != nil {
            let s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if s.hasPrefix("VmSize:") { return Int(s.dropFirst(7).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0 }
        }
        return 0
        #else
        return 0
        #endif
    }

    @Test func smallBitmapsStayOnTheHeap() {
        // One byte under the threshold: 2 MiB - 4 bytes.
        let b = Bitmap(width: (PixelMemory.hugeThreshold / 4) - 1, height: 1)
        #expect(Int(bitPattern: b.base) % 64 == 0)
        #expect(b.base.load(fromByteOffset: b.stride - 1, as: UInt8.self) == 0)
    }

    @Test func largeBitmapsAreHugePageAlignedZeroedAndWritableToTheEnd() {
        for (w, h) in [(PixelMemory.hugeThreshold / 4, 1), (1920, 1080), (1921, 1081)] {
            let b = Bitmap(width: w, height: h)
            let bytes = b.stride * b.height
            #if os(Linux)
            #expect(Int(bitPattern: b.base) % PixelMemory.hugeThreshold == 0, "\(w)x\(h)")
            #else
            #expect(Int(bitPattern: b.base) % 64 == 0)
            #endif
            #expect(b.base.load(as: UInt8.self) == 0)
            #expect(b.base.load(fromByteOffset: bytes - 1, as: UInt8.self) == 0)
            b.canvas.clear(Color(rgb: 0x123456))
            #expect(b.base.load(fromByteOffset: bytes - 4, as: UInt32.self) == Color(rgb: 0x123456).opaquePixel)
        }
    }

    @Test func mappedBitmapsAreGivenBack() {
        _ = Bitmap(width: 1920, height: 1080)  // warm up any one-time mappings
        let before = virtualKiB()
        #expect(before > 0 || !isLinux)
        for _ in 0..<128 { _ = Bitmap(width: 1920, height: 1080) }
        // 128 leaked mappings of 8 MiB would add at least 1 GiB. The limit leaves room for what
        // tests running at the same time map meanwhile (their threads' stacks, their buffers:
        // 144 MiB was seen once in CI, which failed the old limit of 64 MiB).
        #expect(virtualKiB() - before < 384 * 1024)
    }
}
