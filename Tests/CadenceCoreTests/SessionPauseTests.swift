import Testing
@testable import CadenceCore

/// A seat session paused and resumed mid-run (a VT switched away and back), scripted on the fake
/// display (`FakeFault.sessionPaused`); the same on vkms through seatd is tools/vm/seat.sh. No
/// refresh inside the gap counts as dropped, the summary has the gap, frames not shown when
/// the pause came are marked `session-paused`, and pacing resumes on the vblank grid.
@Suite struct SessionPauseTests {
    struct Outcome {
        var summary: RunSummary
        var frames: [FrameReport]
        var changes: [SessionChange]
    }

    func run(pauses: [(after: Nanoseconds, for: Nanoseconds)], refresh: Double = 60, rate: String? = nil, latency: Int = 1,
             duration: Nanoseconds = 5_000_000_000) throws -> Outcome {
        var f = FakeDisplayConfiguration(refreshHz: refresh)
        f.faults = pauses.map { .sessionPaused(after: $0.after, for: $0.for) }
        var c = RunConfiguration()
        c.duration = duration
        c.latency = latency
        if let rate { c.range = try FrameRateRange(parsing: rate) }
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var out = Outcome(summary: run.summary(end: .completed), frames: [], changes: [])
        run.onFrame = { out.frames.append($0) }
        run.onSessionChange = { out.changes.append($0) }
        out.summary = try run.run()
        return out
    }

    @Test(arguments: [1, 2])
    func aPauseIsAGapWithoutDrops(latency: Int) throws {
        let o = try run(pauses: [(1_000_000_000, 2_000_000_000)], latency: latency)
        let s = o.summary
        #expect(s.endReason == "completed")
        #expect(s.droppedRefreshes == 0 && s.dropEvents == 0, "\(s.causes)")
        #expect(s.sessionGaps == 1)
        // The gap runs from the first vblank at or after 1 s to the first at or after 3 s.
        let gap = try #require(s.sessionGapSeconds)
        #expect(abs(gap - 2.0) <= 1.0 / 60 + 1e-9, "\(gap)")
        #expect(o.changes.map(\.event) == [.paused, .resumed])
        let pausedAt = o.changes[0].timeNs, resumedAt = o.changes[1].timeNs
        #expect(o.changes[1].gapNs == resumedAt - pausedAt)
        let start = FakeDisplayConfiguration().startTime
        #expect(pausedAt - start >= 1_000_000_000 && pausedAt - start < 1_000_000_000 + 16_666_667, "\(pausedAt - start)")
        // Nothing is shown inside the gap; frames not shown when it began are session-paused.
        let shown = o.frames.filter(\.wasPresented)
        #expect(!shown.contains { $0.presentedTime > pausedAt && $0.presentedTime < resumedAt })
        let paused = o.frames.filter { $0.cause == .sessionPaused }
        #expect(paused.count <= latency, "\(paused.map(\.frameIndex))")
        #expect(paused.allSatisfy { $0.outcome == .discarded && $0.droppedRefreshes == 0 })
        #expect(s.causes.keys.allSatisfy { $0 == "session-paused" }, "\(s.causes)")
        // Pacing resumes: frames after the gap are on time, one refresh apart, with no interval
        // spanning the gap.
        let after = shown.filter { $0.presentedTime > resumedAt }
        #expect(after.count > 100)
        #expect(after.allSatisfy { $0.outcome == .onTime && $0.droppedRefreshes == 0 })
        #expect(after.dropFirst().allSatisfy { $0.intervalRefreshes == 1 })
        #expect(after.first?.interval == 0, "the first frame after a gap has no previous shown frame")
        #expect(s.intervalMs.max < 17)
        // The measured rate leaves the gap out.
        #expect(abs(s.measuredRateHz - 60) < 0.5, "\(s.measuredRateHz)")
    }

    @Test func twoPausesAtADividedRate() throws {
        let o = try run(pauses: [(500_000_000, 250_000_000), (2_000_000_000, 1_000_000_000)], rate: "30:30:30")
        let s = o.summary
        #expect(s.sessionGaps == 2)
        #expect(s.droppedRefreshes == 0, "\(s.causes)")
        #expect(o.changes.map(\.event) == [.paused, .resumed, .paused, .resumed])
        let gap = try #require(s.sessionGapSeconds)
        #expect(abs(gap - 1.25) <= 2.0 / 60 + 1e-9, "\(gap)")
        #expect(s.intervalRefreshes.keys.sorted() == ["2"], "\(s.intervalRefreshes)")
    }

    /// A run that ends while the session is away: the open gap counts up to the end, and the
    /// run still ends (the loop does not wait for a resume that never comes).
    @Test func aRunEndingInsideAGapCountsItToTheEnd() throws {
        let o = try run(pauses: [(1_000_000_000, 60_000_000_000)], duration: 3_000_000_000)
        let s = o.summary
        #expect(s.endReason == "completed")
        #expect(s.sessionGaps == 1 && s.droppedRefreshes == 0)
        let gap = try #require(s.sessionGapSeconds)
        #expect(gap > 1.9 && gap < 2.2, "\(gap)")
        #expect(o.changes.map(\.event) == [.paused])
    }

    /// Without a pause the summary has no session fields (the JSON stays as it was).
    @Test func noPauseNoGapFields() throws {
        let o = try run(pauses: [], duration: 500_000_000)
        #expect(o.summary.sessionGaps == nil && o.summary.sessionGapSeconds == nil)
        #expect(o.changes.isEmpty)
    }
}
