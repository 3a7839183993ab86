import Testing
@testable import CadenceCore

/// Regression tests for inputs the fuzz targets for `--rate` and `--inject-late` found
/// (tools/fuzz/Targets/rate, inject-late).
@Suite struct FuzzRegressionTests {
    /// Found: on a VRR panel (48–144 Hz) a rate below its range (47, 40, 24, 2 Hz: low-framerate
    /// compensation) spun forever in virtual time: the display link, held back by the frame in
    /// flight, asked to wake at its passed fire time. Every rate now runs to its frame count.
    @Test(arguments: [47.0, 40, 30, 24, 10, 5, 2, 1])
    func vrrRatesBelowThePanelRangeComplete(_ hz: Double) throws {
        var c = RunConfiguration()
        c.range = FrameRateRange(minimum: 0, maximum: hz, preferred: 0)
        c.frames = 5
        let run = try PacingRun(backend: FakeDisplay(FakeDisplayConfiguration(refreshHz: 60, vrrRange: 48...144)), configuration: c)
        var turns = 0
        let s = try run.run(shouldStop: {
            turns += 1
            return turns > 100_000
        })
        #expect(s.endReason == "completed", "\(hz) Hz: \(turns) loop turns")
        #expect(s.presented == 5)
    }

    /// Found: at 0.4 Hz on a VRR panel the last frame (due 2.5 s after the previous one) was
    /// never accounted: the run drained queued frames for one second only.
    @Test(arguments: [0.4, 0.2, 0.01])
    func slowRatesAccountEveryFrame(_ hz: Double) throws {
        for vrr in [nil, 48.0...144.0] {
            var c = RunConfiguration()
            c.range = FrameRateRange(minimum: 0, maximum: hz, preferred: 0)
            c.frames = 3
            c.latency = 3
            let s = try PacingRun(backend: FakeDisplay(FakeDisplayConfiguration(refreshHz: 60, vrrRange: vrr)), configuration: c).run()
            #expect(s.frames == 3 && s.presented == 3, "\(hz) Hz, VRR \(String(describing: vrr))")
        }
    }

    /// A VRR link runs no slower than 1 Hz, as a fixed-refresh one (divisors down to 1 Hz).
    @Test func vrrRateIsAtLeastOneHertz() {
        let r = EffectiveRate.select(for: FrameRateRange(minimum: 0, maximum: 0.01, preferred: 0), refreshHz: 144, vrr: 48...144)
        #expect(r.hz == 1 && r.refreshesPerFrame == 48)
    }

    /// Found: `--inject-late 1:9223372036854775807` trapped (the overrun in ns overflowed) and
    /// `1:100000000000` spun for hours of virtual time. K is now 1…10,000.
    @Test func injectedLatenessIsBounded() throws {
        // (The spec parser's bounds: CadenceReportTests.RunSpecTests.)
        var c = RunConfiguration()
        c.injectLate = [1: Int.max]
        #expect(throws: RunConfiguration.Invalid.self) { try c.validate() }
        c.injectLate = [1: 10_001]
        #expect(throws: RunConfiguration.Invalid.self) { try c.validate() }
        c.injectLate = [1: 10_000]
        c.frames = 3
        let s = try PacingRun(backend: FakeDisplay(), configuration: c).run()
        #expect(s.droppedRefreshes == 10_000 && s.dropEvents == 1)
    }

    /// Found alongside: `--content-rate 1e-300` trapped and `--min-duration` of years spun;
    /// both are bounded (0.1–10,000 Hz, ≤ 10 s).
    @Test func contentRateAndMinimumDurationAreBounded() {
        var c = RunConfiguration()
        for rate in [1e-300, 0.05, 10_001, .infinity, .nan] {
            c.contentRate = rate
            #expect(throws: RunConfiguration.Invalid.self, "\(rate)") { try c.validate() }
        }
        c.contentRate = nil
        c.minimumDuration = 10_000_000_001
        #expect(throws: RunConfiguration.Invalid.self) { try c.validate() }
        c.minimumDuration = 10_000_000_000
        #expect((try? c.validate()) != nil)
    }

    /// Found by the `rate` target in CI: `1e2:2e20:10` (preferred below the minimum) trapped
    /// while formatting the hint, converting 2e20 to Int. Every such range is one error line.
    @Test(arguments: ["1e2:2e20:10", "100:1e300:1", "1e20:1e21:1e19", "48:144:30"])
    func aRangeThatLeavesOutItsPreferredRateIsAnErrorNotATrap(text: String) throws {
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: text) }
        do {
            _ = try FrameRateRange(parsing: text)
        } catch {
            #expect(String(describing: error).contains("preferred is outside minimum…maximum"), "\(error)")
        }
    }
}
