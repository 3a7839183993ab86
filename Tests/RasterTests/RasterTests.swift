import Testing
@testable import Raster

#if canImport(Glibc)
import Glibc
#endif

/// Exact rounded source-over for one channel.
func exactBlend(_ d: UInt32, _ s: UInt32, _ a: UInt32) -> UInt32 {
    let num = s * a + d * (255 - a)
    return (num * 2 + 255) / 510  // round half up of num / 255
}

func argbChannels(_ v: UInt32) -> [UInt32] { [v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF] }

@Suite struct BlendTests {
    @Test func blendPixelIsExactlyRounded() {
        var a: UInt32 = 0
        while a <= 255 {
            var s: UInt32 = 0
            while s <= 255 {
                var d: UInt32 = 0
                while d <= 255 {
                    let src = 0xFF00_0000 | s << 16 | (255 - s) << 8 | s
                    let dst = d << 24 | d << 16 | (255 - d) << 8 | (d ^ 0x5A)
                    let out = blendPixel(dst, src, a)
                    let want = zip(argbChannels(dst), argbChannels(src)).map { exactBlend($0, $1, a) }
                    if argbChannels(out) != want {
                        Issue.record("a=\(a) s=\(s) d=\(d): \(argbChannels(out)) != \(want)")
                        return
                    }
                    d += 5
                }
                s += 3
            }
            a += 1
        }
    }

    @Test func vectorSpanMatchesScalarAtEveryLengthAndOffset() {
        let bmp = Bitmap(width: 64, height: 2)
        let p = bmp.canvas.row(0), q = bmp.canvas.row(1)
        for i in 0..<64 { p[i] = UInt32(truncatingIfNeeded: i &* 2_654_435_761) }
        let k = ConstantBlend(pixel: 0xFF12_80EF, alpha: 77)
        for start in 0..<9 {
            for len in 0..<40 {
                for i in 0..<64 { q[i] = p[i] }
                spanBlend(q + start, len, k)
                for i in 0..<64 {
                    let want = (i >= start && i < start + len) ? blendPixel(p[i], 0xFF12_80EF, 77) : p[i]
                    #expect(q[i] == want, "start \(start) len \(len) pixel \(i)")
                }
            }
        }
    }
}

/// The Swift SIMD kernels (`Kernels.swift`) against the scalar reference, over strided rows,
/// every tail length the vector paths distinguish, and every channel value.
@Suite struct KernelTests {
    @Test func blendRowsMatchTheScalarPathExactly() {
        let w = 45, h = 3
        let src = Bitmap(width: w, height: h), dst = Bitmap(width: w, height: h)
        var s: UInt32 = 7
        for y in 0..<h { for x in 0..<w { s ^= s << 13; s ^= s >> 17; s ^= s << 5; src.canvas.row(y)[x] = s } }
        for alpha: UInt32 in [1, 77, 128, 254] {
            for n in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 44] {
                memcpy(dst.base, src.base, w * h * 4)
                let k = ConstantBlend(pixel: 0xFFC0_3A91, alpha: alpha)
                // Rows 0 and 1 from x = 1, row 2 untouched.
                blendRowsKernel(dst.base + 4, stride: dst.stride, count: n, rows: 2, k)
                for y in 0..<h {
                    for x in 0..<w {
                        let orig = src.canvas.row(y)[x]
                        let want = y < 2 && x >= 1 && x < 1 + n ? blendPixel(orig, 0xFFC0_3A91, alpha) : orig
                        if dst.canvas.row(y)[x] != want { Issue.record("alpha \(alpha) n \(n) at \(x),\(y)"); return }
                    }
                }
            }
        }
    }

    @Test func blendKernelMatchesBlendPixelForEveryChannelValueAndAlpha() {
        let bmp = Bitmap(width: 256, height: 1)
        let p = bmp.canvas.row(0)
        var a: UInt32 = 0
        while a <= 255 {
            var s: UInt32 = 0
            while s <= 255 {
                for d in 0..<UInt32(256) { p[Int(d)] = d << 24 | (255 - d) << 16 | d << 8 | (d ^ 0xA5) }
                let src = 0xFF00_0000 | s << 16 | (s ^ 0x3C) << 8 | (255 - s)
                blendKernel(bmp.base, 256, ConstantBlend(pixel: src, alpha: a))
                for d in 0..<UInt32(256) {
                    let dst = d << 24 | (255 - d) << 16 | d << 8 | (d ^ 0xA5)
                    // blendPixel is checked against exact rounding in BlendTests.
                    if p[Int(d)] != blendPixel(dst, src, a) { Issue.record("a=\(a) s=\(s) d=\(d)"); return }
                }
                s += 5
            }
            a += 1
        }
    }

    @Test func fillRowsWriteExactlyTheSpan() {
        for n in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 79, 80, 130] {
            let bmp = Bitmap(width: 140, height: 3)
            bmp.canvas.clear(Color(rgb: 0x010203))
            fillRowsKernel(bmp.base + 4, stride: bmp.stride, count: n, rows: 2, 0xFFAB_CDEF)
            for y in 0..<3 {
                for x in 0..<140 {
                    let inside = y < 2 && x >= 1 && x < 1 + n
                    #expect(bmp.canvas.pixel(x: x, y: y) == (inside ? 0xFFAB_CDEF : 0xFF01_0203), "n \(n) at \(x),\(y)")
                }
            }
        }
    }
}

