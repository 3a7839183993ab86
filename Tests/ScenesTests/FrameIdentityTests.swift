import Raster
import Testing

@testable import Scenes

/// The frame identity: its check value, its bits, drawn and decoded back, and that scenes
/// without it stay as they were (the golden checksums in ScenesTests).
@Suite struct FrameIdentityTests {
    @Test func checkIsCRC8SMBus() {
        // The catalogue's check value of CRC-8/SMBUS: "123456789" → 0xF4.
        #expect(FrameIdentity.crc8(Array("123456789".utf8)) == 0xF4)
        #expect(FrameIdentity.check(0) == 0)
        #expect(FrameIdentity.check(1) == 0x07)
        #expect(FrameIdentity.check(0x1234_5678) == 0x1C)
        #expect(FrameIdentity.check(300) == 0xD1)
    }

    @Test func bitsAreMarkersIndexAndCheck() {
        let b = FrameIdentity.bits(1)
        #expect(b.count == FrameIdentity.cells)
        #expect(Array(b[0..<2]) == [true, false] && Array(b[42..<44]) == [false, true])
        #expect(b[2..<33].allSatisfy { !$0 } && b[33])
        #expect(Array(b[34..<42]) == [false, false, false, false, false, true, true, true])  // 0x07
    }

    @Test func cellSizeFitsTheCanvas() {
        #expect(FrameIdentity.cellSize(width: 1024, height: 768) == 4)
        #expect(FrameIdentity.cellSize(width: 1920, height: 1080) == 5)
        #expect(FrameIdentity.cellSize(width: 320, height: 180) == 2)
        #expect(FrameIdentity.cellSize(width: 60, height: 40) == 1)
        #expect(FrameIdentity.cellSize(width: 45, height: 40) == 0)
    }

    @Test(arguments: [(320, 180), (1024, 768), (61, 17)])
    func drawnIdentityDecodes(size: (Int, Int)) {
        for index in [0, 1, 37, 300, 600, 0x7fff_ffff] {
            let bmp = Bitmap(width: size.0, height: size.1)
            SceneRenderer(scene: BarScene(), threads: 3).render(
                into: bmp.canvas, context: SceneContext(frameIndex: index), identity: true)
            #expect(
                FrameIdentity.decode(base: bmp.base, width: size.0, height: size.1, stride: bmp.stride) == UInt32(index)
            )
        }
    }

    @Test func aPictureWithoutTheIdentityDoesNotDecode() {
        let bmp = render("bar", frame: 5)
        #expect(FrameIdentity.decode(base: bmp.base, width: bmp.width, height: bmp.height, stride: bmp.stride) == nil)
        // A flipped bit fails the check.
        let good = Bitmap(width: 320, height: 180)
        SceneRenderer(scene: BarScene(), threads: 1).render(
            into: good.canvas, context: SceneContext(frameIndex: 300), identity: true)
        good.canvas.fillRect(x: 2 * 3, y: 2, width: 2, height: 2, .white)  // cell 2: the index's top bit
        #expect(FrameIdentity.decode(base: good.base, width: 320, height: 180, stride: good.stride) == nil)
    }

    @Test func consecutiveFramesAlwaysDifferWithTheIdentity() {
        // flash repeats every other frame; with the identity no two frames are equal.
        #expect(checksum(render("flash", frame: 0)) == checksum(render("flash", frame: 2)))
        func withIdentity(_ i: Int) -> UInt64 {
            let bmp = Bitmap(width: 320, height: 180)
            SceneRenderer(scene: FlashScene(), threads: 2).render(
                into: bmp.canvas, context: SceneContext(frameIndex: i), identity: true)
            return checksum(bmp)
        }
        #expect(Set((0..<8).map(withIdentity)).count == 8)
    }

    static func pixel(_ b: Bitmap, _ x: Int, _ y: Int) -> UInt32 {
        b.base.load(fromByteOffset: y * b.stride + x * 4, as: UInt32.self)
    }

    @Test func identityOnlyTouchesItsStrip() {
        let plain = render("counter", frame: 42)
        let marked = Bitmap(width: 320, height: 180)
        SceneRenderer(scene: CounterScene(), threads: 1).render(
            into: marked.canvas, context: SceneContext(frameIndex: 42), identity: true)
        var outside = 0
        for y in 0..<180 {
            for x in 0..<320 where !(x < 2 * 46 && y < 2 * 3) {
                if Self.pixel(plain, x, y) != Self.pixel(marked, x, y) { outside += 1 }
            }
        }
        #expect(outside == 0)
        #expect(checksum(plain) != checksum(marked))
    }
}
