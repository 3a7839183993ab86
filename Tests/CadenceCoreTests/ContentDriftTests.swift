import Testing

@testable import CadenceCore

/// Content faster (or slower) than the panel's real rate: 60 fps content on a 60 Hz panel that
/// runs slow (or fast).
@Suite struct ContentDriftTests {
    /// A content frame reported on time is shown within a refresh of its time: on a panel at
    /// +500 ppm, 60 fps content gains 8.3 µs a frame on the vblanks, and a frame that has fallen
    /// a whole refresh behind its time is late, or an older one is discarded to catch up. Found
    /// (7,200 frames, 2 minutes of virtual time): at latency 1, 5,188 frames from frame 2,012 on
    /// were reported on time while shown over a refresh after their times, the worst 60.0 ms
    /// later, and none was discarded (one frame per callback: no two are ever queued for one
    /// vblank); at latency 3, 3,189 from frame 4,011 on, the worst 43.3 ms, and the 2 frames
    /// discarded to catch up were blamed flip-late (nothing was late to flip). Each frame was
    /// presented at the first callback whose target was at or after its vblank, so once two
    /// content times fell in one refresh the second took the vblank after its own, "on time"
    /// because the frame before had taken that vblank, and every frame after it followed a
    /// vblank late. Now the callback shows the newest content frame due at or before its target
    /// and reports the older ones discarded with no cause (PacingModel.md, "Content ahead of
    /// the panel"): one frame in about 2,000 (8.3 µs a frame, one refresh).
    @Test(arguments: [1, 2, 3])
    func contentAheadOfASlowPanelIsNeverSilentlyLate(latency: Int) throws {
        var s = PacingScenario(refreshHz: 60, latency: latency, frames: 7_200, mode: .content(60))
        s.driftPPM = 500
        let (summary, reports) = try runOnFakeDisplay(s)
        let period = 1e9 / 60 * (1 + 500e-6)
        let behind = reports.filter { r in
            guard r.outcome == .onTime, case .at(let t, _) = r.intent else { return false }
            return Double(r.presentedTime - t) > period + 100_000
        }
        let lag = behind.map { r -> Double in
            guard case .at(let t, _) = r.intent else { return 0 }
            return Double(r.presentedTime - t) / 1e6
        }
        #expect(
            behind.count == 0,
            "\(behind.count) frames on time but shown over a refresh after their time (first: frame \(behind.first?.frameIndex ?? -1); worst \(lag.max() ?? 0) ms)"
        )
        let discarded = reports.filter { $0.outcome == .discarded }
        #expect(
            discarded.allSatisfy { $0.cause == nil && $0.presentedTime == 0 },
            "\(discarded.count) discarded, causes \(discarded.compactMap(\.cause))")
        // 7,200 frames gain 60 ms on the vblanks: 3 refreshes, so 3 frames to catch up (4 when
        // the start falls so), none late and nothing dropped.
        #expect((3...4).contains(discarded.count), "\(discarded.count) discarded")
        #expect(
            summary.late == 0 && summary.droppedRefreshes == 0,
            "\(summary.late) late, \(summary.droppedRefreshes) dropped")
    }

    /// The mirror case: 60 fps content on a panel at −500 ppm (fast) loses 8.3 µs a frame on the
    /// vblanks, so about one refresh in 2,000 shows no new frame (the one before is repeated):
    /// nothing is discarded, late or dropped, and every frame is shown within a refresh of its
    /// time.
    @Test(arguments: [1, 2, 3])
    func contentBehindAFastPanelIsShownOnTime(latency: Int) throws {
        var s = PacingScenario(refreshHz: 60, latency: latency, frames: 7_200, mode: .content(60))
        s.driftPPM = -500
        let (summary, reports) = try runOnFakeDisplay(s)
        let period = 1e9 / 60 * (1 - 500e-6)
        let behind = reports.filter { r in
            guard case .at(let t, _) = r.intent else { return true }
            return r.outcome != .onTime || Double(r.presentedTime - t) > period + 100_000
        }
        #expect(
            behind.isEmpty,
            "\(behind.count) frames not on time within a refresh (first: frame \(behind.first?.frameIndex ?? -1))")
        #expect(
            summary.presented == 7_200 && summary.discarded == 0 && summary.droppedRefreshes == 0,
            "\(summary.presented) presented, \(summary.discarded) discarded, \(summary.droppedRefreshes) dropped")
        let repeats = reports.filter { $0.intervalRefreshes == 2 }.count
        #expect((3...4).contains(repeats), "\(repeats) frames shown 2 refreshes after the one before")
    }
}
