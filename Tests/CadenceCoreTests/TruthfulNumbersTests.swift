import Testing
@testable import CadenceCore

private let period60 = 1e9 / 60

/// Hitch: every dropped refresh contributes, whether the frame behind it was late or discarded.
@Suite struct HitchTests {
    /// Frame 0's flip event comes 25 ms late, so frame 1 (for vblank 1002) is still waiting when
    /// vblank 1003, frame 2's, is due: frame 1 is discarded and frame 2 is shown on time after one
    /// dropped refresh. Its hitch is that refresh.
    @Test func anOnTimeFrameAfterADiscardedOneCarriesTheHitch() throws {
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.faults = [.lateEvent(submission: 0, by: 25_000_000)]
        let p = try FramePacer(backend: FakeDisplay(f))
        var out: [FrameReport] = []
        var acc = FrameAccounting()
        p.onFrameCompleted = { out.append($0); acc.add($0) }
        let t0: Nanoseconds = 1_000_000_000
        try p.present(intent: .nextOpportunity, frameIndex: 0, renderStart: t0, renderEnd: t0)
        try p.present(intent: .at(t0 + Nanoseconds(2 * period60), nearest: false), frameIndex: 1, renderStart: t0, renderEnd: t0)
        try p.present(intent: .at(t0 + Nanoseconds(3 * period60), nearest: false), frameIndex: 2, renderStart: t0, renderEnd: t0)
        try p.drain(until: t0 + 1_000_000_000)
        #expect(out.map(\.outcome) == [.onTime, .discarded, .onTime])
        #expect(out.map(\.frameIndex) == [0, 1, 2])
        let shown = out[2]
        #expect(shown.sequence == 1_003 && shown.lateRefreshes == 0 && shown.droppedRefreshes == 1)
        #expect(shown.hitch == 16_666_667)
        #expect(acc.droppedRefreshes == 1 && acc.dropEvents == 1)
        #expect(acc.hitchTotal == 16_666_667)
        // 16.667 ms of hitch over the 33.333 ms from the first to the last shown frame.
        #expect(abs(acc.hitchTimeRatio - 500) < 1e-3)
    }

    /// Across faults and latencies: a shown frame's hitch is its dropped refreshes × refresh
    /// (to the nanosecond of the grid's rounding), and the ratio is their sum per second.
    @Test(arguments: [1, 2, 3])
    func hitchIsTheDroppedRefreshes(latency: Int) throws {
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.faults = [.lateEvent(submission: 100, by: 30_000_000), .busy(submission: 200), .stall(atVBlank: 300, by: 40_000_000)]
        var c = RunConfiguration()
        c.frames = 500
        c.latency = latency
        c.injectLate = [50: 2, 400: 1]
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        let s = try run.run()
        #expect(s.dropEvents >= 4)
        var total: Nanoseconds = 0
        for r in out where r.wasPresented {
            #expect((r.hitch == 0) == (r.droppedRefreshes == 0), "frame \(r.frameIndex)")
            #expect(abs(Double(r.hitch) - Double(r.droppedRefreshes) * period60) <= 2, "frame \(r.frameIndex): \(r.hitch)")
            total += r.hitch
        }
        #expect(run.accounting.hitchTotal == total)
        let span = Double(run.accounting.lastPresented - run.accounting.firstPresented) / 1e9
        #expect(abs(s.hitchTimeRatio - Double(s.droppedRefreshes) * period60 / 1e6 / span) < 1e-4)
    }
}

/// The presented-vs-target error of on-time frames.
@Suite struct OnTimeErrorTests {
    func run(_ f: FakeDisplayConfiguration, frames: Int = 300, range: FrameRateRange = .default) throws -> RunSummary {
        var c = RunConfiguration()
        c.frames = frames
        c.range = range
        return try PacingRun(backend: FakeDisplay(f), configuration: c).run()
    }

    @Test func exactOnAnExactDisplay() throws {
        let e = try #require(try run(.init(refreshHz: 60)).onTimeErrorUs)
        #expect(e.max <= 0.001)
    }

    /// ±100 µs timestamps: the error is that of a prediction from one jittered vblank to another.
    @Test func jitterShowsAsSubRefreshError() throws {
        var f = FakeDisplayConfiguration(refreshHz: 60, seed: 4)
        f.jitter = 100_000
        let e = try #require(try run(f).onTimeErrorUs)
        #expect(e.p50 > 10 && e.p50 <= e.p99 && e.p99 <= e.max && e.max <= 200)
    }

