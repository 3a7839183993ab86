import Benchmark
import Raster
import Scenes

/// A 1080p shadow buffer and a HUD state with a full interval ring, as in a long run.
let bitmap = Bitmap(width: 1920, height: 1080)
nonisolated(unsafe) var stats: HUDStats = {
    var s = HUDStats(refreshHz: 60)
    for i in 0..<200 { s.recordFrame(intervalMs: i % 13 == 0 ? 33.4 : 16.7) }
    return s
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds,
        maxDuration: .seconds(2), maxIterations: 100)
    Benchmark("baseline: empty iteration") { b in
        for _ in b.scaledIterations { blackHole(0) }
    }
    // 100 and 1000 frames per iteration: a per-frame allocation would show as 100 / 1000 mallocs.
    for frames in [100, 1000] {
        Benchmark("HUD record + draw, \(frames) frames at 1080p") { b in
            for _ in b.scaledIterations {
                for i in 0..<frames {
                    stats.recordFrame(intervalMs: i % 7 == 0 ? 20.1 : 16.68)
                    stats.droppedRefreshes += i & 1
                    HUD.draw(stats, into: bitmap.canvas)
                }
            }
        }
    }
}
