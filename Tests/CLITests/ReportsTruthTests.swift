import CadenceCore
import CadenceReport
import Foundation
import Testing

/// `validate`, `report` and `replay` as issue 21 tried them (findings 8–14): each number is the
/// run's own, a plain run replays equal, several outputs give one JSON object and each their own
/// injected lateness, and the smaller edges (profile names, VRR refresh, short windows, help).
@Suite(.serialized) struct ReportsTruthTests {
    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Finding 8: a perfect 60 Hz run judged after a 1 s warm-up measures 60.000 Hz (it said
    /// 60.250 and passed `--min-rate 60.1`); docs/validate.md's windowed example is 59.722 Hz.
    @Test func aWarmupDoesNotOverstateTheRate() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for warmup in ["1", "2", "3"] {
            let r = try cadence(["validate", "--backend", "fake", "--duration", "5", "--warmup", warmup, "--min-rate", "60.1", "--quiet"], in: dir)
            #expect(r.status == 1, "\(warmup): \(r.out)")
            #expect(r.out.contains("\nFAIL min-rate: rate 60.000 Hz measured (minimum 60.100 Hz)\n"), "\(warmup): \(r.out)")
        }
        let w = try cadence(["validate", "--backend", "fake", "--duration", "20", "--inject-late", "100:1,250:3,900:2", "--warmup", "2",
                             "--window", "5", "--max-drop-event", "2", "--min-rate", "59.5", "--quiet"], in: dir)
        #expect(w.status == 1)
        #expect(w.out.contains("judged            1076 frames after a 2 s warm-up (118 ignored), 3 windows of 5 s (the last 3.0 s only overall)\n"))
        #expect(w.out.contains("FAIL min-rate: rate 59.722 Hz measured (minimum 59.500 Hz); worst 5 s window 2.0–7.0 s: rate 59.400 Hz measured (minimum 59.500 Hz) (1 of 3 windows fail)\n"), "\(w.out)")
    }

    /// Finding 9: a plain run on a driver without a vblank interrupt replays equal (frame 0's
    /// on-time error was 0.573 µs in the replay and 999.573 µs live: the commit latency).
    @Test(arguments: ["bochs", "virtio-gpu"]) func aPlainRunWithoutVBlankReplaysEqual(profile: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [[], ["--inject-late", "100:1,250:3"]] {
            let run = try cadence(["run", "--backend", "fake-drm:\(profile)", "--frames", "300", "--log", "b.jsonl", "--json", "--quiet"] + extra, in: dir)
            #expect(run.status == 0, "\(run.err)")
            let live = try JSONDecoder().decode(RunSummary.self, from: Data(run.out.utf8))
            #expect((live.onTimeErrorUs?.max ?? 0) > 999, "frame 0 shows a commit latency after its target")
            let r = try cadence(["replay", "b.jsonl", "--json"], in: dir)
            #expect(r.status == 0, "\(profile) \(extra): \(r.out)")
            let o = try object(r.out)
            #expect(o["equal"] as? Bool == true && (o["differences"] as? [String])?.isEmpty == true, "\(r.out)")
        }
    }

