import CadenceSession
import Foundation
import Testing
@testable import cadence

/// `cadence measure --connector A --connector B` / `--connector all`: several outputs measured at
/// once, on one card (the two-CRTC profile: eDP-1 at 60 Hz, DP-1 at 144 Hz) and on two cards
/// (`fake-drm:PROFILE,PROFILE`), virtual time.
@Suite(.serialized) struct MeasureSeveralTests {
    func outputs(_ text: String) throws -> [[String: Any]] {
        let top = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text.prefix(300))")
        return try #require(top["outputs"] as? [[String: Any]])
    }

    @Test func eachOutputOfOneCardIsMeasuredAtItsOwnRate() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["measure", "--backend", "fake-drm:two-crtc", "--connector", "all", "--duration", "2", "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let o = try outputs(r.out)
        #expect(o.map { $0["output"] as? String } == ["eDP-1", "DP-1"])
        #expect(o.map { $0["connector"] as? String } == ["eDP-1", "DP-1"])
        let hz = o.compactMap { $0["measuredRefreshHz"] as? Double }
        #expect(hz.count == 2 && abs(hz[0] - 60) < 0.001 && abs(hz[1] - 144) < 0.001, "\(hz)")
        // Two seconds of flips at every vblank of each, none missed.
        let flips = o.compactMap { $0["flips"] as? Int }
        #expect(flips.count == 2 && (119...121).contains(flips[0]) && (287...289).contains(flips[1]), "\(flips)")
        #expect(o.allSatisfy { $0["missedVblanks"] as? Int == 0 && $0["checksPassed"] as? Bool == true && $0["vblank"] as? String == "hardware" })
        // The text form: one block per output, in the order named.
        let t = try cadence(["measure", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--connector", "eDP-1", "--duration", "1"], in: dir)
        #expect(t.status == 0, "\(t.err)")
        let heads = lines(t.out).filter { $0.hasPrefix("/dev/dri/") }
        #expect(heads.count == 2 && heads[0].contains(" DP-1 2560x1440") && heads[1].contains(" eDP-1 1920x1080"), "\(t.out)")
    }

    @Test func outputsOnTwoCardsAreNamedWithTheirCard() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["measure", "--backend", "fake-drm:two-crtc,vkms", "--connector", "card1-Virtual-1", "--connector", "card0-DP-1",
                             "--duration", "1", "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let o = try outputs(r.out)
        #expect(o.map { $0["output"] as? String } == ["card1-Virtual-1", "card0-DP-1"])
        #expect(o.map { $0["device"] as? String } == ["/dev/dri/card1", "/dev/dri/card0"])
        let hz = o.compactMap { $0["measuredRefreshHz"] as? Double }
        #expect(hz.count == 2 && abs(hz[0] - 60.0038) < 0.001 && abs(hz[1] - 144) < 0.001, "\(hz)")
        // One card-named connector measures that card's output alone.
        let one = try cadence(["measure", "--backend", "fake-drm:two-crtc,vkms", "--connector", "card1-Virtual-1", "--duration", "1", "--json"], in: dir)
        #expect(one.status == 0, "\(one.err)")
        let j = try #require(try JSONSerialization.jsonObject(with: Data(one.out.utf8)) as? [String: Any])
        #expect(j["device"] as? String == "/dev/dri/card1" && j["connector"] as? String == "Virtual-1", "\(one.out)")
    }

    /// A check that fails on one output fails the run (exit 1), names that output only, and
    /// still reports every output.
    @Test func aFailedCheckOnOneOutputNamesIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let vkms = try FakeDRMProfileFile.locate("vkms")
        let data = try #require(FileManager.default.contents(atPath: vkms))
        var profile = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var timing = profile["cadence"] as? [String: Any] ?? [:]
        timing["vblankJitterUs"] = 400
        profile["cadence"] = timing
        try JSONSerialization.data(withJSONObject: profile).write(to: URL(fileURLWithPath: dir + "/jittery.json"))
        let r = try cadence(["measure", "--backend", "fake-drm:vkms,\(dir)/jittery.json", "--connector", "all", "--duration", "1", "--json"], in: dir)
        #expect(r.status == 1, "\(r.err)")
        let o = try outputs(r.out)
        #expect(o.map { $0["checksPassed"] as? Bool } == [true, false], "\(r.out)")
        let failed = lines(r.err).filter { $0.hasPrefix("check failed:") }
        #expect(!failed.isEmpty && failed.allSatisfy { $0.hasPrefix("check failed: card1-Virtual-1: ") }, "\(r.err)")
    }

    @Test func badRequestsAreOneLineAndExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["measure", "--backend", "fake-drm:two-crtc", "--duration", "1"]
        let cases: [([String], String)] = [
            (["--connector", "all", "--vrr", "on"], "--vrr with several outputs: sweep one --connector at a time"),
            (["--connector", "all", "--connector", "DP-1"], "'all' cannot be combined"),
            (["--connector", "DP-1", "--connector", "DP-1"], "connector DP-1 is given twice"),
            (["--connector", "DP-1", "--connector", "HDMI-A-9"], "no connector named HDMI-A-9"),
            (["--connector", "card3-DP-1", "--connector", "DP-1"], "no such device: /dev/dri/card3"),
            (["--device", "/dev/dri/card0", "--connector", "card1-DP-1"], "connector card1-DP-1 is on /dev/dri/card1, not on the device given (/dev/dri/card0)"),
        ]
        for (args, message) in cases {
            let r = try cadence(base + args, in: dir)
            #expect(r.status == 2 && lines(r.err).filter { !$0.hasPrefix("notice:") }.count == 1 && r.err.contains(message), "\(args): \(r.err)")
        }
    }
}
