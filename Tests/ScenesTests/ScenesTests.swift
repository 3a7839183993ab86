import Testing
import Raster
@testable import Scenes
#if canImport(Glibc)
import Glibc
#endif

/// FNV-1a 64 over the pixel bytes of a packed bitmap.
func checksum(_ bmp: Bitmap) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    let bytes = UnsafeRawBufferPointer(start: bmp.base, count: bmp.stride * bmp.height)
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    return h
}

func render(_ name: String, frame: Int, width: Int = 320, height: Int = 180, threads: Int = 1, hud: HUDStats? = nil) -> Bitmap {
    let bmp = Bitmap(width: width, height: height)
    SceneRenderer(scene: SceneCatalog.scene(named: name)!, threads: threads).render(into: bmp.canvas, context: SceneContext(frameIndex: frame), hud: hud)
    return bmp
}

@Suite struct SceneGoldenTests {
    /// Checksums of each scene at 320×180 for frames 0, 1, 37 and 600 (drawn single-threaded,
    /// inspected as PNGs when recorded). Any change to a scene or primitive shows up here.
    static let golden: [String: [UInt64]] = [
        "flash": [0x84D3A925378A4B25, 0x21B7CBD47F991725, 0x21B7CBD47F991725, 0x84D3A925378A4B25],
        "counter": [0xA79383914F303FD4, 0xD3FF5DDD0828AB9D, 0x5A65D1926428B22C, 0xCD1558DE251DEF74],
        "bar": [0x15007CD5D09944A5, 0x2645ECE179E0F25, 0x4C6A33DB658680A5, 0xB99506DFFA3A3DA5],
        "ufo": [0x3B43FCD3283989D3, 0xA4282CBDD6891B2F, 0x8916E5B300E21684, 0x979D68F954DF1C27],
        "scroll": [0xEC7E4DA250538C15, 0xE6A7D16C5B25D765, 0x96FE89CF27C756C5, 0x80078F782CF2E645],
        "gradient": [0x89A3CB8C5B2DC555, 0x297E975E1370459D, 0x73645A16579EFCEF, 0x3ECA6569DA1EF9FF],
        "stress": [0xC20A6F1F5556B253, 0xC54551F831928066, 0xC89432E6C0474E11, 0xE9D831042824A33D],
    ]

    @Test(arguments: ["flash", "counter", "bar", "ufo", "scroll", "gradient", "stress"])
    func sceneMatchesGoldenChecksums(name: String) {
        let sums = [0, 1, 37, 600].map { checksum(render(name, frame: $0)) }
        #expect(Self.golden[name] == sums, "new checksums for \(name): \(sums.map { "0x" + String($0, radix: 16, uppercase: true) })")
    }

    @Test(arguments: ["flash", "counter", "bar", "ufo", "scroll", "gradient", "stress"])
    func bandedFrameEqualsSingleThread(name: String) {
        var hud = HUDStats(refreshHz: 60)
        for i in 0..<150 { hud.recordFrame(intervalMs: i % 17 == 0 ? 33.4 : 16.7) }
        let stats = hud
        for frame in [3, 250] {
            let one = render(name, frame: frame, width: 640, height: 360, threads: 1, hud: stats)
            let many = render(name, frame: frame, width: 640, height: 360, threads: 2, hud: stats)
            #expect(memcmp(one.base, many.base, one.stride * one.height) == 0)
            let bands = Bitmap(width: 640, height: 360)
            let r = SceneRenderer(scene: SceneCatalog.scene(named: name)!, threads: 1)
            BandedRenderer(threads: 1, bands: 13).render(bands.canvas) { band in
                r.scene.render(into: band, context: SceneContext(frameIndex: frame))
                HUD.draw(stats, into: band)
            }
            #expect(memcmp(one.base, bands.base, one.stride * one.height) == 0)
        }
    }
}

