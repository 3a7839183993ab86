import Benchmark
import Raster
import Scenes

/// Frames drawn per benchmark iteration: the per-iteration malloc count of a workload that
/// allocated per frame would be this many times its per-frame allocations above the empty
/// baseline's.
let framesPerIteration = 10

/// The frame size the Done-when table of `tools/bench` uses first.
let width = 1920, height = 1080

/// Draws each `cadence bench` workload and each scene into a frame-sized shadow bitmap on one
/// thread, through the kernel path chosen at start-up (`CADENCE_ISA` forces one), exactly as
/// `cadence bench` does. What this benchmark is for is the malloc count: drawing must allocate
/// nothing per frame on any path, so every row's count equals the empty baseline's. Time per
/// frame is `cadence bench`'s and `tools/bench/table.py`'s business (peers side by side).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .milliseconds,
        maxDuration: .seconds(2),
        maxIterations: 30
    )
    // What the harness itself costs per iteration.
    Benchmark("baseline: empty iteration") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(0) }
    }
    let renderer = BandedRenderer(threads: 1)
    let workloads = BenchWorkload.standard + SceneCatalog.names.map { BenchWorkload.scene($0) }
    for workload in workloads {
        let prepared = PreparedWorkload(workload, width: width, height: height)
        let frame = Bitmap(width: width, height: height)
        // One frame before timing: a scene's caches (glyphs, strips) are made on first use.
        prepared.run(frame: 0, into: frame.canvas, renderer: renderer)
        Benchmark("\(workload) \(width)x\(height), \(framesPerIteration) frames (\(RasterISA.active))") { benchmark in
            for i in benchmark.scaledIterations {
                for k in 0..<framesPerIteration {
                    prepared.run(frame: 1 + i * framesPerIteration + k, into: frame.canvas, renderer: renderer)
                }
            }
            blackHole(frame)
        }
    }
}