    /// VRR at 100 Hz: a flip that needs 300 µs to start lands 300 µs after its target, every
    /// frame (below the panel's 144 Hz maximum, so no flip also waits for the previous refresh).
    /// VRR is judged in time (issue 21, finding 2): with no commit margin to cover the 300 µs,
    /// each frame is shown 300 µs after the time it was meant for, a late frame with a 300 µs
    /// hitch. A commit margin of 300 µs puts every frame on time, with no error.
    @Test func vrrFlipLatencyIsTheError() throws {
        var f = FakeDisplayConfiguration(refreshHz: 144, vrrRange: 48...144)
        f.flipLatency = 300_000
        var c = RunConfiguration()
        c.frames = 100
        c.range = FrameRateRange(minimum: 0, maximum: 144, preferred: 100)
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var reports: [FrameReport] = []
        run.onFrame = { reports.append($0) }
        let s = try run.run()
        #expect(s.presented == 100 && s.late == 100, "\(s.late)")
        #expect(reports.allSatisfy { $0.presentedTime - $0.targetTime == 300_000 && $0.lateRefreshes == 1 })
        #expect(reports.dropFirst().allSatisfy { $0.hitch == 300_000 && $0.droppedRefreshes == 1 })
        c.commitMargin = 300_000
        let covered = try PacingRun(backend: FakeDisplay(f), configuration: c).run()
        #expect(covered.onTime == 100 && covered.droppedRefreshes == 0)
        #expect(covered.onTimeErrorUs == PacingErrorMicroseconds(errorsNs: [0]))
    }
}

/// The copy into the scanout buffer: timed, and a frame it makes late is `copy-late`.
@Suite struct CopyLateTests {
    func run(copyCost: Nanoseconds = 0, faults: [FakeFault] = [], latency: Int = 1, inject: [Int: Int] = [:]) throws -> (RunSummary, [FrameReport]) {
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.copyCost = copyCost
        f.faults = faults
        var c = RunConfiguration()
        c.frames = 120
        c.latency = latency
        c.injectLate = inject
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        return (try run.run(), out)
    }

    @Test func theCopyIsTimed() throws {
        let (s, out) = try run(copyCost: 2_000_000)
        #expect(s.droppedRefreshes == 0)
        #expect(out.allSatisfy { $0.copyEnd - $0.renderEnd == 2_000_000 })
    }

    /// Frame 50's copy takes 20 ms: rendered at once, copied past its deadline (one refresh
    /// after its callback), shown a refresh late.
    @Test func aSlowCopyIsCopyLate() throws {
        let (s, out) = try run(faults: [.slowCopy(finish: 50, cost: 20_000_000)])
        #expect(s.causes == ["copy-late": 1])
        #expect(s.droppedRefreshes == 1 && s.dropEvents == 1)
        let r = out[50]
        #expect(r.frameIndex == 50 && r.outcome == .late && r.cause == .copyLate)
        #expect(r.renderEnd <= r.deadline && r.copyEnd > r.deadline)
        #expect(r.copyEnd - r.renderEnd == 20_000_000)
    }

    /// A copy that ends before the deadline is no drop; with latency 2 the deadline is two
    /// refreshes away and a 20 ms copy fits.
    @Test func aCopyInsideTheDeadlineIsNoDrop() throws {
        let (a, _) = try run(faults: [.slowCopy(finish: 50, cost: 16_000_000)])
        #expect(a.droppedRefreshes == 0 && a.causes.isEmpty)
        let (b, _) = try run(faults: [.slowCopy(finish: 50, cost: 20_000_000)], latency: 2)
        #expect(b.droppedRefreshes == 0 && b.causes.isEmpty)
    }

    /// Rendering that already missed the deadline is render-late, whatever the copy did after.
    @Test func lateRenderingStaysRenderLate() throws {
        let (s, out) = try run(faults: [.slowCopy(finish: 50, cost: 5_000_000)], inject: [50: 1])
        #expect(out[50].cause == .renderLate)
        #expect(s.causes == ["render-late": 1])
    }
}

@Suite struct CauseTests {
    @Test func copyLateIsACause() {
        #expect(DropCause(rawValue: "copy-late") == .copyLate)
        #expect(DropCause.allCases.enumerated().allSatisfy { $0.offset == $0.element.index })
    }
}
