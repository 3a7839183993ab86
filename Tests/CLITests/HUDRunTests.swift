import CadenceCore
import CadenceSession
import Foundation
import Raster
import Scenes
import Testing
@testable import cadence

/// `cadence run --hud`: the HUD is drawn over the scene and fed by every completed frame.
@Suite(.serialized) struct HUDRunTests {
    /// Runs `cadence run` in-process on the fake display and returns the display (its surface
    /// holds the last rendered frame) and the summary.
    func runFake(_ args: [String]) throws -> (FakeDisplay, RunSummary) {
        let cmd = try RunCommand.parse(["--backend", "fake", "--quiet"] + args)
        var display: FakeDisplay?
        let summary = try cmd.pace(onRun: { run, _ in display = run.backend as? FakeDisplay })
        return (try #require(display), summary)
    }

    /// The pixels of `rect` in the display's surface.
    func pixels(_ d: FakeDisplay, _ rect: IntRect) throws -> [UInt32] {
        let s = try #require(d.surface)
        var out: [UInt32] = []
        for y in rect.minY..<rect.maxY {
            let row = s.base.advanced(by: y * s.stride).assumingMemoryBound(to: UInt32.self)
            for x in rect.minX..<rect.maxX { out.append(row[x] & 0x00FF_FFFF) }
        }
        return out
    }

    @Test func hudIsDrawnOverTheDefaultScene() throws {
        let (plain, plainSummary) = try runFake(["--frames", "90"])
        let (hud, hudSummary) = try runFake(["--frames", "90", "--hud"])
        let s = try #require(hud.surface)
        let rect = HUD.frame(width: s.width, height: s.height)
        let a = try pixels(plain, rect), b = try pixels(hud, rect)
        let differing = zip(a, b).filter { $0 != $1 }.count
        // The panel covers its rectangle: most of it differs from the bare scene.
        #expect(differing > a.count / 2, "\(differing) of \(a.count) pixels differ")
        // Outside the panel the frame is the same scene.
        let below = IntRect(x: 0, y: rect.maxY + 8, width: s.width, height: 16)
        #expect(try pixels(plain, below) == pixels(hud, below))
        // Drawing the HUD does not change the pacing (virtual time).
        #expect(plainSummary.presented == 90 && hudSummary.presented == 90)
        #expect(hudSummary.droppedRefreshes == 0)
    }

    @Test func hudStateCountsDropsAndIntervals() throws {
        let h = HUDSink()
        var r = FrameReport()
        h.frame(r)  // before the first render: ignored
        #expect(h.stats == nil)
        h.stats = HUDStats(refreshHz: 60)
        r.outcome = .late
        r.droppedRefreshes = 3
        r.interval = 66_666_667
        h.frame(r)
        r.outcome = .discarded
        r.droppedRefreshes = 1
        r.interval = 0
        h.frame(r)
        let st = try #require(h.stats)
        #expect(st.droppedRefreshes == 4)
        #expect(st.presentedFrames == 1)
        #expect(abs(st.currentFPS - 15) < 1e-6)
    }

    /// The run's drops reach the HUD: its drop figure turns red (0xFF6B5B) once a refresh
    /// was dropped, and never without drops.
    @Test func injectedDropsReachTheHUD() throws {
        let red: UInt32 = 0xFF6B5B
        let (clean, _) = try runFake(["--frames", "60", "--hud"])
        let (late, summary) = try runFake(["--frames", "60", "--hud", "--inject-late", "20:2"])
        #expect(summary.droppedRefreshes == 2)
        let s = try #require(late.surface)
        let rect = HUD.frame(width: s.width, height: s.height)
        #expect(try !pixels(clean, rect).contains(red))
        #expect(try pixels(late, rect).contains(red))
    }

    @Test func hudNeedsAScene() throws {
        let cmd = try RunCommand.parse(["--backend", "fake", "--scene", "solid", "--hud", "--frames", "10"])
        #expect(throws: CLIFailure.self) { _ = try cmd.pace() }
        let solid = try RunCommand.parse(["--backend", "fake", "--scene", "solid", "--frames", "30", "--quiet"])
        #expect(try solid.pace().presented == 30)
    }
}
