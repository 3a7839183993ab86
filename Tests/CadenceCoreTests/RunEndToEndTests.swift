import Testing
@testable import CadenceCore

/// The `cadence run` checks of issue 3, driven through the same PacingRun API the CLI uses.
@Suite struct RunEndToEndTests {
    func run(_ fake: FakeDisplayConfiguration = .init(refreshHz: 60), _ configure: (inout RunConfiguration) -> Void) throws -> (RunSummary, [FrameReport]) {
        var c = RunConfiguration()
        c.frames = 600
        configure(&c)
        let r = try PacingRun(backend: FakeDisplay(fake), configuration: c)
        var reports: [FrameReport] = []
        r.onFrame = { reports.append($0) }
        return (try r.run(), reports)
    }

    @Test(arguments: [1, 2, 3])
    func injectLateGivesExactDrops(latency: Int) throws {
        let (s, reports) = try run { $0.injectLate = [100: 1, 250: 3]; $0.latency = latency }
        #expect(s.droppedRefreshes == 4)
        #expect(s.dropEvents == 2)
        #expect(s.causes == ["render-late": 2])
        #expect(s.discarded == 0 && s.failed == 0 && s.unconfirmed == 0)
        #expect(s.frames == 600 && s.presented == 600)
        let dropped = reports.filter { $0.droppedRefreshes > 0 }
        #expect(dropped.map(\.frameIndex) == [100, 250])
        #expect(dropped.map(\.droppedRefreshes) == [1, 3])
        #expect(dropped.map(\.lateRefreshes) == [1, 3])
        #expect(s.intervalRefreshes == ["1": 597, "2": 1, "4": 1])
        // Hitch: 4 refreshes of 16.67 ms over 603 refreshes of display time.
        #expect(abs(s.hitchTimeRatio - 4 * (1000.0 / 60) / (603.0 / 60)) < 1e-6)
    }

    /// A KMS-like fake (timestamp jitter, event latency, flips that need 0.5 ms to arm, 1 ms
    /// commit margin): the injected lateness is still reported exactly.
    @Test(arguments: [1, 2, 3])
    func injectLateIsExactOnAKMSLikeDisplay(latency: Int) throws {
        var f = FakeDisplayConfiguration(refreshHz: 60.0038, seed: 3)
        f.jitter = 100_000
        f.eventLatency = 200_000
        f.flipLatency = 500_000
        f.driftPPM = 20
        let (s, reports) = try run(f) {
            $0.injectLate = [100: 1, 250: 3]
            $0.latency = latency
            $0.commitMargin = 1_000_000
        }
        #expect(s.droppedRefreshes == 4 && s.dropEvents == 2)
        #expect(s.causes == ["render-late": 2])
        #expect(s.latency == latency)
        #expect(reports.filter { $0.droppedRefreshes > 0 }.map(\.frameIndex) == [100, 250])
    }

    @Test func latencyIsLimitedByTheBackendsBuffers() throws {
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.queueCapacity = 1
        let (s, reports) = try run(f) { $0.latency = 3; $0.frames = 200 }
        #expect(s.latency == 2)
        #expect(reports.allSatisfy { $0.latency == 2 && $0.outcome == .onTime })
        #expect(s.intervalRefreshes == ["1": 199])
    }

    @Test func rate26On60PresentsAt30() throws {
        let (s, reports) = try run { $0.range = try! FrameRateRange(parsing: "10:60:26"); $0.frames = 300 }
        #expect(s.effectiveRateHz == 30)
        #expect(s.intervalRefreshes == ["2": 299])
        #expect(s.droppedRefreshes == 0 && s.dropEvents == 0)
        #expect(abs(s.intervalMs.mean - 1000.0 / 30) < 0.001)
        #expect(reports.allSatisfy { $0.outcome == .onTime })
    }

    @Test func contentRate24Holds3232() throws {
        let (s, reports) = try run { $0.contentRate = 24; $0.frames = 240 }
        let units = reports.dropFirst().map(\.intervalRefreshes)
        #expect(units.count == 239)
        for (i, u) in units.enumerated() { #expect(u == (i % 2 == 0 ? 3 : 2)) }
        #expect(s.droppedRefreshes == 0)
        #expect(s.effectiveRateHz == 24)
    }
}

/// Drivers without vblank (bochs, virtio-gpu): flips complete at commit, so the pacer must
/// commit at the target's time rather than as fast as flips complete.
@Suite struct NoHardwareVBlankTests {
    func run(_ configure: (inout RunConfiguration) -> Void) throws -> RunSummary {
        var f = FakeDisplayConfiguration(refreshHz: 75)
        f.hasHardwareVBlank = false
        f.flipLatency = 300_000
        var c = RunConfiguration()
        c.frames = 300
        c.commitMargin = 1_000_000
        configure(&c)
        return try PacingRun(backend: FakeDisplay(f), configuration: c).run()
    }

    @Test func pacesAtTheNominalRefresh() throws {
        let s = try run { _ in }
        #expect(s.droppedRefreshes == 0)
        #expect(s.intervalRefreshes == ["1": 299])
        #expect(abs(s.intervalMs.mean - 1000.0 / 75) < 0.01)
        #expect(abs(s.measuredRateHz - 75) < 0.1)
    }

    @Test func rateDivisorHolds() throws {
        let s = try run { $0.range = FrameRateRange(minimum: 0, maximum: 40, preferred: 37.5) }
        #expect(s.intervalRefreshes == ["2": 299])
        #expect(abs(s.measuredRateHz - 37.5) < 0.05)
    }

    @Test func injectedLatenessIsSeen() throws {
        let s = try run { $0.injectLate = [100: 2] }
        #expect(s.dropEvents == 1 && s.droppedRefreshes >= 1)
        #expect(s.causes == ["render-late": 1])
    }
}
