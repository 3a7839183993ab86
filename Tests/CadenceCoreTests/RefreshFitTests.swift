import CadenceCore
import Testing

/// `RefreshFit`, the one refresh fit every command measures with: known answers at its edges.
@Suite struct RefreshFitTests {
    @Test func aPanel200ppmSlowIsMeasuredAsSuch() throws {
        // 60 Hz nominal, 200 ppm slow, vblank 3,000,000 at 10^5 s after boot, ±1 µs of jitter
        // (the kernel's timestamps are whole µs): the slope survives the offset and the jitter.
        let period = 1e9 / 60 * 1.000_2
        var rng = SplitMix64(seed: 21)
        var fit = RefreshFit()
        for i in 0..<3_600 {
            let t = 100_000_000_000_000 + Double(i) * period + Double(Int64(rng.next() % 2_001) - 1_000)
            fit.add(sequence: UInt64(3_000_000 + i), timestamp: Nanoseconds(t.rounded()))
        }
        let hz = try #require(fit.hz)
        #expect(abs(hz - 60 / 1.000_2) < 1e-5, "\(hz)")
        #expect(fit.count == 3_600)
        #expect(abs(try #require(fit.periodNs) - period) < 0.5)
    }

    @Test func twoVBlanksAreEnoughAndOneIsNot() {
        var fit = RefreshFit()
        #expect(fit.hz == nil)
        fit.add(sequence: 10, timestamp: 1_000_000_000)
        #expect(fit.hz == nil)
        // The same vblank twice (a flip and a repeat on one sequence) is still one x value.
        fit.add(sequence: 10, timestamp: 1_000_000_000)
        #expect(fit.hz == nil)
        fit.add(sequence: 12, timestamp: 1_033_333_334)
        #expect(fit.hz.map { abs($0 - 1e9 / 16_666_667) < 1e-9 } == true, "\(String(describing: fit.hz))")
    }

    @Test func timeRunningBackwardsIsNoRefresh() {
        // Timestamps that fall as the sequence grows are not a panel: unknown, not negative.
        let fit = RefreshFit([(sequence: 1, timestamp: 50_000_000), (sequence: 2, timestamp: 33_000_000)])
        #expect(fit.hz == nil && fit.periodNs == nil)
    }

    @Test func theSequenceFormEqualsAddingOneByOne() {
        let points = (0..<100).map { (sequence: UInt64($0 * 2 + 1), timestamp: Nanoseconds($0) * 33_333_333) }
        var one = RefreshFit()
        for p in points { one.add(sequence: p.sequence, timestamp: p.timestamp) }
        #expect(RefreshFit(points) == one)
        #expect(one.hz.map { abs($0 - 60.000_000_6) < 1e-6 } == true, "\(String(describing: one.hz))")
    }
}
