import Raster
import Scenes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `cadence bench` measures of one rasterizer workload: the median and fastest frame and
/// the pixel rate at the median.
public struct WorkloadTiming: Equatable, Sendable {
    /// The workload timed.
    public var workload: BenchWorkload
    /// Frame size, pixels.
    public var width: Int
    /// Frame size, pixels.
    public var height: Int
    /// Timed frames.
    public var frames: Int
    /// The median frame time, seconds (of an even count, the mean of the middle two).
    public var medianSeconds: Double
    /// The fastest frame time, seconds.
    public var minSeconds: Double
    /// Megapixels drawn per second at the median frame time.
    public var megapixelsPerSecond: Double { Double(width * height) / medianSeconds / 1e6 }

    /// `frames` frame times of `workload` at `width`×`height`, summarized; `times` need not be
    /// sorted and must not be empty.
    public init(workload: BenchWorkload, width: Int, height: Int, times: [Double]) {
        let t = times.sorted()
        let n = t.count
        self.workload = workload
        self.width = width
        self.height = height
        self.frames = n
        medianSeconds = n % 2 == 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2
        minSeconds = t[0]
    }
}

/// Times rasterizer workloads (`BenchWorkload`) on one bitmap, as `cadence bench` does: each
/// workload is prepared, drawn `warmup` frames untimed, then `frames` frames each timed on the
/// monotonic clock.
///
///     let bench = WorkloadBenchmark(width: 1920, height: 1080, threads: 1)
///     let t = bench.time(.rects, frames: 100, warmup: 5)
///     print(t.medianSeconds * 1e3, "ms")
public struct WorkloadBenchmark {
    /// Frame size, pixels.
    public let width: Int
    /// Frame size, pixels.
    public let height: Int
    /// The renderer (its threads draw horizontal bands).
    public let renderer: BandedRenderer
    private let bitmap: Bitmap

    /// A benchmark at `width`×`height` (both at least 1) drawing with `threads` threads.
    public init(width: Int, height: Int, threads: Int) {
        self.width = width
        self.height = height
        renderer = BandedRenderer(threads: threads)
        bitmap = Bitmap(width: width, height: height)
    }

    /// Times `frames` (at least 1) frames of `workload` after `warmup` untimed ones.
    public func time(_ workload: BenchWorkload, frames: Int, warmup: Int) -> WorkloadTiming {
        let prepared = PreparedWorkload(workload, width: width, height: height)
        for i in 0..<warmup { prepared.run(frame: i, into: bitmap.canvas, renderer: renderer) }
        var times = [Double]()
        times.reserveCapacity(frames)
        for i in 0..<frames {
            let t0 = Self.now()
            prepared.run(frame: warmup + i, into: bitmap.canvas, renderer: renderer)
            times.append(Self.now() - t0)
        }
        return WorkloadTiming(workload: workload, width: width, height: height, times: times)
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
