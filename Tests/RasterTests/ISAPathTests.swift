import Testing
@testable import Raster

#if canImport(Glibc)
import Glibc
#endif

/// Every kernel path this CPU can run against the Swift definition of the arithmetic
/// (`Kernels.swift`, itself checked against exact rounding in BlendTests): the same pixels
/// for every length, start alignment, stride and value, and nothing written outside the
/// span. These run on every path in one process; tools/test.sh also runs the whole raster
/// and scene suites once per path through CADENCE_ISA.
@Suite struct ISAPathTests {
    /// A deterministic pixel pattern (xorshift32).
    static func noise(_ p: UnsafeMutablePointer<UInt32>, _ n: Int, seed: UInt32) {
        var s = seed | 1
        for i in 0..<n { s ^= s << 13; s ^= s >> 17; s ^= s << 5; p[i] = s }
    }

    @Test(arguments: RasterISA.available)
    func blendRowsEqualBlendPixelAtEveryLengthAndAlignment(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        let w = 96, h = 4
        let orig = Bitmap(width: w, height: h), dst = Bitmap(width: w, height: h)
        Self.noise(orig.canvas.row(0), w * h, seed: 99)
        for alpha: UInt32 in [0, 1, 77, 128, 200, 254, 255] {
            let src: UInt32 = 0xFF3A_C491
            let k = ConstantBlend(pixel: src, alpha: alpha)
            for start in 0..<9 {
                for n in 0..<80 {
                    memcpy(dst.base, orig.base, w * h * 4)
                    // Rows 1 and 2 from x = start; rows 0 and 3 are guards.
                    path.blendRows(UnsafeMutableRawPointer(dst.canvas.row(1) + start), stride: dst.stride, count: n, rows: 2, k)
                    for y in 0..<h {
                        for x in 0..<w {
                            let o = orig.canvas.row(y)[x]
                            let want = (y == 1 || y == 2) && x >= start && x < start + n ? blendPixel(o, src, alpha) : o
                            if dst.canvas.row(y)[x] != want {
                                Issue.record("\(isa) alpha \(alpha) start \(start) n \(n) at \(x),\(y)")
                                return
                            }
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: RasterISA.available)
    func blendRowsEqualBlendPixelForEveryChannelValueAndAlpha(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        let bmp = Bitmap(width: 259, height: 1)
        let p = bmp.canvas.row(0) + 3  // unaligned start
        for a: UInt32 in 0...255 {
            let src = 0xFF00_0000 | (a ^ 0x5C) << 16 | (255 - a) << 8 | (a &* 7 & 0xFF)
            for d in 0..<UInt32(256) { p[Int(d)] = d << 24 | (255 - d) << 16 | (d ^ 0x33) << 8 | d }
            path.blendRows(UnsafeMutableRawPointer(p), stride: 0, count: 256, rows: 1, ConstantBlend(pixel: src, alpha: a))
            for d in 0..<UInt32(256) {
                let dst = d << 24 | (255 - d) << 16 | (d ^ 0x33) << 8 | d
                if p[Int(d)] != blendPixel(dst, src, a) { Issue.record("\(isa) a=\(a) d=\(d)"); return }
            }
        }
    }

    @Test(arguments: RasterISA.available)
    func fillRowsWriteExactlyTheSpan(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        let w = 150
        let bmp = Bitmap(width: w, height: 4)
        for start in 0..<9 {
            for n in 0..<140 {
                bmp.canvas.clear(Color(rgb: 0x010203))
                path.fillRows(UnsafeMutableRawPointer(bmp.canvas.row(1) + start), stride: bmp.stride, count: n, rows: 2, 0xFFAB_CDEF)
                for y in 0..<4 {
                    for x in 0..<w {
                        let inside = (y == 1 || y == 2) && x >= start && x < start + n
                        if bmp.canvas.row(y)[x] != (inside ? 0xFFAB_CDEF : 0xFF01_0203) {
                            Issue.record("\(isa) start \(start) n \(n) at \(x),\(y)")
                            return
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: RasterISA.available)
    func coverageBlendEqualsBlendPixelPerPixel(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        let n = 300
        let orig = Bitmap(width: n, height: 1), dst = Bitmap(width: n, height: 1)
        Self.noise(orig.canvas.row(0), n, seed: 7)
        var mask = [UInt8](repeating: 0, count: n)
        // Zero runs (skipped vectors), opaque runs, and every alpha value.
        for i in 0..<n { mask[i] = i < 24 ? 0 : i < 40 ? 255 : UInt8(truncatingIfNeeded: i &* 37) }
        for i in 200..<216 { mask[i] = 0 }
        let src: UInt32 = 0xFF80_1FE3
        try mask.withUnsafeBufferPointer { m in
            let mp = try #require(m.baseAddress)
            for start in [0, 1, 3, 7, 8, 13, 21, 33, 64, 199] {
                for count in [0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 40, 65, 100] where start + count <= n {
                    memcpy(dst.base, orig.base, n * 4)
                    path.blendMask(dst.canvas.row(0) + start, mp + start, count, src)
                    for x in 0..<n {
                        let o = orig.canvas.row(0)[x]
                        let want = x >= start && x < start + count ? blendPixel(o, src, UInt32(mask[x])) : o
                        if dst.canvas.row(0)[x] != want { Issue.record("\(isa) start \(start) count \(count) at \(x)"); return }
                    }
                }
            }
        }
    }

    @Test(arguments: RasterISA.available)
    func gradientSpanEqualsTheScalarDefinition(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        var lut = [UInt32](repeating: 0, count: 256)
        for i in 0..<256 { lut[i] = UInt32(i) &* 0x0101_0101 ^ 0x00A0_0005 }
        let cases: [(Int64, Int64)] = [
            (0, 1 << 16), (-5 << 16, 3 << 14), (200 << 16, 1 << 15), (300 << 16, -(7 << 13)),
            (12345, 98765), (-1, 1), (1 << 24, -(1 << 20)), (Int64.max - 40 << 16, 1 << 16),  // wraps
            (Int64.min + 3, -(1 << 18)),
        ]
        var out = [UInt32](repeating: 0, count: 70)
        try lut.withUnsafeBufferPointer { l in
            let lp = try #require(l.baseAddress)
            for (u, step) in cases {
                for count in [0, 1, 7, 8, 9, 16, 23, 64, 69] {
                    for alphaBits: UInt32 in [0, 0xFF00_0000] {
                        for i in 0..<out.count { out[i] = 0xDEAD_BEEF }
                        out.withUnsafeMutableBufferPointer { path.gradientSpan($0.baseAddress!, count, lp, u, step, alphaBits) }
                        var w = u
                        for i in 0..<out.count {
                            let want = i < count ? lut[Int(min(max(w >> 16, 0), 255))] | alphaBits : 0xDEAD_BEEF
                            if out[i] != want { Issue.record("\(isa) u \(u) step \(step) count \(count) at \(i)"); return }
                            w &+= step
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: RasterISA.available)
    func streamingFillAndCopyWriteExactlyTheRows(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        guard let fill = path.streamFillRows, let copy = path.streamCopyRows else {
            // Only aarch64 builds have no streaming stores; there the cached paths run.
            #expect(RasterISA.available == [.baseline])
            return
        }
        let w = 200, h = 5
        let src = Bitmap(width: w, height: h), dst = Bitmap(width: w, height: h), want = Bitmap(width: w, height: h)
        Self.noise(src.canvas.row(0), w * h, seed: 3)
        // Destination starts at every 4-byte offset within 64 bytes, and odd byte counts.
        for start in 0..<17 {
            for n in [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 150] where start + n <= w - 16 {
                memset(dst.base, 0x11, w * h * 4)
                fill(UnsafeMutableRawPointer(dst.canvas.row(1) + start), dst.stride, n, 3, 0xFF12_3456)
                memset(want.base, 0x11, w * h * 4)
                for y in 1...3 { for x in start..<start + n { want.canvas.row(y)[x] = 0xFF12_3456 } }
                if memcmp(dst.base, want.base, w * h * 4) != 0 { Issue.record("\(isa) fill start \(start) n \(n)"); return }

                for bytes in [n * 4, n * 4 + 3] {
                    memset(dst.base, 0x22, w * h * 4)
                    let d = UnsafeMutableRawPointer(dst.canvas.row(1) + start)
                    let s = UnsafeRawPointer(src.canvas.row(0) + 5)  // another alignment
                    copy(d, dst.stride, s, src.stride, bytes, 3)
                    memset(want.base, 0x22, w * h * 4)
                    for r in 0..<3 { memcpy(UnsafeMutableRawPointer(want.canvas.row(1 + r) + start), s + r * src.stride, bytes) }
                    if memcmp(dst.base, want.base, w * h * 4) != 0 { Issue.record("\(isa) copy start \(start) bytes \(bytes)"); return }
                }
            }
        }
    }

    /// The cached row copy (AVX2; the baseline path copies rows with `memcpy`): every byte
    /// count around its 32-byte unaligned head and tail and its 128-byte loop, every
    /// destination alignment within 32 bytes, and nothing written outside the rows.
    @Test(arguments: RasterISA.available)
    func cachedCopyWritesExactlyTheRows(isa: RasterISA) throws {
        let path = try #require(KernelPath(isa))
        guard let copy = path.copyRows else {
            #expect(isa == .baseline)
            return
        }
        let w = 200, h = 5
        let src = Bitmap(width: w, height: h), dst = Bitmap(width: w, height: h), want = Bitmap(width: w, height: h)
        Self.noise(src.canvas.row(0), w * h, seed: 7)
        for offset in 0..<33 {
            for bytes in [0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 127, 128, 129, 160, 161, 255, 256, 257, 600, 603] {
                memset(dst.base, 0x33, w * h * 4)
                let d = UnsafeMutableRawPointer(dst.canvas.row(1)) + offset
                let s = UnsafeRawPointer(src.canvas.row(0)) + 5 + offset % 7  // other alignments
                copy(d, dst.stride, s, src.stride, bytes, 3)
                memset(want.base, 0x33, w * h * 4)
                for r in 0..<3 { memcpy(UnsafeMutableRawPointer(want.canvas.row(1 + r)) + offset, s + r * src.stride, bytes) }
                if memcmp(dst.base, want.base, w * h * 4) != 0 { Issue.record("\(isa) offset \(offset) bytes \(bytes)"); return }
            }
        }
    }
}

@Suite struct ISASelectionTests {
    @Test func activePathIsTheRequestedOrTheBestAvailable() {
        let available = RasterISA.available
        #expect(available.first == .baseline)
        #expect(available.contains(RasterISA.active))
        if let env = getenv("CADENCE_ISA"), env.pointee != 0 {
            // tools/test.sh runs this suite once per path: a fallback must not pass as that path.
            let name = String(cString: env)
            #expect(RasterISA.request == .honoured(RasterISA(name: name) ?? .avx512), "CADENCE_ISA=\(name): \(RasterISA.request)")
            #expect(RasterISA.active.description == name)
        } else {
            #expect(RasterISA.request == .none)
            #expect(RasterISA.active == available.last)
        }
    }

    @Test func availabilityFollowsTheCPU() throws {
        // No AVX-512 kernels are built, so avx512 is never available.
        #expect(!RasterISA.avx512.isAvailable)
        #expect(KernelPath(.avx512) == nil)
        #if arch(x86_64) && os(Linux)
        let cpuinfo = try #require(FILE.read("/proc/cpuinfo"))
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(RasterISA.avx2.isAvailable == flags.contains("avx2"))
        #else
        #expect(!RasterISA.avx2.isAvailable)
        #endif
    }

    @Test func requestsThatCannotBeHonouredExplainThemselves() throws {
        #expect(RasterISA.Request.none.problem == nil)
        #expect(RasterISA.Request.honoured(.baseline).problem == nil)
        let unsupported = try #require(RasterISA.Request.unsupported(.avx512).problem)
        #expect(unsupported.hasPrefix("CADENCE_ISA=avx512: ") && unsupported.contains("available: baseline"))
        let unknown = try #require(RasterISA.Request.unknown("sse9").problem)
        #expect(unknown == "CADENCE_ISA=sse9 is not a kernel path: use baseline, avx2 or avx512")
        #expect(RasterISA(name: "avx2") == .avx2 && RasterISA(name: "AVX2") == nil && RasterISA(name: "") == nil)
        #expect(RasterISA.allCases.map(\.description) == ["baseline", "avx2", "avx512"])
    }
}

/// Reads a small text file whole (for /proc files, whose size stat reports as 0).
enum FILE {
    static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            bytes += buf[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
