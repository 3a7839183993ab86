import Testing
@testable import CadenceCore

/// `SIGSTOP` for 2 s then `SIGCONT`, scripted on the fake display (the VM check of the same on
/// vkms is tools/vm/faults.sh): the run recovers, the stop is one drop event with cause
/// scheduler-late, and its dropped refreshes are exactly what the flip timestamps show missing.
@Suite struct ProcessStopTests {
    func run(stopAt vblank: Int, by: Nanoseconds, refresh: Double = 60, rate: String? = nil, latency: Int = 1,
             frames: Int = 400, inCommit: Bool = false) throws -> (RunSummary, [FrameReport]) {
        var f = FakeDisplayConfiguration(refreshHz: refresh)
        f.faults = [inCommit ? .processStoppedInCommit(submission: vblank, by: by) : .processStopped(atVBlank: vblank, by: by)]
        var c = RunConfiguration()
        c.frames = frames
        c.latency = latency
        if let rate { c.range = try FrameRateRange(parsing: rate) }
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        return (try run.run(), out)
    }

    /// The refreshes the flip timestamps show missing: for each pair of consecutive shown frames,
    /// the refreshes between them beyond the frame's planned interval.
    func missingByTimestamps(_ out: [FrameReport], refresh: Double) -> [(frame: Int, missing: Int)] {
        let shown = out.filter(\.wasPresented)
        var gaps: [(Int, Int)] = []
        for (a, b) in zip(shown, shown.dropFirst()) {
            let refreshes = Int((Double(b.presentedTime - a.presentedTime) / (1e9 / refresh)).rounded())
            let planned = Int((refresh / b.effectiveRateHz).rounded())
            if refreshes > planned { gaps.append((b.frameIndex, refreshes - planned)) }
        }
        return gaps
    }

    @Test(arguments: [1, 2])
    func twoSecondStopIsOneSchedulerLateDropEvent(latency: Int) throws {
        let (s, out) = try run(stopAt: 60, by: 2_000_000_000, latency: latency)
        #expect(s.endReason == "completed" && s.frames == 400)
        #expect(s.dropEvents == 1, "\(s.causes)")
        #expect(s.causes.keys.sorted() == ["scheduler-late"], "\(s.causes)")
        let gaps = missingByTimestamps(out, refresh: 60)
        #expect(gaps.count == 1, "\(gaps)")
        // 2 s at 60 Hz is 120 refreshes; the frame committed before the stop still latches.
        #expect(gaps.first?.missing == s.droppedRefreshes, "\(gaps) vs \(s.droppedRefreshes)")
        #expect((119...121).contains(s.droppedRefreshes), "\(s.droppedRefreshes)")
        let late = try #require(out.first { $0.droppedRefreshes > 0 })
        #expect(late.cause == .schedulerLate)
        // The wake-up that came 2 s late is recorded (on the late frame itself at latency 1; at
        // latency 2 the late frame was drawn before the stop and the next one woke late).
        #expect(out.contains { $0.schedulerDelay >= 1_900_000_000 && $0.frameIndex - late.frameIndex < latency })
        // The run recovers: every frame after the stop is on time, one refresh apart.
        let after = out.filter { $0.frameIndex > late.frameIndex }
        #expect(after.count > 100 && after.allSatisfy { $0.outcome == .onTime && $0.droppedRefreshes == 0 })
    }

    /// At a divided rate (30 Hz on 60) the missing refreshes count against the 2-refresh plan,
    /// and a stop that is not a whole number of refreshes still matches the timestamps exactly.
    @Test(arguments: [Nanoseconds(2_000_000_000), 1_234_567_890, 50_000_000])
    func stopAtADividedRateMatchesTheTimestamps(by: Nanoseconds) throws {
        let (s, out) = try run(stopAt: 101, by: by, rate: "30:30:30")
        #expect(s.dropEvents == 1 && s.causes.keys.sorted() == ["scheduler-late"], "\(s.causes)")
        let gaps = missingByTimestamps(out, refresh: 60)
        #expect(gaps.count == 1 && gaps.first?.missing == s.droppedRefreshes, "\(gaps) vs \(s.droppedRefreshes)")
    }

    /// The stop lands inside the commit (seen on vkms: SIGSTOP while the ioctl returns): the frame
    /// latches on time, but the callback returns 2 s late. The refreshes lost meanwhile are
    /// still one scheduler-late drop event on the next frame, as the timestamps show (the link's
    /// next target is pulled back to the vblank after the one the frame really took).
    @Test(arguments: [1, 2])
    func stopInsideTheCommitIsCountedToo(latency: Int) throws {
        let (s, out) = try run(stopAt: 60, by: 2_000_000_000, latency: latency, inCommit: true)
        #expect(s.endReason == "completed" && s.frames == 400)
        let gaps = missingByTimestamps(out, refresh: 60)
        #expect(gaps.count == 1 && gaps.first?.missing == s.droppedRefreshes, "\(gaps) vs \(s.droppedRefreshes)")
        #expect((119...121).contains(s.droppedRefreshes), "\(s.droppedRefreshes)")
        #expect(s.dropEvents == 1 && s.causes.keys.sorted() == ["scheduler-late"], "\(s.causes)")
    }

    /// A stop shorter than the slack before the next deadline drops nothing.
    @Test func aShortStopInsideTheSlackDropsNothing() throws {
        let (s, _) = try run(stopAt: 60, by: 1_000_000, latency: 2)
        #expect(s.droppedRefreshes == 0 && s.dropEvents == 0, "\(s.causes)")
    }
}
