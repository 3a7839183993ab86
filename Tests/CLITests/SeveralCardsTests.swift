import CadenceCore
import CadenceReport
import DRM
import Foundation
import KMSDisplay
import Testing
@testable import cadence

/// Outputs on several cards in one run (a laptop panel and a USB dock): two fake devices,
/// card0 playing the two-CRTC profile (eDP-1 at 60 Hz on CRTC 70, DP-1 at 144 Hz on CRTC 71)
/// and card1 playing vkms (Virtual-1 at 60.0038 Hz on CRTC 35), each on its own virtual clock.
/// The library (``OutputAddress``, ``KMSDisplay/openOutputs(connectors:device:source:mode:modes:allocator:api:vrr:rate:)``,
/// ``PacingGroup/runTogether(_:shouldStop:)``) and `cadence run`/`validate`/`list` with
/// `--backend fake-drm:two-crtc,vkms`.
@Suite(.serialized) struct SeveralCardsTests {
    static let backend = "fake-drm:two-crtc,vkms"

    func source() throws -> DeviceSource {
        .fake(try BackendChoice.fakeDRMDevices(Self.backend))
    }

    // MARK: Library

    @Test(arguments: [
        ("card1-HDMI-A-1", "card1", "HDMI-A-1"), ("card12-DP-1", "card12", "DP-1"), ("card0-Virtual-1", "card0", "Virtual-1"),
        ("HDMI-A-1", nil, "HDMI-A-1"), ("card-DP-1", nil, "card-DP-1"), ("cardX-DP-1", nil, "cardX-DP-1"),
        ("card1-", nil, "card1-"), ("card1", nil, "card1"), ("card1x-DP-1", nil, "card1x-DP-1"), ("", nil, ""),
    ] as [(String, String?, String)])
    func outputAddressReadsTheCardOnlyFromCardDigitsDash(text: String, card: String?, connector: String) {
        let a = OutputAddress(text)
        #expect(a.card == card && a.connector == connector, "\(text) → \(String(describing: a.card)) \(a.connector)")
        #expect(a.description == text)
        #expect(a.devicePath == card.map { "/dev/dri/" + $0 })
        #expect(OutputAddress(card: "/dev/dri/card3", connector: "eDP-1").description == "card3-eDP-1")
    }

    @Test func outputsOnTwoCardsOpenInTheOrderNamedOnTheirOwnDevices() throws {
        let displays = try KMSDisplay.openOutputs(connectors: ["card1-Virtual-1", "card0-DP-1", "eDP-1"], source: try source())
        defer { for d in displays { try? d.close() } }
        #expect(displays.map(\.crtcID) == [35, 71, 70])
        #expect(displays.map(\.device.path) == ["/dev/dri/card1", "/dev/dri/card0", "/dev/dri/card0"])
        // One device per card, shared by that card's outputs.
        #expect(displays[1].device === displays[2].device && displays[0].device !== displays[1].device)
        #expect(KMSDisplay.outputNames(displays) == ["card1-Virtual-1", "card0-DP-1", "card0-eDP-1"])
        // On one card the names stay bare.
        #expect(KMSDisplay.outputNames(Array(displays.dropFirst())) == ["DP-1", "eDP-1"])
    }

    @Test func allWithNoDeviceIsEveryConnectedConnectorOfEveryCard() throws {
        let displays = try KMSDisplay.openOutputs(connectors: ["all"], source: try source())
        defer { for d in displays { try? d.close() } }
        #expect(KMSDisplay.outputNames(displays) == ["card0-eDP-1", "card0-DP-1", "card1-Virtual-1"])
        let one = try KMSDisplay.openOutputs(connectors: ["all"], device: "/dev/dri/card1", source: try source())
        defer { for d in one { try? d.close() } }
        #expect(KMSDisplay.outputNames(one) == ["Virtual-1"])
    }

