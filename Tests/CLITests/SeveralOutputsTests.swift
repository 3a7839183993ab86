import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Testing
@testable import cadence

/// Several outputs of one device at once, on the two-CRTC profile (eDP-1 1920x1080@60 on CRTC
/// 70, DP-1 2560x1440@144 on CRTC 71; virtual time): the library (``KMSDisplay/openOutputs``,
/// ``PacingGroup``) and `cadence run --connector A --connector B` / `--connector all`.
@Suite(.serialized) struct SeveralOutputsTests {
    func object(_ text: String) throws -> [String: Any] {
        let o = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return try #require(o, "not a JSON object: \(text.prefix(300))")
    }

    /// The two-CRTC profile with its encoders limited to CRTC index 0 (`possible_crtcs` 1), written to `dir`.
    func oneCRTCProfile(in dir: String) throws -> String {
        let path = try FakeDRMProfileFile.locate("two-crtc")
        let data = try #require(FileManager.default.contents(atPath: path))
        var top = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var card = try #require(top["/dev/dri/card0"] as? [String: Any])
        var encoders = try #require(card["encoders"] as? [[String: Any]])
        for i in encoders.indices { encoders[i]["possible_crtcs"] = 1; encoders[i]["crtc_id"] = 0 }
        card["encoders"] = encoders
        var conns = try #require(card["connectors"] as? [[String: Any]])
        for i in conns.indices { conns[i]["encoder_id"] = 0 }
        card["connectors"] = conns
        top["/dev/dri/card0"] = card
        let out = dir + "/one-crtc.json"
        try JSONSerialization.data(withJSONObject: top).write(to: URL(fileURLWithPath: out))
        return out
    }

    // MARK: Library

    @Test func eachOutputRunsAtItsOwnRateOnItsOwnCRTC() throws {
        let fake = try FakeDRMProfileFile.load("two-crtc").makeDevice(wallClock: false, seed: 0)
        let dev = try DRMDevice.open(fake: fake)
        let displays = try KMSDisplay.openOutputs(on: dev, connectors: ["eDP-1", "DP-1"])
        #expect(displays.map(\.crtcID) == [70, 71])
        #expect(dev.routesEvents)
        var config = RunConfiguration()
        config.duration = 2_000_000_000
        config.commitMargin = 1_000_000
        var frames: [[FrameReport]] = [[], []]
        var runs: [PacingRun] = []
        for (i, d) in displays.enumerated() {
            let run = try PacingRun(backend: d, configuration: config)
            run.onFrame = { frames[i].append($0) }
            runs.append(run)
        }
        let summaries = try PacingGroup(runs: runs).run()
        for d in displays { try d.close() }
        // Two seconds at 60 and at 144 Hz, every frame on time on its own CRTC.
        #expect(abs(summaries[0].refreshHz - 60) < 0.01 && abs(summaries[1].refreshHz - 144) < 0.01)
        #expect((119...121).contains(summaries[0].presented), "\(summaries[0].presented)")
        #expect((287...289).contains(summaries[1].presented), "\(summaries[1].presented)")
        #expect(summaries.allSatisfy { $0.droppedRefreshes == 0 && $0.late == 0 && $0.discarded == 0 })
        #expect(abs(summaries[0].intervalMs.mean - 1000.0 / 60) < 0.01 && abs(summaries[1].intervalMs.mean - 1000.0 / 144) < 0.01)
        #expect(frames[0].allSatisfy { $0.crtc == 70 } && frames[1].allSatisfy { $0.crtc == 71 })
        #expect(frames[0].dropFirst().allSatisfy { $0.intervalRefreshes == 1 } && frames[1].dropFirst().allSatisfy { $0.intervalRefreshes == 1 })
        // The fake device completed flips on both CRTCs.
        #expect(fake.flipCompletions.contains { $0.crtc.rawValue == 70 } && fake.flipCompletions.contains { $0.crtc.rawValue == 71 })
    }

