import CadenceSession
import Scenes
import Testing

/// ``WorkloadBenchmark``: what `cadence bench` times, and how the times are summarized.
@Suite struct WorkloadBenchmarkTests {
    @Test func theMedianOfAnOddCountIsTheMiddleTime() {
        let t = WorkloadTiming(workload: .fill, width: 1000, height: 1000, times: [0.004, 0.001, 0.002])
        #expect(t.frames == 3 && t.medianSeconds == 0.002 && t.minSeconds == 0.001)
        // A million pixels in 2 ms: 500 Mpix/s.
        #expect(abs(t.megapixelsPerSecond - 500) < 1e-9)
    }

    @Test func theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        let t = WorkloadTiming(workload: .rects, width: 10, height: 10, times: [0.003, 0.001, 0.004, 0.002])
        #expect(t.frames == 4 && abs(t.medianSeconds - 0.0025) < 1e-12 && t.minSeconds == 0.001)
    }

    @Test func eachTimedFrameIsCountedAndTimed() {
        let bench = WorkloadBenchmark(width: 64, height: 48, threads: 1)
        for workload in [BenchWorkload.fill, .rects, .memcpy] {
            let t = bench.time(workload, frames: 5, warmup: 1)
            #expect(t.workload == workload && t.frames == 5 && t.width == 64 && t.height == 48)
            #expect(t.minSeconds > 0 && t.minSeconds <= t.medianSeconds && t.megapixelsPerSecond > 0, "\(t)")
        }
    }
}
