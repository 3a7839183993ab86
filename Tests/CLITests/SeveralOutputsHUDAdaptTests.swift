import CadenceCore
import CadenceSession
import Foundation
import KMSDisplay
import Testing

@testable import cadence

/// `--hud` and `--adapt` over several outputs (the two-CRTC profile: eDP-1 at 60 Hz, DP-1 at
/// 144 Hz): the outputs run through the same library path as one (`OutputGroupRun`), so each
/// output draws its own HUD and adapts its own rate.
@Suite(.serialized) struct SeveralOutputsHUDAdaptTests {
    func object(_ text: String) throws -> [String: Any] {
        let o = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return try #require(o, "not a JSON object: \(text.prefix(300))")
    }

    @Test func eachOutputDrawsItsOwnHUD() throws {
        let cmd = try RunCommand.parse([
            "--backend", "fake-drm:two-crtc", "--connector", "all", "--scene", "flash", "--hud",
            "--frames", "60", "--inject-late", "DP-1=20:2", "--quiet"
        ])
        var huds: [String: HUDSink] = [:]
        let results = try cmd.paceSeveral { d, _, out in
            huds[d.output.connector.name] = out.sinks.compactMap { $0 as? HUDSink }.first
        }
        #expect(results.map(\.name) == ["eDP-1", "DP-1"])
        // Each output's HUD is fed by its own frames: DP-1's late frame is on DP-1's only.
        for (name, refresh, dropped) in [("eDP-1", 60.0, 0), ("DP-1", 144.0, 2)] {
            let stats = try #require(huds[name]?.stats, "\(name)")
            #expect(abs(stats.refreshHz - refresh) < 0.01 && stats.droppedRefreshes == dropped, "\(name): \(stats)")
            #expect(stats.presentedFrames > 50, "\(name): \(stats.presentedFrames)")
        }
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let solid = try cadence(
            [
                "run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--scene", "solid", "--hud",
                "--frames", "30", "--quiet"
            ], in: dir)
        #expect(solid.status == 2 && solid.err.contains("--hud needs a scene"), "\(solid.err)")
    }

    @Test func eachOutputAdaptsItsOwnRate() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--scene", "solid", "--adapt",
                "--render-cost", "100-199:20", "--frames", "400", "--log", "run.jsonl", "--json", "--quiet"
            ], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let outputs = try #require(try object(r.out)["outputs"] as? [[String: Any]])
        #expect(outputs.map { $0["output"] as? String } == ["eDP-1", "DP-1"])
        for (o, refresh) in zip(outputs, [60.0, 144.0]) {
            let name = o["output"] as? String ?? "?"
            // 20 ms renders miss at 60 and 144 Hz: each output steps its own rate down (and back up after).
            #expect((o["rateSwitches"] as? Int ?? 0) >= 2, "\(name): \(o)")
            let text = try String(contentsOfFile: dir + "/run.\(name).jsonl", encoding: .utf8)
            let switches = try lines(text).map { try object(String($0)) }.filter {
                $0["record"] as? String == "rate-switch"
            }
            let first = try #require(switches.first, "\(name)")
            #expect(first["direction"] as? String == "down", "\(name): \(first)")
            #expect(abs((first["fromHz"] as? Double ?? 0) - refresh) < 0.01, "\(name): \(first)")
        }
    }
}
