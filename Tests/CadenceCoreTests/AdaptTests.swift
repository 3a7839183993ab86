import Testing
@testable import CadenceCore

/// Rate adaptation (`--adapt`) on the fake display with scripted render costs. The switch frames follow from the
/// thresholds by hand: a 20 ms render misses every 60 Hz vblank, so frames 100, 101 and 102 each
/// drop a refresh and the third miss (3 in 30) steps down after frame 102 is shown: frame 103 is
/// the first at 30 Hz, where 20 ms fits. From frame 200 renders take no time; 60 frames later
/// (frames 200…259, each within 75% of a 60 Hz frame) the rate steps back up: frame 260 is the
/// first at 60 Hz again.
@Suite struct AdaptTests {
    func run(hz: Double = 60, vrr: ClosedRange<Double>? = nil, range: FrameRateRange = .default, costMs: Double,
             frames: Int = 400, adapt: Bool = true) throws -> (RunSummary, [FrameReport], [RateSwitch]) {
        var c = RunConfiguration()
        c.frames = frames
        c.adapt = adapt
        c.range = range
        // Frames 100…199 take `costMs` to render.
        c.renderCost = [RenderCost(first: 100, last: 199, costNs: Nanoseconds(costMs * 1e6))]
        let run = try PacingRun(backend: FakeDisplay(.init(refreshHz: hz, vrrRange: vrr)), configuration: c)
        var out: [FrameReport] = []
        var seen: [RateSwitch] = []
        run.onFrame = { out.append($0) }
        run.onRateSwitch = { seen.append($0) }
        let s = try run.run()
        #expect(seen == run.rateSwitches)
        return (s, out.sorted { $0.frameIndex < $1.frameIndex }, seen)
    }

    @Test func stepsDownWhenFramesKeepMissingAndBackUpWithHeadroom() throws {
        let (s, out, sw) = try run(costMs: 20)
        #expect(sw.map(\.frame) == [103, 260])
        #expect(sw.map(\.afterFrame) == [102, 259])
        #expect(sw.map(\.fromHz) == [60, 30] && sw.map(\.toHz) == [60 / 2, 60])
        #expect(sw.map(\.direction) == ["down", "up"])
        #expect(sw[0].reason == "3 of the last 30 frames at 60 Hz followed dropped refreshes")
        #expect(s.rateSwitches == 2)
        #expect(out.filter { $0.droppedRefreshes > 0 }.map(\.frameIndex) == [100, 101, 102])
        #expect(out[103..<260].allSatisfy { $0.effectiveRateHz == 30 && $0.outcome == .onTime })
        #expect(out[260...].allSatisfy { $0.effectiveRateHz == 60 && $0.intervalRefreshes == 1 })
        // The first frame at the new rate follows its predecessor by one new frame interval.
        #expect(out[103].intervalRefreshes == 2 && out[260].intervalRefreshes == 1)
        #expect(out[104].intervalRefreshes == 2 && out[261].intervalRefreshes == 1)
    }

    @Test func at144HzTheNextRateIs72() throws {
        let (_, out, sw) = try run(hz: 144, costMs: 10)
        #expect(sw.map(\.frame) == [103, 260])
        #expect(sw.map(\.toHz) == [72, 144])
        #expect(out.filter { $0.droppedRefreshes > 0 }.map(\.frameIndex) == [100, 101, 102])
    }

    /// 40 ms misses 30 Hz too: a second step down to 20 Hz after frames 103–105 missed; then up
    /// one step per 60 good frames (at 20 Hz the budget is 75% of a 30 Hz frame).
    @Test func keepsSteppingWhileItKeepsMissing() throws {
        let (_, out, sw) = try run(costMs: 40, frames: 500)
        #expect(sw.map(\.frame) == [103, 106, 260, 320])
        #expect(sw.map(\.toHz) == [30, 20, 30, 60])
        #expect(out.filter { $0.droppedRefreshes > 0 }.map(\.frameIndex) == [100, 101, 102, 103, 104, 105])
        #expect(out[106..<260].allSatisfy { $0.outcome == .onTime && $0.effectiveRateHz == 20 })
    }

    /// Never below the range's minimum: 50–60 Hz allows no lower divisor of 60, so nothing switches.
    @Test func theRangeMinimumIsAFloor() throws {
        let (s, out, sw) = try run(range: FrameRateRange(minimum: 50, maximum: 60, preferred: 0), costMs: 20, frames: 300)
        #expect(sw.isEmpty && s.rateSwitches == 0)
        #expect(out.filter { $0.droppedRefreshes > 0 }.count > 50)
    }

    /// VRR 48–144: the ladder is 144/n. A 15 ms render is 8 ms late at 144 Hz: frames 100–102
    /// drop and the rate steps to 72 Hz, where a 15 ms frame is still 1.1 ms late. VRR is judged
    /// in time (issue 21, finding 2): the panel waits for the frame, but the previous one stays up
    /// 1.1 ms longer, a hitch, so frames 103–105 drop too and the rate steps on to 48 Hz, where
    /// 15 ms fits; it climbs back when the cost ends.
    @Test func vrrStepsAlongTheSameLadder() throws {
        let (_, out, sw) = try run(hz: 144, vrr: 48...144, costMs: 15)
        #expect(sw.map(\.frame) == [103, 106, 260, 320])
        #expect(sw.map(\.toHz) == [72, 48, 72, 144])
        #expect(out.filter { $0.droppedRefreshes > 0 }.map(\.frameIndex) == [100, 101, 102, 103, 104, 105])
        let late72 = out[103..<106].map { $0.presentedTime - $0.targetTime }
        #expect(late72.allSatisfy { abs(Double($0) - (15e6 - 1e9 / 72)) <= 1 }, "\(late72)")
        #expect(out[106..<200].allSatisfy { $0.outcome == .onTime && $0.droppedRefreshes == 0 })
    }

    @Test func withoutAdaptNothingSwitches() throws {
        let (s, _, sw) = try run(costMs: 20, frames: 300, adapt: false)
        #expect(sw.isEmpty && s.rateSwitches == nil)
    }

    @Test func renderCostOfAFrame() throws {
        var c = RunConfiguration()
        c.renderCost = [RenderCost(first: 10, last: 20, costNs: 3_000_000), RenderCost(first: 15, last: 15, costNs: 7_000_000)]
        #expect(c.renderCost(of: 9) == nil && c.renderCost(of: 10) == 3_000_000 && c.renderCost(of: 15) == 7_000_000)
        #expect(RenderCost(first: 300, last: nil, costNs: 4_000_000).description == "300-:4.0")
        #expect(RenderCost(first: 5, last: 5, costNs: 1_500_000).description == "5:1.5")
        c.renderCost = [RenderCost(first: 10, last: 9, costNs: 0)]
        #expect(throws: RunConfiguration.Invalid(.renderCost, "10-9:0.0: the first frame must be ≥ 0, the last ≥ the first and the cost ≥ 0 ms")) { try c.validate() }
    }
}
