import CadenceCore
import CadenceSession
import Raster
import Scenes
import Testing

/// One frame context: a scene drawn from the pacer's `FrameContext` or from a display link's
/// update, in one line, gives the pixels the scene gives for the same index and rates.
@Suite struct SceneContextTests {
    @Test func fromTheRenderersContext() {
        let f = FrameContext(
            frameIndex: 42, time: 0.7, targetPresentationTime: 1_000, deadline: 900, refreshHz: 144, effectiveRateHz: 48
        )
        let c = SceneContext(f)
        #expect(c == SceneContext(frameIndex: 42, time: 0.7, refreshHz: 144, effectiveRateHz: 48))
    }

    /// A display link at 30 Hz on a 60 Hz fake display: each update's context is its callback
    /// index at 30 Hz of a 60 Hz refresh, and drawing it into the drawable's canvas gives the
    /// same pixels as drawing that context into a bitmap.
    @Test func fromADisplayLinkUpdate() throws {
        let display = FakeDisplay(refreshHz: 60, width: 96, height: 64)
        let renderer = SceneRenderer(scene: SceneCatalog.scene(named: "counter")!, threads: 1)
        var contexts: [SceneContext] = []
        var same = 0
        let link = DisplayLink(
            display: display, preferredFrameRateRange: FrameRateRange(minimum: 30, maximum: 30, preferred: 30)
        ) {
            update in
            let c = SceneContext(update)
            contexts.append(c)
            let canvas = update.drawable.canvas
            renderer.render(into: canvas, context: c)
            let expected = Bitmap(width: 96, height: 64)
            renderer.render(into: expected.canvas, context: c)
            var equal = true
            for y in 0..<64 {
                let row = (canvas.base + y * canvas.stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<96 where row[x] & 0x00ff_ffff != (expected.canvas.pixel(x: x, y: y) ?? 0) & 0x00ff_ffff {
                    equal = false
                }
            }
            if equal { same += 1 }
            update.drawable.present()
        }
        _ = try link.run(for: .milliseconds(500))
        #expect(contexts.count >= 14)
        #expect(
            contexts.enumerated().allSatisfy { i, c in c.frameIndex == i && c.refreshHz == 60 && c.effectiveRateHz == 30
            })
        #expect(same == contexts.count)
    }
}
