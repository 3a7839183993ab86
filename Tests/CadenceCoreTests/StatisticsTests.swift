import Testing
@testable import CadenceCore

@Suite struct StatisticsTests {
    @Test func summaryOfKnownValues() {
        let s = SummaryStatistics([4, 1, 3, 2, 5].map(Double.init))
        #expect(s.count == 5)
        #expect(s.mean == 3)
        #expect(abs(s.stddev - 2.0.squareRoot()) < 1e-12)
        #expect(s.min == 1 && s.max == 5)
        #expect(s.p50 == 3)
        #expect(abs(s.p99 - 4.96) < 1e-12)
    }

    @Test func emptyInputIsAllZero() {
        let s = SummaryStatistics([Double]())
        #expect(s.count == 0 && s.mean == 0 && s.p99 == 0)
    }

    @Test func fitRecoversPeriodOfLargeTimestamps() throws {
        // 60.0038 Hz vblanks starting 10^5 s after boot: the slope must survive the offset.
        let period = 1e9 / 60.0038
        let pts = (0..<600).map { (x: Double($0 + 1_000_000), y: 1e14 + Double($0) * period) }
        let fit = try #require(LinearFit(pts))
        #expect(abs(fit.slope - period) / period < 1e-9)
    }
}