    @Test func aLateFrameOnOneOutputIsNotADropOnTheOther() throws {
        // Late frames on either output: 2 refreshes at 144 Hz (10.4 ms of rendering), and 3 at
        // 60 Hz (41.7 ms, six DP-1 refreshes: DP-1 is served while eDP-1 renders).
        for lateOn in [1, 0] {
            let fake = try FakeDRMProfileFile.load("two-crtc").makeDevice(wallClock: false, seed: 0)
            let displays = try KMSDisplay.openOutputs(on: DRMDevice.open(fake: fake), connectors: ["eDP-1", "DP-1"])
            var plain = RunConfiguration()
            plain.duration = 2_000_000_000
            plain.commitMargin = 1_000_000
            var late = plain
            late.injectLate = lateOn == 1 ? [100: 2, 200: 1] : [30: 3, 80: 2]
            let group = PacingGroup(runs: try (0..<2).map { try PacingRun(backend: displays[$0], configuration: $0 == lateOn ? late : plain) })
            let s = try group.run()
            for d in displays { try d.close() }
            let other = s[1 - lateOn]
            #expect(other.droppedRefreshes == 0 && other.dropEvents == 0 && other.late == 0, "late on \(lateOn): \(other)")
            #expect(s[lateOn].droppedRefreshes == (lateOn == 1 ? 3 : 5) && s[lateOn].dropEvents == 2 && s[lateOn].causes == ["render-late": 2],
                    "late on \(lateOn): \(s[lateOn])")
        }
    }

    @Test func eventsOfAnotherCRTCAreKeptForIt() throws {
        let fake = try FakeDRMProfileFile.load("two-crtc").makeDevice(wallClock: false, seed: 0)
        let displays = try KMSDisplay.openOutputs(on: DRMDevice.open(fake: fake), connectors: ["eDP-1", "DP-1"])
        let dev = displays[0].device
        let a = displays[0].output, b = displays[1].output
        // A vblank event requested for DP-1 is read while eDP-1 waits: kept for DP-1, and the
        // wait returns at once (50 ms were allowed; DP-1's next vblank is within 7 ms).
        let start = dev.monotonicNow()
        let seq = try dev.crtcSequence(b.crtc).sequence
        _ = try dev.queueSequence(b.crtc, seq + 1, userData: DRMDevice.routingTag(crtcIndex: b.crtcIndex) | 7)
        var events: [DRMEvent] = []
        try dev.readEvents(for: a.crtc, until: start + 50_000_000, into: &events)
        #expect(events.isEmpty && dev.hasRoutedEvents(for: b.crtc) && !dev.hasRoutedEvents(for: a.crtc))
        #expect(dev.monotonicNow() - start < 7_000_000)
        // DP-1's read returns it without waiting.
        let before = dev.monotonicNow()
        try dev.readEvents(for: b.crtc, until: before + 50_000_000, into: &events)
        #expect(events.count == 1 && events.first?.userData == DRMDevice.routingTag(crtcIndex: 1) | 7 && events.first?.sequence == seq + 1)
        #expect(dev.monotonicNow() == before && !dev.hasRoutedEvents(for: b.crtc))
        #expect(events.first.flatMap { dev.owner(of: $0) } == b.crtc)
        // An event whose CRTC cannot be told (no tag, no crtc_id) goes to whoever reads it.
        events.removeAll()
        _ = try dev.queueSequence(a.crtc, try dev.crtcSequence(a.crtc).sequence + 1, userData: 5)
        try dev.readEvents(for: b.crtc, until: dev.monotonicNow() + 50_000_000, into: &events)
        #expect(events.map(\.userData) == [5])
        for d in displays { try d.close() }
    }

    /// Unplugging one output ends its run with "disconnected"; the other goes on to the end with
    /// no drops, whichever output's wait took the uevent.
    @Test(arguments: ["eDP-1", "DP-1"]) func anUnpluggedOutputEndsAloneWhileTheOtherGoesOn(unplug: String) throws {
        let fake = try FakeDRMProfileFile.load("two-crtc").makeDevice(wallClock: false, seed: 0)
        let displays = try KMSDisplay.openOutputs(on: DRMDevice.open(fake: fake), connectors: ["eDP-1", "DP-1"])
        #expect(displays.allSatisfy { $0.watchesHotplug })
        let gone = try #require(displays.firstIndex { $0.output.connector.name == unplug })
        fake.scheduleConnector(displays[gone].output.connector.id, status: .disconnected, at: displays[0].now() + 500_000_000)
        var config = RunConfiguration()
        config.duration = 1_500_000_000
        config.commitMargin = 1_000_000
        var runs: [PacingRun] = []
        for d in displays { runs.append(try PacingRun(backend: d, configuration: config)) }
        let s = try PacingGroup(runs: runs).run()
        for d in displays { try? d.close() }
        let other = s[1 - gone]
        #expect(s[gone].endReason == "disconnected: connector \(unplug) disconnected", "\(s[gone].endReason)")
        #expect(other.endReason == "completed" && other.droppedRefreshes == 0 && other.durationSeconds > 1.4, "\(other)")
    }

    @Test func crtcAssignment() throws {
        // Kuhn's matching: the second row can only use 0, so the first moves to 1.
        #expect(CRTCAssignment.matching([[0, 1], [0]]) == [1, 0])
        #expect(CRTCAssignment.matching([[0], [0]]) == nil)
        // The second connector's preferred CRTC 1 is taken: the first moves to its other choice.
        #expect(CRTCAssignment.matching([[1, 0], [1, 0], [2]]) == [0, 1, 2])
        #expect(CRTCAssignment.matching([[0, 1, 2], [0, 1, 2], [0, 1, 2], [0, 1, 2]]) == nil)
        #expect(CRTCAssignment.matching([]) == [])
    }

    // MARK: CLI

    @Test func runTwoConnectorsPrintsPerOutputSummariesAndATotal() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "eDP-1", "--connector", "DP-1",
                             "--scene", "solid", "--duration", "2", "--inject-late", "DP-1=100:2", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("output            eDP-1  CRTC 70 (index 0)  1920x1080@60"), "\(r.out)")
        #expect(r.out.contains("output            DP-1  CRTC 71 (index 1)  2560x1440@144"), "\(r.out)")
        let dropped = lines(r.out).filter { $0.hasPrefix("dropped ") }
        #expect(dropped.count == 2 && dropped[0].contains("0 refreshes in 0 events") && dropped[1].contains("2 refreshes in 1 events"), "\(r.out)")
        #expect(lines(r.out).last?.hasPrefix("total             2 outputs") == true, "\(r.out)")

        let j = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--scene", "solid", "--frames", "120",
                             "--inject-late", "eDP-1=50:1", "--json", "--quiet"], in: dir)
        #expect(j.status == 0, "\(j.err)")
        let top = try object(j.out)
        let outs = try #require(top["outputs"] as? [[String: Any]])
        #expect(outs.map { $0["connector"] as? String } == ["eDP-1", "DP-1"])
        #expect(outs.map { $0["crtc"] as? Int } == [70, 71])
        #expect(outs.map { $0["droppedRefreshes"] as? Int } == [1, 0], "\(j.out)")
        // DP-1 finishes 1.2 s before eDP-1: its last frame is still confirmed when shown.
        #expect(outs.map { $0["presented"] as? Int } == [120, 120] && outs.map { $0["unconfirmed"] as? Int } == [0, 0], "\(j.out)")
        let dpMean = try #require((outs[1]["intervalMs"] as? [String: Any])?["mean"] as? Double)
        #expect(abs(dpMean - 1000.0 / 144) < 0.01, "\(dpMean)")
        let total = try #require(top["total"] as? [String: Int])
        #expect(total["frames"] == 240 && total["droppedRefreshes"] == 1 && total["outputs"] == 2, "\(total)")
    }

    @Test func oneConnectorKeepsTodaysOutput() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--scene", "solid", "--frames", "60", "--quiet"], in: dir)
        #expect(r.status == 0 && r.out.hasPrefix("backend           fake DRM device") && !r.out.contains("output ") && !r.out.contains("total "), "\(r.out)")
        // The plain --inject-late form means the one output; NAME= must name it.
        let ok = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--scene", "solid", "--frames", "60",
                              "--inject-late", "DP-1=10:1", "--quiet"], in: dir)
        #expect(ok.status == 0 && ok.out.contains("dropped           1 refreshes in 1 events"), "\(ok.out) \(ok.err)")
        let other = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--scene", "solid", "--frames", "60",
                                 "--inject-late", "eDP-1=10:1", "--quiet"], in: dir)
        #expect(other.status == 2 && lines(other.err).count == 1 && other.err.contains("not eDP-1"), "\(other.err)")
    }

    @Test func badConnectorListsAreOneLineAndExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["run", "--backend", "fake-drm:two-crtc", "--scene", "solid", "--frames", "30", "--quiet"]
        let cases: [([String], String)] = [
            (["--connector", "DP-1", "--connector", "DP-1"], "connector DP-1 is given twice"),
            (["--connector", "eDP-1", "--connector", "HDMI-A-9"], "no connector named HDMI-A-9"),
            (["--connector", "all", "--connector", "DP-1"], "'all' cannot be combined"),
            (["--connector", "eDP-1", "--connector", "DP-1", "--inject-late", "HDMI-A-1=5:1"], "HDMI-A-1 is not one of the outputs"),
            (["--connector", "eDP-1", "--connector", "DP-1", "--metrics-textfile", dir + "/x.prom"], "--metrics-port/--metrics-textfile is not supported with several outputs"),
        ]
        for (args, message) in cases {
            let r = try cadence(base + args, in: dir)
            #expect(r.status == 2 && lines(r.err).count == 1 && r.err.contains(message), "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args): \(r.out)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.prom"))
        let fake = try cadence(["run", "--backend", "fake", "--connector", "all", "--frames", "30", "--quiet"], in: dir)
        #expect(fake.status == 2 && lines(fake.err).count == 1 && fake.err.contains("several outputs need a KMS display"), "\(fake.err)")
        // Two connectors whose encoders can only use the same CRTC.
        let profile = try oneCRTCProfile(in: dir)
        let same = try cadence(["run", "--backend", "fake-drm:" + profile, "--connector", "eDP-1", "--connector", "DP-1",
                                "--scene", "solid", "--frames", "30", "--quiet"], in: dir)
        #expect(same.status == 2 && lines(same.err).count == 1 && same.err.contains("cannot all be driven at once"), "\(same.err)")
        // Each of them alone still runs on that CRTC.
        let alone = try cadence(["run", "--backend", "fake-drm:" + profile, "--connector", "DP-1", "--scene", "solid", "--frames", "30", "--quiet"], in: dir)
        #expect(alone.status == 0, "\(alone.err)")
    }

    @Test func modePerOutputWinsOverTheCommonOne() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // DP-1 offers 2560x1440 at 144 (preferred) and 60 Hz: NAME= moves only DP-1 to 60 Hz.
        let r = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--mode", "DP-1=2560x1440@60",
                             "--scene", "solid", "--frames", "60", "--json", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let outs = try #require(try object(r.out)["outputs"] as? [[String: Any]])
        let means = outs.compactMap { ($0["intervalMs"] as? [String: Any])?["mean"] as? Double }
        #expect(means.count == 2 && means.allSatisfy { abs($0 - 1000.0 / 60) < 0.02 }, "\(means)")
        // A common mode eDP-1 has, with DP-1's own mode on top: each output at its own.
        let both = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--mode", "1920x1080@60",
                                "--mode", "DP-1=2560x1440@144", "--scene", "solid", "--frames", "30", "--quiet"], in: dir)
        #expect(both.status == 0 && both.out.contains("eDP-1  CRTC 70 (index 0)  1920x1080@60")
                && both.out.contains("DP-1  CRTC 71 (index 1)  2560x1440@144"), "\(both.out) \(both.err)")
        // One output named with NAME=: that output's mode; any other name is refused.
        let one = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--mode", "DP-1=2560x1440@60",
                               "--scene", "solid", "--frames", "30", "--json", "--quiet"], in: dir)
        let oneMean = try #require((try object(one.out)["intervalMs"] as? [String: Any])?["mean"] as? Double)
        #expect(one.status == 0 && abs(oneMean - 1000.0 / 60) < 0.02, "\(one.out) \(one.err)")
        let base = ["run", "--backend", "fake-drm:two-crtc", "--scene", "solid", "--frames", "30", "--quiet"]
        let cases: [([String], String)] = [
            (["--connector", "all", "--mode", "HDMI-A-1=1920x1080"], "a mode is given for HDMI-A-1, which is not one of the outputs (eDP-1, DP-1)"),
            (["--connector", "all", "--mode", "DP-1=big"], "invalid mode 'big'"),
            (["--connector", "all", "--mode", "DP-1=2560x1440", "--mode", "DP-1=2560x1440@60"], "--mode DP-1=…: given twice"),
            (["--connector", "all", "--mode", "1920x1080", "--mode", "2560x1440"], "--mode is given twice (1920x1080, 2560x1440)"),
            (["--connector", "all", "--mode", "=1920x1080"], "give NAME=WxH[@HZ]"),
            (["--connector", "DP-1", "--mode", "eDP-1=1920x1080"], "this run drives DP-1, not several outputs"),
            (["--mode", "DP-1=2560x1440@60"], "this run drives the first connected connector"),
        ]
        for (args, message) in cases {
            let e = try cadence(base + args, in: dir)
            #expect(e.status == 2 && lines(e.err).count == 1 && e.err.contains(message), "\(args): \(e.err)")
            #expect(e.out.isEmpty, "\(args): \(e.out)")
        }
    }

    @Test func allWithOneConnectedRunsThatOne() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake-drm", "--connector", "all", "--scene", "solid", "--frames", "60", "--json", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let outs = try #require(try object(r.out)["outputs"] as? [[String: Any]])
        #expect(outs.count == 1 && outs[0]["connector"] as? String == "Virtual-1" && outs[0]["frames"] as? Int == 60, "\(r.out)")
    }

    @Test func logsOneFilePerOutputWithConnectorAndCRTCOnEveryFrame() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(SessionOutputs.path("run.jsonl", for: "DP-1") == "run.DP-1.jsonl")
        #expect(SessionOutputs.path("a.b/run", for: "DP-1") == "a.b/run.DP-1")
        let r = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "eDP-1", "--connector", "DP-1", "--scene", "solid",
                             "--frames", "90", "--inject-late", "DP-1=40:1", "--log", "run.jsonl", "--csv", "run.csv", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(files(in: dir) == ["run.DP-1.csv", "run.DP-1.jsonl", "run.eDP-1.csv", "run.eDP-1.jsonl"], "\(files(in: dir))")
        for (name, crtc, dropped) in [("eDP-1", 70, 0), ("DP-1", 71, 1)] {
            let text = try String(contentsOfFile: dir + "/run.\(name).jsonl", encoding: .utf8)
            let records = try lines(text).map { try object(String($0)) }
            #expect(records.first?["record"] as? String == "run" && records.first?["connector"] as? String == name)
            let frames = records.filter { $0["frame"] != nil }
            #expect(frames.count == 90 && frames.allSatisfy { $0["connector"] as? String == name && $0["crtc"] as? Int == crtc }, "\(name)")
            #expect(frames.reduce(0) { $0 + ($1["droppedRefreshes"] as? Int ?? 0) } == dropped, "\(name)")
            // Each file is a complete run log: replay reproduces its summary.
            let replay = try cadence(["replay", "run.\(name).jsonl"], in: dir)
            #expect(replay.status == 0, "\(name): \(replay.out) \(replay.err)")
        }
    }

    @Test func validateJudgesEachOutputAndNamesIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["validate", "--backend", "fake-drm:two-crtc", "--connector", "eDP-1", "--connector", "DP-1", "--scene", "solid",
                    "--duration", "1", "--max-dropped", "0", "--refresh-tolerance", "0.5", "--quiet"]
        let pass = try cadence(base, in: dir)
        #expect(pass.status == 0, "\(pass.out) \(pass.err)")
        let passLines = lines(pass.out).filter { $0.hasPrefix("PASS ") }
        #expect(passLines.count == 4 && passLines.filter { $0.hasPrefix("PASS eDP-1 ") }.count == 2 && passLines.filter { $0.hasPrefix("PASS DP-1 ") }.count == 2, "\(pass.out)")
        #expect(lines(pass.out).last?.hasPrefix("validate: PASS (4 criteria)") == true, "\(pass.out)")
        // A late frame on DP-1 fails DP-1 only; the run exits 1.
        let fail = try cadence(base + ["--inject-late", "DP-1=50:2"], in: dir)
        #expect(fail.status == 1, "\(fail.out) \(fail.err)")
        #expect(fail.out.contains("FAIL DP-1 max-dropped: dropped refreshes 2 (limit 0)") && !fail.out.contains("FAIL eDP-1"), "\(fail.out)")
        #expect(lines(fail.out).contains { $0.hasPrefix("PASS eDP-1 max-dropped: dropped refreshes 0") }, "\(fail.out)")
        #expect(lines(fail.out).last?.hasPrefix("validate: FAIL (1 of 4 criteria)") == true, "\(fail.out)")
        #expect(lines(fail.err) == ["FAIL DP-1 max-dropped: dropped refreshes 2 (limit 0)"], "\(fail.err)")
        // Bad input is one line, exit 2.
        // --junit: one suite per output, each with its criteria and its own summary.
        let junit = try cadence(base + ["--inject-late", "DP-1=50:2", "--junit", "v.xml"], in: dir)
        #expect(junit.status == 1, "\(junit.err)")
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("<testsuites tests=\"4\" failures=\"1\""), "\(xml)")
        #expect(xml.contains("<testsuite name=\"cadence.validate.eDP-1\" tests=\"2\" failures=\"0\""), "\(xml)")
        #expect(xml.contains("<testsuite name=\"cadence.validate.DP-1\" tests=\"2\" failures=\"1\""), "\(xml)")
        #expect(xml.contains("<testcase classname=\"cadence.validate.DP-1\" name=\"max-dropped\">\n      <failure message=\"dropped refreshes 2 (limit 0)\""), "\(xml)")
        #expect(xml.components(separatedBy: "virtual time), refresh 144.000 Hz, effective").count == 2
                && xml.components(separatedBy: "virtual time), refresh 60.000 Hz, effective").count == 2, "\(xml)")
        let expectMonitor = try cadence(base + ["--expect-monitor", "X"], in: dir)
        #expect(expectMonitor.status == 2 && lines(expectMonitor.err).count == 1
                && expectMonitor.err.contains("--expect-monitor/--expect-serial/--expect-mode are not supported with several outputs"), "\(expectMonitor.err)")
        let twice = try cadence(base + ["--connector", "DP-1"], in: dir)
        #expect(twice.status == 2 && lines(twice.err).count == 1 && twice.err.contains("given twice"), "\(twice.err)")
    }

    /// SIGINT ends every output: exit 0, each log's end line says "stopped" and counts its frames.
    @Test func sigintStopsEveryOutput() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake-drm:two-crtc", "--fake-clock", "wall", "--connector", "all", "--scene", "solid",
                                    "--duration", "60", "--log", "run.jsonl", "--quiet"], in: dir)
        try waitForLines(dir + "/run.eDP-1.jsonl", 20)
        p.signal(SIGINT)
        let r = p.finish(timeout: 30)
        #expect(r.status == 0, "\(r.err)")
        #expect(lines(r.out).filter { $0.hasPrefix("end               stopped") }.count == 2, "\(r.out)")
        for name in ["eDP-1", "DP-1"] {
            let log = try RunLog.read(path: dir + "/run.\(name).jsonl")
            #expect(log.end?.summary.endReason == "stopped" && log.end?.summary.frames == log.records.count && log.records.count >= 10, "\(name)")
            #expect(log.records.allSatisfy { $0.connector == name })
        }
    }
}