    /// Finding 10: every file of a rotated VRR log replays equal (from the third file on, each
    /// differed by the profile's 40 µs event latency in on-time error, and with injected
    /// lateness in the hitch ratio too).
    @Test func everyFileOfARotatedVRRLogReplaysEqual() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [[], ["--inject-late", "100:2,400:3"]] {
            for f in files(in: dir) { try FileManager.default.removeItem(atPath: dir + "/" + f) }
            let run = try cadence(["run", "--backend", "fake-drm:amdgpu-vrr", "--rate", "0:144:90", "--frames", "600", "--scene", "solid",
                                   "--log", "r.jsonl", "--log-max-size", "64K", "--log-keep", "20", "--quiet"] + extra, in: dir)
            #expect(run.status == 0, "\(run.err)")
            let logs = files(in: dir).filter { $0.hasPrefix("r.jsonl") }
            #expect(logs.count == 7, "\(logs)")
            for log in logs {
                let r = try cadence(["replay", log], in: dir)
                #expect(r.status == 0, "\(extra) \(log): \(r.out)")
                #expect(r.out.contains("summary           equals the recorded one"), "\(extra) \(log): \(r.out)")
            }
        }
    }

    /// Finding 11: `report` of a log with a session gap gives the live summary's measured rate
    /// (59.850 Hz from the mean interval; it said 45.923, 400 frames over the span with the gap).
    @Test func reportOfASessionGapLogEqualsTheLiveSummary() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try cadence(["run", "--backend", "fake", "--fake-session-pause", "1:2", "--frames", "400", "--inject-late", "100:1",
                               "--log", "s.jsonl", "--summary", "s.json", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.err)")
        let live = try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/s.json")))
        #expect(String(format: "%.4f", live.measuredRateHz) == "59.8496")
        #expect(LogAnalysis.summary(of: try RunLog.read(path: dir + "/s.jsonl")) == live)
        let r = try cadence(["report", "s.jsonl", "--output", "s.html"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let html = try String(contentsOfFile: dir + "/s.html", encoding: .utf8)
        #expect(html.contains("<tr><th>measured rate (Hz)</th><td>59.850</td></tr>"))
        #expect(html.contains("<tr><th>session gaps</th><td>1 (2.000 s away; no drops counted inside)</td></tr>"))
    }

    /// Finding 12: `validate --json` over several outputs prints exactly one JSON object, each
    /// output with its summary and criteria, and a total with the verdict.
    @Test func validateJSONOverSeveralOutputsIsOneObject() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake-drm:two-crtc", "--connector", "all", "--duration", "5", "--max-dropped", "1",
                             "--inject-late", "DP-1=100:2", "--json", "--quiet"], in: dir)
        #expect(r.status == 1, "DP-1 drops 2 refreshes: \(r.out)")
        #expect(lines(r.out).count == 1, "one line of stdout: \(r.out)")
        let o = try object(r.out)
        let outputs = try #require(o["outputs"] as? [[String: Any]])
        #expect(outputs.map { $0["output"] as? String } == ["eDP-1", "DP-1"])
        #expect(outputs.map { $0["droppedRefreshes"] as? Int } == [0, 2])
        #expect(outputs.map { $0["passed"] as? Bool } == [true, false])
        let dp = try #require(outputs[1]["criteria"] as? [[String: Any]])
        #expect(dp.count == 1 && dp[0]["name"] as? String == "max-dropped" && dp[0]["passed"] as? Bool == false)
        #expect(dp[0]["detail"] as? String == "dropped refreshes 2 (limit 1)")
        let total = try #require(o["total"] as? [String: Any])
        #expect(total["outputs"] as? Int == 2 && total["frames"] as? Int == 1018 && total["droppedRefreshes"] as? Int == 2)
        #expect(total["criteria"] as? Int == 2 && total["failedCriteria"] as? Int == 1 && total["passed"] as? Bool == false)
        // The failure still goes to stderr, as without --json.
        #expect(r.err.contains("FAIL DP-1 max-dropped: dropped refreshes 2 (limit 1)"))
        // With --warmup, each output says what it judged.
        let w = try cadence(["validate", "--backend", "fake-drm:two-crtc", "--connector", "all", "--duration", "5", "--max-dropped", "0",
                             "--warmup", "1", "--json", "--quiet"], in: dir)
        #expect(w.status == 0 && lines(w.out).count == 1, "\(w.out)")
        let judged = try #require(try object(w.out)["outputs"] as? [[String: Any]]).map { $0["judged"] as? String }
        #expect(judged == ["241 frames after a 1 s warm-up (59 ignored)", "576 frames after a 1 s warm-up (144 ignored)"])
    }

    /// Finding 13: `--inject-late` for several outputs, repeated or in one list, makes each
    /// output's frame late (the repeated form injected on eDP-1 only, the list was refused).
    @Test func injectLateOnSeveralOutputs() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["run", "--backend", "fake-drm:two-crtc", "--connector", "all", "--duration", "5", "--scene", "solid", "--json", "--quiet"]
        for form in [["--inject-late", "DP-1=100:2", "--inject-late", "eDP-1=50:1"], ["--inject-late", "DP-1=100:2,eDP-1=50:1"]] {
            let r = try cadence(base + form, in: dir)
            #expect(r.status == 0, "\(form): \(r.err)")
            let outputs = try #require(try object(r.out)["outputs"] as? [[String: Any]])
            #expect(outputs.map { $0["output"] as? String } == ["eDP-1", "DP-1"])
            #expect(outputs.map { $0["droppedRefreshes"] as? Int } == [1, 2], "\(form)")
            #expect(outputs.map { $0["dropEvents"] as? Int } == [1, 1], "\(form)")
        }
        let twice = try cadence(base + ["--inject-late", "100:1", "--inject-late", "DP-1=100:2"], in: dir)
        #expect(twice.status == 2 && twice.out.isEmpty)
        #expect(twice.err == "cadence run: --inject-late: frame 100 of DP-1 is given twice, as 100:1 and DP-1=100:2\n")
        // One output: a second name that is not the output is refused, as the first always was.
        let one = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--frames", "200", "--quiet",
                               "--inject-late", "DP-1=100:1", "--inject-late", "eDP-1=5:1"], in: dir)
        #expect(one.status == 2)
        #expect(one.err == "cadence run: --inject-late eDP-1=…: the run drives DP-1, not eDP-1\n")
    }

    /// Finding 14a: a folder (or file) in the working directory named like a shipped profile does
    /// not shadow it; a bare name that is no shipped profile is still read as a file there.
    @Test func aFolderNamedLikeAProfileDoesNotShadowIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/vkms", withIntermediateDirectories: true)
        let r = try cadence(["list", "--backend", "fake-drm:vkms"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("profiles/vkms.json") && r.out.contains("Virtual-1"), "\(r.out)")
        try FileManager.default.createDirectory(atPath: dir + "/mine", withIntermediateDirectories: true)
        let folder = try cadence(["list", "--backend", "fake-drm:mine"], in: dir)
        #expect(folder.status == 2 && folder.err.hasPrefix("cadence list: no profile 'mine': not a file"), "\(folder.err)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        try FileManager.default.copyItem(atPath: root.appendingPathComponent("profiles/bochs.json").path, toPath: dir + "/qemu")
        let file = try cadence(["list", "--backend", "fake-drm:qemu"], in: dir)
        #expect(file.status == 0 && file.out.contains("bochs"), "\(file.out)\(file.err)")
    }

    /// Finding 14b: under VRR `--refresh-tolerance` judges against the refresh requested (90 Hz
    /// content on 48–144 Hz: 90 Hz; 30 Hz: 60 Hz with LFC's repeats), not the range's 144 Hz.
    @Test func refreshToleranceUnderVRRJudgesTheRequestedRefresh() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (backend, rate, hz) in [(["fake-drm:amdgpu-vrr", "--scene", "solid"], "0:144:90", "90.000"), (["fake-drm:amdgpu-vrr", "--scene", "solid"], "0:144:30", "60.000"),
                                    (["fake", "--fake-vrr", "48:144"], "0:144:90", "90.000"), (["fake", "--fake-vrr", "48:144"], "0:144:20", "60.000")] {
            let r = try cadence(["validate", "--backend"] + backend + ["--rate", rate, "--frames", "300", "--refresh-tolerance", "1", "--quiet"], in: dir)
            #expect(r.status == 0, "\(backend) \(rate): \(r.out)")
            #expect(r.out.contains("\nPASS refresh-tolerance: refresh \(hz) Hz measured vs \(hz) Hz requested (VRR 48.000–144.000 Hz), off by 0.000% (limit 1.000%)\n"),
                    "\(backend) \(rate): \(r.out)")
        }
        // Fixed refresh: against the mode's refresh, as before.
        let fixed = try cadence(["validate", "--backend", "fake", "--rate", "30:30:30", "--frames", "120", "--refresh-tolerance", "1", "--quiet"], in: dir)
        #expect(fixed.out.contains("\nPASS refresh-tolerance: refresh 60.000 Hz measured vs 60.000 Hz nominal, off by 0.000% (limit 1.000%)\n"), "\(fixed.out)")
    }

    /// Finding 14c: a run that turns out shorter than its `--window` (`--frames 290`: 4.8 s,
    /// `--frames 120`: 2 s) is judged overall, with a verdict and JUnit (it exited 2 with neither).
    @Test func aWindowLongerThanTheRunIsJudgedOverall() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake", "--frames", "290", "--window", "5", "--inject-late", "100:1", "--max-dropped", "0",
                             "--junit", "j.xml", "--quiet"], in: dir)
        #expect(r.status == 1, "\(r.err)")
        #expect(r.out.contains("\njudged            290 frames, no whole 5 s window (the 4.8 s judged only overall)\nFAIL max-dropped: dropped refreshes 1 (limit 0)\n"), "\(r.out)")
        #expect(r.out.hasSuffix("validate: FAIL (1 of 1 criteria) on the fake display (a simulator, not a real panel)\n"))
        let junit = try String(contentsOfFile: dir + "/j.xml", encoding: .utf8)
        #expect(junit.contains("<testsuite name=\"cadence.validate\" tests=\"1\" failures=\"1\""))
        let frames = try cadence(["validate", "--backend", "fake", "--frames", "120", "--window", "5", "--max-dropped", "0", "--quiet"], in: dir)
        #expect(frames.status == 0, "\(frames.err)")
        #expect(frames.out.contains("\njudged            120 frames, no whole 5 s window (the 2.0 s judged only overall)\nPASS max-dropped"), "\(frames.out)")
    }

    /// Finding 14d: `validate --help` names validate in its usage line.
    @Test func validateHelpNamesValidate() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--help"], in: dir)
        #expect(r.status == 0)
        #expect(r.out.contains("\nUSAGE: cadence validate <options>\n"), "\(r.out)")
        #expect(!r.out.contains("cadence run validate"))
    }
}