@Suite struct PrimitiveTests {
    @Test func rectsAreClippedAndBlended() {
        let bmp = Bitmap(width: 20, height: 10)
        let c = bmp.canvas
        c.clear(Color(rgb: 0x000000))
        c.fill(IntRect(x: -5, y: 8, width: 10, height: 10), Color(rgb: 0xFF0000))
        #expect(c.pixel(x: 4, y: 9) == 0xFFFF_0000)
        #expect(c.pixel(x: 5, y: 9) == 0xFF00_0000)
        #expect(c.pixel(x: 4, y: 7) == 0xFF00_0000)
        let clipped = c.clipped(to: IntRect(x: 10, y: 0, width: 5, height: 5))
        clipped.fill(IntRect(x: 0, y: 0, width: 20, height: 10), Color(rgb: 0xFFFFFF).withAlpha(128))
        #expect(c.pixel(x: 10, y: 0) == 0xFF80_8080)
        #expect(c.pixel(x: 14, y: 4) == 0xFF80_8080)
        #expect(c.pixel(x: 9, y: 0) == 0xFF00_0000)
        #expect(c.pixel(x: 15, y: 0) == 0xFF00_0000)
        #expect(c.pixel(x: 10, y: 5) == 0xFF00_0000)
    }

    @Test func circleCoverageMatchesArea() {
        let bmp = Bitmap(width: 100, height: 100)
        let c = bmp.canvas
        c.clear(.black)
        c.fillCircle(center: Point(50.3, 49.6), radius: 30, .white)
        var sum = 0.0
        for y in 0..<100 { for x in 0..<100 { sum += Double(c.pixel(x: x, y: y)! & 0xFF) / 255 } }
        let area = Double.pi * 900
        #expect(abs(sum - area) / area < 0.002, "coverage \(sum) vs area \(area)")
        #expect(c.pixel(x: 50, y: 50) == 0xFFFF_FFFF)
        #expect(c.pixel(x: 50, y: 10) == 0xFF00_0000)
        // Symmetric about the centre when the centre is on a pixel corner.
        c.clear(.black)
        c.fillCircle(center: Point(40, 40), radius: 12.7, .white)
        for y in 0..<40 { for x in 0..<40 { #expect(c.pixel(x: x, y: y) == c.pixel(x: 79 - x, y: 79 - y)) } }
    }

    @Test func polygonCoverageIsExactArea() {
        let bmp = Bitmap(width: 8, height: 4)
        let c = bmp.canvas
        c.clear(.black)
        // x from 1.25 to 3.75, y from 1 to 3: pixel 1 and 3 are 3/4 covered, pixel 2 fully.
        c.fillPolygon([Point(1.25, 1), Point(3.75, 1), Point(3.75, 3), Point(1.25, 3)], .white)
        #expect(c.pixel(x: 0, y: 1) == 0xFF00_0000)
        #expect(c.pixel(x: 1, y: 1) == 0xFFBF_BFBF)  // round(0.75 × 255) = 191
        #expect(c.pixel(x: 2, y: 2) == 0xFFFF_FFFF)
        #expect(c.pixel(x: 3, y: 2) == 0xFFBF_BFBF)
        #expect(c.pixel(x: 4, y: 2) == 0xFF00_0000)
        #expect(c.pixel(x: 2, y: 0) == 0xFF00_0000)
        #expect(c.pixel(x: 2, y: 3) == 0xFF00_0000)
        // A triangle's total coverage equals its area, drawn in either winding.
        for pts in [[Point(0.5, 0.2), Point(7.6, 1.1), Point(2.2, 3.9)], [Point(2.2, 3.9), Point(7.6, 1.1), Point(0.5, 0.2)]] {
            c.clear(.black)
            c.fillPolygon(pts, .white)
            var sum = 0.0
            for y in 0..<4 { for x in 0..<8 { sum += Double(c.pixel(x: x, y: y)! & 0xFF) / 255 } }
            let area = abs((pts[1].x - pts[0].x) * (pts[2].y - pts[0].y) - (pts[2].x - pts[0].x) * (pts[1].y - pts[0].y)) / 2
            #expect(abs(sum - area) < 0.05, "triangle coverage \(sum) vs \(area)")
        }
    }

    @Test func polygonPartlyOutsideTheClipFillsToTheEdge() {
        let bmp = Bitmap(width: 10, height: 10)
        let c = bmp.canvas
        c.clear(.black)
        c.fillPolygon([Point(-20, 2), Point(30, 2), Point(30, 5), Point(-20, 5)], .white)
        for x in 0..<10 { #expect(c.pixel(x: x, y: 3) == 0xFFFF_FFFF); #expect(c.pixel(x: x, y: 6) == 0xFF00_0000) }
        // Drawing through a vertical strip clip gives the same pixels in that strip.
        let ref = Bitmap(width: 10, height: 10)
        ref.canvas.clear(.black)
        ref.canvas.fillPolygon([Point(-3.3, 1.7), Point(12.1, 4.2), Point(6.6, 9.4)], .white)
        c.clear(.black)
        for x0 in stride(from: 0, to: 10, by: 3) {
            c.clipped(to: IntRect(x: x0, y: 0, width: 3, height: 10)).fillPolygon([Point(-3.3, 1.7), Point(12.1, 4.2), Point(6.6, 9.4)], .white)
        }
        for y in 0..<10 { for x in 0..<10 { #expect(abs(Int(c.pixel(x: x, y: y)! & 0xFF) - Int(ref.canvas.pixel(x: x, y: y)! & 0xFF)) <= 1) } }
    }

    @Test func linearGradientMatchesGridSteppingUnderAnyClip() {
        let w = 300, h = 40
        let g = Gradient(.red, .blue)
        let a = Bitmap(width: w, height: h), b = Bitmap(width: w, height: h)
        a.canvas.fillLinearGradient(a.canvas.bounds, from: Point(0, 0), to: Point(Double(w), Double(h)), g)
        // Narrow vertical strips restart every row window at a new x.
        for x0 in stride(from: 0, to: w, by: 7) {
            b.canvas.clipped(to: IntRect(x: x0, y: 0, width: 7, height: h))
                .fillLinearGradient(b.canvas.bounds, from: Point(0, 0), to: Point(Double(w), Double(h)), g)
        }
        #expect(memcmp(a.base, b.base, w * h * 4) == 0)
        // Ends take the stop colours; red falls and blue rises along the diagonal.
        #expect(a.canvas.pixel(x: 0, y: 0) == 0xFFFF_0000)
        // (Row starts snap to whole steps, under a pixel: the far corner is within one entry of blue.)
        let corner = a.canvas.pixel(x: w - 1, y: h - 1)!
        #expect(corner & 0xFF >= 254 && (corner >> 16) & 0xFF <= 1)
        var lastRed = 256
        for x in 0..<w {
            let red = Int((a.canvas.pixel(x: x, y: 20)! >> 16) & 0xFF)
            #expect(red <= lastRed)
            lastRed = red
        }
        // Reversed and steep gradients sit on the grid (k(y) + x) · step, k(y) = start(y) / step.
        for (p0, p1) in [(Point(Double(w), 0), Point(0, 0)), (Point(10, 0), Point(14, 0))] {
            a.canvas.fillLinearGradient(a.canvas.bounds, from: p0, to: p1, g)
            let dx = p1.x - p0.x, dy = p1.y - p0.y
            let scale = 16_777_216.0 / (dx * dx + dy * dy)
            let step = Int64((dx * scale).rounded())
            for y in [0, 17] {
                let base = Int64((((0.5 - p0.x) * dx + (Double(y) + 0.5 - p0.y) * dy) * scale).rounded())
                for x in 0..<w {
                    let idx = Int(min(max(((base / step + Int64(x)) * step) >> 16, 0), 255))
                    #expect(a.canvas.pixel(x: x, y: y) == g.table[idx] | 0xFF00_0000)
                }
            }
        }
    }

    @Test func nearlyVerticalGradientOverTallRectsUsesTheSameGrid() {
        let w = 50, h = 800
        let g = Gradient(.red, .blue)
        let a = Bitmap(width: w, height: h)
        let p0 = Point(0, 0), p1 = Point(10, 1000)
        a.canvas.fillLinearGradient(a.canvas.bounds, from: p0, to: p1, g)
        let dx = p1.x - p0.x, dy = p1.y - p0.y
        let scale = 16_777_216.0 / (dx * dx + dy * dy)
        let step = Int64((dx * scale).rounded())
        for y in [0, 399, 799] {
            let base = Int64((((0.5 - p0.x) * dx + (Double(y) + 0.5 - p0.y) * dy) * scale).rounded())
            for x in 0..<w {
                let idx = Int(min(max(((base / step + Int64(x)) * step) >> 16, 0), 255))
                #expect(a.canvas.pixel(x: x, y: y) == g.table[idx] | 0xFF00_0000)
            }
        }
        let b = Bitmap(width: w, height: h)
        BandedRenderer(threads: 2, bands: 9).render(b.canvas) { $0.fillLinearGradient($0.bounds, from: p0, to: p1, g) }
        #expect(memcmp(a.base, b.base, w * h * 4) == 0)
    }

    @Test func radialGradientCentreAndRim() {
        let bmp = Bitmap(width: 64, height: 64)
        bmp.canvas.fillRadialGradient(bmp.canvas.bounds, center: Point(32, 32), radius: 30, Gradient(.white, .black))
        #expect(bmp.canvas.pixel(x: 32, y: 32)! & 0xFF >= 245)  // centre pixel is 6/256 of the radius out
        #expect(bmp.canvas.pixel(x: 0, y: 0) == 0xFF00_0000)
        #expect(bmp.canvas.pixel(x: 31, y: 32) == bmp.canvas.pixel(x: 32, y: 32))
    }

    @Test func blitWrapsAroundWithScrollOffset() {
        let img = Bitmap(width: 5, height: 3)
        for y in 0..<3 { for x in 0..<5 { img.canvas.row(y)[x] = UInt32(0xFF00_0000 | y << 8 | x) } }
        let bmp = Bitmap(width: 13, height: 7)
        bmp.canvas.blit(img.canvas, x: 7, y: -4, wrap: true)
        for y in 0..<7 {
            for x in 0..<13 {
                let sx = ((x - 7) % 5 + 5) % 5, sy = ((y + 4) % 3 + 3) % 3
                #expect(bmp.canvas.pixel(x: x, y: y) == UInt32(0xFF00_0000 | sy << 8 | sx))
            }
        }
        bmp.canvas.clear(.black)
        bmp.canvas.blit(img.canvas, x: 10, y: 5)
        #expect(bmp.canvas.pixel(x: 10, y: 5) == 0xFF00_0000)
        #expect(bmp.canvas.pixel(x: 12, y: 6) == 0xFF00_0102)
        #expect(bmp.canvas.pixel(x: 9, y: 5) == 0xFF00_0000)
    }

    /// The wrapped blit copies row by row when its copy is cached and tile by tile when it
    /// streams: both orders give every clipped pixel its image pixel and write nothing outside
    /// the clip. The large case is sized from this machine's threshold so that it streams on
    /// any cache size; a clip that starts and ends mid-row and mid-image exercises the pieces.
    @Test(arguments: [false, true])
    func wrappedBlitEqualsItsDefinitionCachedAndStreamed(streamed: Bool) throws {
        let iw = 1000, ih = 37
        let img = Bitmap(width: iw, height: ih)
        var v: UInt32 = 0x9E37_79B9
        for y in 0..<ih { for x in 0..<iw { v ^= v << 13; v ^= v >> 17; v ^= v << 5; img.canvas.row(y)[x] = v | 0xFF00_0000 } }
        let threshold = try #require(KernelPath(RasterISA.active)).streamThreshold
        let w = 2077
        // A CADENCE_STREAM_THRESHOLD beyond 256 MiB (for measuring) leaves no size to stream at.
        if streamed && threshold > 256 << 20 { return }
        // Rows whose clip (w − 12 pixels wide, 10 rows short) moves 2 × its bytes ≥ threshold.
        let h = streamed ? Int(threshold / Int64(8 * (w - 12))) + 12 : 97
        let bmp = Bitmap(width: w, height: h)
        memset(bmp.base, 0x5A, bmp.stride * h)
        let clip = IntRect(minX: 5, minY: 3, maxX: w - 7, maxY: h - 7)
        let ox = -1234, oy = 17
        let canvas = bmp.canvas.clipped(to: clip)
        let copy = RowCopy(bytes: clip.width * 4, rows: clip.height, from: .readOnce)
        if streamed { #expect(copy.stream) } else if threshold > Int64(2 * clip.width * 4 * clip.height) { #expect(!copy.stream) }
        canvas.blit(img.canvas, x: ox, y: oy, wrap: true)
        for y in 0..<h {
            let row = bmp.canvas.row(y)
            let sy = ((y - oy) % ih + ih) % ih
            for x in 0..<w {
                let inside = x >= clip.minX && x < clip.maxX && y >= clip.minY && y < clip.maxY
                let want = inside ? img.canvas.row(sy)[((x - ox) % iw + iw) % iw] : 0x5A5A_5A5A
                if row[x] != want { Issue.record("streamed \(streamed): (\(x), \(y)) is \(row[x]), want \(want)"); return }
            }
        }
    }

    @Test func textDrawsGlyphBits() {
        let bmp = Bitmap(width: 20, height: 10)
        let c = bmp.canvas
        c.clear(.black)
        let end = c.drawText("1A", x: 1, y: 1, .white)
        #expect(end == 13)
        #expect(BitmapFont.width(of: "1A") == 11)
        // "1" row 0 is "..#..", "A" row 3 is "#####".
        #expect(c.pixel(x: 3, y: 1) == 0xFFFF_FFFF)
        #expect(c.pixel(x: 2, y: 1) == 0xFF00_0000)
        for x in 7..<12 { #expect(c.pixel(x: x, y: 4) == 0xFFFF_FFFF) }
        #expect(c.pixel(x: 12, y: 4) == 0xFF00_0000)
        // Lower case draws as upper case, scaled text covers scale² pixels per bit.
        let a = Bitmap(width: 40, height: 20), b = Bitmap(width: 40, height: 20)
        a.canvas.drawText("abc", x: 0, y: 0, scale: 2, .white)
        b.canvas.drawText("ABC", x: 0, y: 0, scale: 2, .white)
        #expect(memcmp(a.base, b.base, 40 * 20 * 4) == 0)
        #expect(a.canvas.pixel(x: 2, y: 0) == 0xFFFF_FFFF && a.canvas.pixel(x: 3, y: 1) == 0xFFFF_FFFF)
    }

    @Test func shadowCopyHonoursDestinationStride() {
        let bmp = Bitmap(width: 3, height: 2)
        for y in 0..<2 { for x in 0..<3 { bmp.canvas.row(y)[x] = UInt32(y * 10 + x) } }
        var dst = [UInt32](repeating: 0xDEAD, count: 5 * 2)
        dst.withUnsafeMutableBytes { bmp.copy(to: $0.baseAddress!, stride: 20) }
        #expect(dst == [0, 1, 2, 0xDEAD, 0xDEAD, 10, 11, 12, 0xDEAD, 0xDEAD])
    }
}

/// Draws a bit of everything (used to compare banded against single-threaded output).
func drawMixture(_ c: Canvas) {
    c.clear(Color(rgb: 0x102030))
    c.fillLinearGradient(IntRect(x: 0, y: 0, width: 200, height: 150), from: Point(10, 5), to: Point(180, 140), Gradient(stops: [.init(0, .red), .init(0.5, Color(rgb: 0x00FF00).withAlpha(90)), .init(1, .blue)]))
    c.fillRadialGradient(IntRect(x: 50, y: 20, width: 100, height: 100), center: Point(100, 70), radius: 45, Gradient(.white, Color(rgb: 0x0000FF).withAlpha(0)))
    var s: UInt32 = 0x1234_5678
    func r() -> UInt32 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s }
    for _ in 0..<40 {
        let col = Color(argb: r())
        c.fillCircle(center: Point(Double(r() % 2400) / 10, Double(r() % 1700) / 10), radius: Double(r() % 400) / 10, col)
        c.fill(IntRect(x: Int(r() % 240) - 20, y: Int(r() % 170) - 20, width: Int(r() % 60), height: Int(r() % 60)), Color(argb: r()))
        c.strokeLine(from: Point(Double(r() % 240), Double(r() % 170)), to: Point(Double(r() % 240), Double(r() % 170)), width: Double(r() % 50) / 10 + 0.5, Color(argb: r()))
    }
    c.fillEllipse(center: Point(120, 80), radiusX: 70, radiusY: 20, Color(rgb: 0xFFAA00).withAlpha(150))
    c.drawText("BANDS 0123 ok", x: 3, y: 140, scale: 2, .white)
}

@Suite struct BandTests {
    @Test(arguments: [(2, 2), (2, 7), (1, 5), (3, 150)])
    func bandedOutputEqualsSingleThread(threads: Int, bands: Int) {
        let w = 240, h = 170
        let one = Bitmap(width: w, height: h), many = Bitmap(width: w, height: h)
        drawMixture(one.canvas)
        BandedRenderer(threads: threads, bands: bands).render(many.canvas) { drawMixture($0) }
        #expect(memcmp(one.base, many.base, w * h * 4) == 0)
    }

    @Test func bandsTileTheClipExactly() {
        let rect = IntRect(x: 3, y: 5, width: 10, height: 17)
        var next = rect.minY
        for i in 0..<4 {
            let b = BandedRenderer.band(i, of: 4, in: rect)
            #expect(b.minY == next && b.minX == 3 && b.maxX == 13)
            next = b.maxY
        }
        #expect(next == rect.maxY)
    }
}