@Suite struct SceneBehaviourTests {
    @Test func catalogueHasEveryScene() {
        #expect(SceneCatalog.names == ["flash", "counter", "bar", "ufo", "scroll", "gradient", "stress"])
        #expect(SceneCatalog.scene(named: "UFO")?.name == "ufo")
        #expect(SceneCatalog.scene(named: "nope") == nil)
        for s in SceneCatalog.all { #expect(!s.summary.isEmpty && !s.summary.contains("\n")) }
    }

    @Test func flashAlternatesBlackAndWhite() {
        for frame in 0..<4 {
            let bmp = render("flash", frame: frame, width: 64, height: 36)
            let want: UInt32 = frame % 2 == 0 ? 0xFF00_0000 : 0xFFFF_FFFF
            for y in 0..<36 { for x in 0..<64 { #expect(bmp.canvas.pixel(x: x, y: y) == want) } }
        }
    }

    @Test(arguments: [0, 1, 5, 1234, 65_537, 2_000_000_001])
    func counterBarcodeDecodesToTheFrameIndex(frame: Int) {
        let w = 1280, h = 720
        let bmp = render("counter", frame: frame, width: w, height: h)
        // Read the cells back the way a camera decoder would: centre of each cell.
        let cells = 36, cellW = w / (cells + 2)
        let x0 = (w - cellW * cells) / 2, y = h * 3 / 4 + h / 16
        func bit(_ c: Int) -> Bool { bmp.canvas.pixel(x: x0 + c * cellW + cellW / 2, y: y)! & 0xFF > 128 }
        #expect(bit(0) && !bit(1) && !bit(cells - 2) && bit(cells - 1))
        var v: UInt32 = 0
        for c in 2..<(cells - 2) { v = v << 1 | (bit(c) ? 1 : 0) }
        #expect(v == UInt32(truncatingIfNeeded: frame))
    }

    @Test func barMovesAFixedStepPerFrame() {
        let w = 1920, h = 1080
        let step = BarScene.pixelsPerFrame(width: w)
        #expect(step == 8)
        for frame in [0, 1, 2, 100] {
            let bmp = render("bar", frame: frame, width: w, height: h)
            let y = h / 2
            var first = -1
            for x in 0..<w where bmp.canvas.pixel(x: x, y: y) == 0xFFFF_FFFF { first = x; break }
            #expect(first == (frame * step) % w)
        }
    }

    @Test func stressCalibrationScalesWithTheBudget() {
        let small = StressScene.calibrated(fraction: 0.1, budgetSeconds: 1.0 / 60, width: 320, height: 180)
        let large = StressScene.calibrated(fraction: 0.8, budgetSeconds: 1.0 / 60, width: 320, height: 180)
        #expect(small.shapeCount >= 1)
        #expect(large.shapeCount > small.shapeCount)
    }
}

@Suite struct HUDTests {
    @Test func ringKeepsTheLast120InOrder() {
        var ring = IntervalRing()
        for i in 0..<300 { ring.append(Double(i)) }
        #expect(ring.count == 120)
        #expect(ring[0] == 180 && ring[119] == 299)
        #expect(ring.mean == (180.0 + 299.0) / 2)
        var short = IntervalRing()
        short.append(4); short.append(8)
        #expect(short.count == 2 && short[0] == 4 && short[1] == 8 && short.mean == 6)
    }

    @Test func statsTrackFPSAndBudget() {
        var s = HUDStats(refreshHz: 60)
        #expect(abs(s.budgetMs - 16.6667) < 0.001)
        s.recordFrame(intervalMs: 20)
        s.recordFrame(intervalMs: 10)
        #expect(s.currentFPS == 100)
        #expect(abs(s.averageFPS - 1000.0 / 15) < 1e-9)
        #expect(s.presentedFrames == 2)
        #expect(HUDStats(refreshHz: 120, effectiveRateHz: 40).budgetMs == 25)
    }

    @Test func drawsOnlyInsideItsPanelAndShowsLateFramesInRed() {
        let w = 1920, h = 1080
        let bmp = Bitmap(width: w, height: h)
        bmp.canvas.clear(Color(rgb: 0x0000FF))
        var s = HUDStats(refreshHz: 60)
        for i in 0..<120 { s.recordFrame(intervalMs: i == 119 ? 50 : 16.7) }
        HUD.draw(s, into: bmp.canvas)
        let panel = HUD.frame(width: w, height: h)
        var redInChart = false
        for y in 0..<h {
            for x in 0..<w {
                let p = bmp.canvas.pixel(x: x, y: y)!
                let inside = x >= panel.minX && x < panel.maxX && y >= panel.minY && y < panel.maxY
                if !inside && p != 0xFF00_00FF { Issue.record("HUD drew outside its panel at \(x),\(y)"); return }
                if inside && x >= panel.maxX - 20 && (p >> 16) & 0xFF > 200 && p & 0xFF < 120 { redInChart = true }
            }
        }
        #expect(redInChart)
        // The panel is darkened (blended) where nothing else is drawn.
        #expect(bmp.canvas.pixel(x: panel.minX + 1, y: panel.minY + 1) == blendPixel(0xFF00_00FF, 0xFF00_0000, 170))
    }

    @Test func textLineFormatsWithoutFoundation() {
        var l = TextLine("FPS ")
        l.append(59.94, fractionDigits: 1)
        l.append(" ")
        l.append(-42)
        l.append(" ")
        l.append(0.004, fractionDigits: 2)
        l.append(" ")
        l.append(16.6667, fractionDigits: 3)
        #expect(l.string == "FPS 59.9 -42 0.00 16.667")
    }
}

@Suite struct WorkloadTests {
    @Test func randomStreamIsXorshift32FromTheSeed() {
        var r = WorkloadRandom()
        var x: UInt32 = 0x1234_5678
        for _ in 0..<10 {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            #expect(r.next() == x)
        }
    }

    @Test func workloadsParseAndRun() {
        #expect(BenchWorkload("rects") == .rects)
        #expect(BenchWorkload("scene:ufo") == .scene("ufo"))
        #expect(BenchWorkload("scene:nope") == nil)
        #expect(BenchWorkload("bogus") == nil)
        let bmp = Bitmap(width: 200, height: 100)
        for wl in BenchWorkload.standard + [.scene("bar")] {
            bmp.canvas.clear(.black)
            PreparedWorkload(wl, width: 200, height: 100).run(frame: 3, into: bmp.canvas, renderer: BandedRenderer(threads: 2))
            var changed = 0
            for y in 0..<100 { for x in 0..<200 where bmp.canvas.pixel(x: x, y: y) != 0xFF00_0000 { changed += 1 } }
            #expect(changed > 2000, "\(wl) drew \(changed) pixels")
        }
        // Rect workload: the first rectangle comes from the first five values of the stream.
        var r = WorkloadRandom()
        let x = Int(r.next() % 200), y = Int(r.next() % 100)
        _ = r.next(); _ = r.next()
        let color = (r.next() & 0xFF_FFFF) | 0xFF00_0000
        bmp.canvas.clear(.black)
        PreparedWorkload(.rects, width: 200, height: 100).run(frame: 0, into: bmp.canvas, renderer: BandedRenderer(threads: 1))
        _ = (x, y, color)
        #expect(bmp.canvas.pixel(x: x, y: y) != 0xFF00_0000)
    }

    @Test func renderedSceneRoundTripsThroughPNG() throws {
        let bmp = render("ufo", frame: 12, width: 96, height: 54)
        let png = PNGWriter.encode(bmp.canvas)
        #expect(Array(png[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(png[16..<24].elementsEqual([0, 0, 0, 96, 0, 0, 0, 54]))
    }
}
