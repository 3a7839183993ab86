import Testing
@testable import CadenceCore

/// SampleDistribution and RunningLinearFit: bounded memory, and exactly what the old
/// keep-every-sample statistics gave while the distribution is exact.
@Suite struct BoundedStatisticsTests {
    /// Interval-like samples: a few refresh multiples with µs or ns jitter.
    func samples(_ n: Int, jitter: Int64, seed: UInt64) -> [Int64] {
        var rng = SplitMix64(seed: seed)
        return (0..<n).map { _ in
            let k = Int64(rng.next() % 7 == 0 ? 2 : 1)
            let j = jitter > 0 ? Int64(rng.next() % UInt64(2 * jitter + 1)) - jitter : 0
            return k * 16_666_667 + j
        }
    }

    @Test func exactDistributionEqualsSortingEverySampleBitForBit() {
        for (jitter, seed) in [(Int64(0), UInt64(1)), (500, 2), (1_000, 3)] {
            let xs = samples(3_000, jitter: jitter, seed: seed)
            var d = SampleDistribution()
            for x in xs { d.add(x) }
            #expect(d.isExact)
            let streamed = SummaryStatistics(d, divisor: 1e6)
            let sorted = SummaryStatistics(xs.map { Double($0) / 1e6 })
            #expect(streamed == sorted, "jitter \(jitter)")
            #expect(d.sum == xs.reduce(0, +))
        }
    }

    @Test func percentileRanksMatchAtTheEdges() {
        // One sample, two samples, all equal, and ranks landing exactly on an element.
        for xs: [Int64] in [[7], [3, 9], [5, 5, 5, 5], [1, 2, 3, 4, 5], Array(0..<101)] {
            var d = SampleDistribution()
            for x in xs.reversed() { d.add(x) }
            #expect(SummaryStatistics(d, divisor: 1) == SummaryStatistics(xs.map(Double.init)), "\(xs)")
        }
        #expect(SummaryStatistics(SampleDistribution(), divisor: 1e6) == SummaryStatistics([Double]()))
    }

    @Test func coarsensBeyondCapacityWithinHalfAQuantum() {
        let xs = samples(50_000, jitter: 200_000, seed: 9)
        var d = SampleDistribution(capacity: 256)
        for x in xs { d.add(x) }
        #expect(!d.isExact)
        #expect(d.distinctValues <= 256)
        let q = Double(d.quantum)
        #expect(q >= 10 && q <= 100_000)
        let s = SummaryStatistics(d, divisor: 1)
        let exact = SummaryStatistics(xs.map(Double.init))
        // count, min and max stay exact; the rest within q/2.
        #expect(s.count == exact.count && s.min == exact.min && s.max == exact.max)
        #expect(abs(s.mean - exact.mean) <= q / 2)
        #expect(abs(s.stddev - exact.stddev) <= q / 2)
        #expect(abs(s.p50 - exact.p50) <= q / 2)
        #expect(abs(s.p99 - exact.p99) <= q / 2)
    }

    @Test func memoryStaysBoundedOverAMillionDistinctSamples() {
        var d = SampleDistribution()
        for i in 0..<1_000_000 { d.add(Int64(i) &* 7_919 % 1_000_000_007) }
        #expect(d.count == 1_000_000)
        #expect(d.distinctValues <= d.capacity)
    }

    @Test func negativeAndExtremeSamplesBucketDownwards() {
        #expect(SampleDistribution.bucket(-1, 10) == -10)
        #expect(SampleDistribution.bucket(-10, 10) == -10)
        #expect(SampleDistribution.bucket(19, 10) == 10)
        #expect(SampleDistribution.bucket(Int64.min, 10) == Int64.min + 8)  // no wrap to a huge positive
        #expect(SampleDistribution.bucket(Int64.max, 10) == Int64.max - 7)
        var d = SampleDistribution(capacity: 16)
        for x: Int64 in [.max, .min, 0, .max, -5] { d.add(x) }
        for i in 0..<100 { d.add(Int64(i) * 1_000_003) }
        #expect(d.min == .min && d.max == .max && d.count == 105)
        #expect(d.sumOverflowed)
        #expect(d.distinctValues <= 16)
        _ = SummaryStatistics(d, divisor: 1e6)
    }

    @Test func accountingKeepsBoundedIntervalsOfALongJitteryRun() {
        var acc = FrameAccounting()
        var r = FrameReport()
        r.outcome = .onTime
        var rng = SplitMix64(seed: 4)
        var t: Nanoseconds = 1_000_000_000
        for i in 0..<200_000 {
            let iv = 16_666_667 + Int64(rng.next() % 400_001) - 200_000
            t += iv
            r.presentedTime = t
            r.interval = i == 0 ? 0 : iv
            r.intervalRefreshes = 1
            acc.add(r)
        }
        #expect(acc.intervals.count == 199_999)
        #expect(acc.intervals.distinctValues <= acc.intervals.capacity)
        let s = RunSummary(accounting: acc, backend: "fake", refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1, end: .completed)
        #expect(abs(s.intervalMs.mean - 16.666667) < 0.01)
        #expect(s.intervalMs.count == 199_999)
    }

    @Test func runningFitAgreesWithTheTwoPassFit() throws {
        let period = 1e9 / 59.94
        var rng = SplitMix64(seed: 5)
        var pts: [(x: Double, y: Double)] = []
        var running = RunningLinearFit()
        for i in 0..<100_000 {
            let x = Double(i + 3_000_000)
            let y = 8e14 + Double(i) * period + Double(Int64(rng.next() % 2001) - 1000)
            pts.append((x, y.rounded()))
            running.add(x: x, y: y.rounded())
        }
        let a = try #require(LinearFit(pts))
        let b = try #require(running.fit)
        #expect(abs(a.slope - b.slope) / a.slope < 1e-12)
        #expect(abs(b.slope - period) / period < 1e-6)
        // The intercept is relative to x = 0, 3e6 refreshes away: agree to a few ns per 1e14.
        #expect(abs(a.intercept - b.intercept) / abs(a.intercept) < 1e-9)
    }

    @Test func runningFitNeedsTwoDistinctX() {
        var f = RunningLinearFit()
        #expect(f.fit == nil)
        f.add(x: 1, y: 10)
        f.add(x: 1, y: 20)
        #expect(f.fit == nil)
        f.add(x: 2, y: 30)
        #expect(f.fit != nil)
    }
}