    /// Each card runs on its own thread and its own clock: together they give exactly what each
    /// gives alone, a late frame on one card leaves the other's outputs at 0 drops.
    @Test func cardsRunTogetherExactlyAsEachAlone() throws {
        func runs(_ displays: [KMSDisplay]) throws -> [PacingRun] {
            try displays.map { d in
                var c = RunConfiguration()
                c.duration = 2_000_000_000
                c.commitMargin = 1_000_000
                if d.device.path == "/dev/dri/card1" { c.injectLate = [40: 2, 90: 1] }
                return try PacingRun(backend: d, configuration: c)
            }
        }
        func groups(_ displays: [KMSDisplay]) throws -> [PacingGroup] {
            let card0 = displays.filter { $0.device.path == "/dev/dri/card0" }, card1 = displays.filter { $0.device.path == "/dev/dri/card1" }
            return [PacingGroup(runs: try runs(card0)), PacingGroup(runs: try runs(card1))]
        }
        let together = try KMSDisplay.openOutputs(connectors: ["all"], source: try source())
        let both = try PacingGroup.runTogether(try groups(together))
        for d in together { try d.close() }
        var alone: [[RunSummary]] = []
        for g in try groups(try KMSDisplay.openOutputs(connectors: ["all"], source: try source())) {
            alone.append(try g.run())
            for r in g.runs { try r.backend.close() }
        }
        #expect(both.map { $0.count } == [2, 1])
        for (t, a) in zip(both.joined(), alone.joined()) {
            #expect(t.frames == a.frames && t.presented == a.presented && t.droppedRefreshes == a.droppedRefreshes
                    && t.intervalMs.mean == a.intervalMs.mean && t.onTimeErrorUs?.max == a.onTimeErrorUs?.max, "\(t) vs \(a)")
        }
        #expect(both[0].allSatisfy { $0.droppedRefreshes == 0 && $0.late == 0 }, "\(both[0])")
        #expect(both[1][0].droppedRefreshes == 3 && both[1][0].dropEvents == 2 && both[1][0].causes == ["render-late": 2], "\(both[1][0])")
        #expect(abs(both[0][1].refreshHz - 144) < 0.01 && abs(both[1][0].refreshHz - 60.0038) < 0.001)
    }

    @Test func aStopAskedOnAnyThreadEndsEveryCard() throws {
        let displays = try KMSDisplay.openOutputs(connectors: ["all"], source: try source())
        defer { for d in displays { try? d.close() } }
        let groups = [PacingGroup(runs: try displays.prefix(2).map { try PacingRun(backend: $0, configuration: RunConfiguration()) }),
                      PacingGroup(runs: [try PacingRun(backend: displays[2], configuration: RunConfiguration())])]
        // No frame count or duration: only the stop ends them. Every thread asks it.
        let asked = Counter()
        let s = try PacingGroup.runTogether(groups) { asked.increment() > 2_000 }
        #expect(s.joined().allSatisfy { $0.endReason == "stopped" && $0.frames > 0 }, "\(s)")
    }

    // MARK: CLI

    @Test func runOverTwoCardsNamesEachOutputWithItsCard() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", Self.backend, "--connector", "all", "--scene", "solid", "--duration", "2",
                             "--inject-late", "card1-Virtual-1=50:2", "--log", "run.jsonl", "--json", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let top = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let outs = try #require(top["outputs"] as? [[String: Any]])
        #expect(outs.map { $0["output"] as? String } == ["card0-eDP-1", "card0-DP-1", "card1-Virtual-1"])
        #expect(outs.map { $0["connector"] as? String } == ["eDP-1", "DP-1", "Virtual-1"])
        #expect(outs.map { $0["card"] as? String } == ["/dev/dri/card0", "/dev/dri/card0", "/dev/dri/card1"])
        #expect(outs.map { $0["droppedRefreshes"] as? Int } == [0, 0, 2], "\(r.out)")
        let total = try #require(top["total"] as? [String: Int])
        #expect(total["outputs"] == 3 && total["droppedRefreshes"] == 2)
        for (name, card, crtc) in [("card0-eDP-1", "/dev/dri/card0", 70), ("card0-DP-1", "/dev/dri/card0", 71), ("card1-Virtual-1", "/dev/dri/card1", 35)] {
            let log = try RunLog.read(path: dir + "/run.\(name).jsonl")
            let connector = String(name.split(separator: "-", maxSplits: 1)[1])
            #expect(log.header?.card == card && log.header?.connector == connector && log.header?.crtc == UInt32(crtc), "\(name)")
            #expect(log.end?.summary.frames == log.records.count && log.records.allSatisfy { $0.connector == connector && $0.crtc == UInt32(crtc) }, "\(name)")
        }
        // The text form heads each summary with the output's name.
        let t = try cadence(["run", "--backend", Self.backend, "--connector", "card1-Virtual-1", "--connector", "card0-DP-1",
                             "--scene", "solid", "--frames", "30", "--quiet"], in: dir)
        #expect(t.status == 0, "\(t.err)")
        #expect(lines(t.out).filter { $0.hasPrefix("output ") }.map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] } == ["card1-Virtual-1", "card0-DP-1"], "\(t.out)")
        // One qualified connector is a one-output run on that card.
        let one = try cadence(["run", "--backend", Self.backend, "--connector", "card1-Virtual-1", "--scene", "solid", "--frames", "30",
                               "--inject-late", "card1-Virtual-1=10:1", "--log", "one.jsonl", "--json", "--quiet"], in: dir)
        #expect(one.status == 0, "\(one.err)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(one.out.utf8)) as? [String: Any])
        #expect(o["droppedRefreshes"] as? Int == 1 && o["frames"] as? Int == 30, "\(one.out)")
        #expect(try RunLog.read(path: dir + "/one.jsonl").header?.crtc == 35)
    }

    @Test func namesAcrossCardsAreCheckedInOneLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["run", "--backend", Self.backend, "--scene", "solid", "--frames", "10", "--quiet"]
        let cases: [([String], String)] = [
            (["--connector", "card9-Virtual-1", "--connector", "card0-DP-1"], "no such device: /dev/dri/card9"),
            (["--device", "/dev/dri/card0", "--connector", "card1-Virtual-1", "--connector", "DP-1"],
             "connector card1-Virtual-1 is on /dev/dri/card1, not on the device given (/dev/dri/card0)"),
            (["--connector", "card1-Virtual-1", "--connector", "card1-Virtual-1"], "connector card1-Virtual-1 is given twice"),
            (["--connector", "card0-eDP-1", "--connector", "card1-HDMI-A-1"], "no connector named HDMI-A-1"),
            (["--connector", "all", "--mode", "Virtual-2=800x600"], "a mode is given for Virtual-2, which is not one of the outputs (card0-eDP-1, card0-DP-1, card1-Virtual-1)"),
            (["--connector", "all", "--mode", "card0-Virtual-1=800x600"], "a mode is given for card0-Virtual-1, which is not one of the outputs"),
            (["--connector", "all", "--mode", "DP-1=800x600", "--mode", "card0-DP-1=640x480"], "a mode is given twice for card0-DP-1"),
            (["--connector", "all", "--inject-late", "HDMI-A-1=3:1"], "HDMI-A-1 is not one of the outputs run (card0-eDP-1, card0-DP-1, card1-Virtual-1)"),
        ]
        for (args, message) in cases {
            let r = try cadence(base + args, in: dir)
            #expect(r.status == 2 && lines(r.err).count == 1 && r.err.contains(message), "\(args): \(r.err)")
        }
        // The same connector name on both cards: a bare name is ambiguous.
        let twice = ["run", "--backend", "fake-drm:vkms,vkms", "--connector", "all", "--scene", "solid", "--frames", "10", "--quiet"]
        let inject = try cadence(twice + ["--inject-late", "Virtual-1=3:1"], in: dir)
        #expect(inject.status == 2 && lines(inject.err).count == 1 && inject.err.contains("Virtual-1 is on several cards: name one (card0-Virtual-1, card1-Virtual-1)"), "\(inject.err)")
        let mode = try cadence(twice + ["--mode", "Virtual-1=800x600"], in: dir)
        #expect(mode.status == 2 && lines(mode.err).count == 1 && mode.err.contains("give cardN-Virtual-1"), "\(mode.err)")
        let empty = try cadence(["run", "--backend", "fake-drm:vkms,", "--connector", "all", "--frames", "3"], in: dir)
        #expect(empty.status == 2 && lines(empty.err).count == 1 && empty.err.contains("an empty profile name"), "\(empty.err)")
        // A bare name that only one card has, and per-card modes, are fine.
        let ok = try cadence(base + ["--connector", "all", "--mode", "Virtual-1=800x600", "--mode", "card0-DP-1=1920x1080@60",
                                     "--inject-late", "Virtual-1=5:1", "--json"], in: dir)
        #expect(ok.status == 0, "\(ok.err)")
        let outs = try #require((try JSONSerialization.jsonObject(with: Data(ok.out.utf8)) as? [String: Any])?["outputs"] as? [[String: Any]])
        #expect(outs.map { $0["droppedRefreshes"] as? Int } == [0, 0, 1], "\(ok.out)")
        #expect(outs.map { Int(($0["refreshHz"] as? Double ?? 0).rounded()) } == [60, 60, 60], "\(ok.out)")
    }

    @Test func validateJudgesEachOutputOfEachCard() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", Self.backend, "--connector", "all", "--scene", "solid", "--duration", "2",
                             "--max-dropped", "0", "--inject-late", "card1-Virtual-1=30:2", "--quiet"], in: dir)
        #expect(r.status == 1, "\(r.out) \(r.err)")
        #expect(lines(r.out).contains { $0.hasPrefix("PASS card0-eDP-1 max-dropped") } && lines(r.out).contains { $0.hasPrefix("PASS card0-DP-1 max-dropped") }, "\(r.out)")
        #expect(lines(r.err) == ["FAIL card1-Virtual-1 max-dropped: dropped refreshes 2 (limit 0)"], "\(r.err)")
    }

    @Test func listShowsEveryCardOfTheProfiles() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["list", "--backend", Self.backend, "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let top = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let devices = try #require(top["devices"] as? [[String: Any]])
        #expect(devices.compactMap { $0["path"] as? String } == ["/dev/dri/card0", "/dev/dri/card1"], "\(r.out.prefix(400))")
    }

    /// On the wall clock each card has its own thread; SIGINT ends them all, each log complete.
    @Test func sigintStopsEveryCard() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", Self.backend, "--fake-clock", "wall", "--connector", "all", "--scene", "solid",
                                    "--duration", "60", "--log", "run.jsonl", "--quiet"], in: dir)
        try waitForLines(dir + "/run.card1-Virtual-1.jsonl", 20)
        try waitForLines(dir + "/run.card0-DP-1.jsonl", 20)
        p.signal(SIGINT)
        let r = p.finish(timeout: 30)
        #expect(r.status == 0, "\(r.err)")
        #expect(lines(r.out).filter { $0.hasPrefix("end               stopped") }.count == 3, "\(r.out)")
        for name in ["card0-eDP-1", "card0-DP-1", "card1-Virtual-1"] {
            let log = try RunLog.read(path: dir + "/run.\(name).jsonl")
            #expect(log.end?.summary.endReason == "stopped" && log.end?.summary.frames == log.records.count && log.records.count >= 10, "\(name)")
        }
    }
}

/// A counter several threads add to.
private final class Counter: Sendable {
    private let lock = NSLock()
    private nonisolated(unsafe) var value = 0
    /// Adds one; returns the new count.
    func increment() -> Int { lock.withLock { value += 1; return value } }
}
