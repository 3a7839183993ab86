import CadenceCore
import CadenceReport
import DRM
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// End-to-end tests of the `cadence` binary (run as a subprocess).
@Suite(.serialized) struct CLIRunTests {
    /// SIGKILL mid-run: every line written up to the last second is a whole, parseable record.
    @Test func killedRunKeepsEveryRecordBeforeTheLastSecond() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "60", "--log", "run.jsonl", "--csv", "run.csv", "--quiet"], in: dir)
        // Wait for the first frame line (the run has started), then let it run.
        var started = Date()
        for _ in 0..<500 {
            let text = (try? String(contentsOfFile: dir + "/run.jsonl", encoding: .utf8)) ?? ""
            if text.split(separator: "\n").count >= 2 { started = Date(); break }
            usleep(10_000)
        }
        usleep(2_500_000)
        let killedAfter = Date().timeIntervalSince(started)
        p.signal(SIGKILL)
        let r = p.finish()
        #expect(r.status != 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/run.jsonl"))
        let log = try RunLog.parse(data, name: "run.jsonl", allowPartialLastLine: true)
        #expect(log.header?.backend == "fake")
        #expect(log.end == nil)
        #expect(log.skippedPartialBytes == 0, "lines are written whole")
        // At 60 Hz, everything up to one second before the kill is in the file.
        let expected = Int((killedAfter - 1.0) * 60)
        #expect(log.records.count >= expected, "\(log.records.count) records, expected ≥ \(expected)")
        #expect(log.records.map(\.frame) == Array(0..<log.records.count))
        // The CSV is whole too: one row per logged frame (± the frame in progress).
        let csvRows = try String(contentsOfFile: dir + "/run.csv", encoding: .utf8).split(separator: "\n").count - 1
        #expect(abs(csvRows - log.records.count) <= 1)
        // replay reads the killed log (exactness is tested on virtual time: a wall-speed run on a
        // loaded machine can have process stalls the log cannot fully describe).
        let rep = try cadence(["replay", "run.jsonl"], in: dir)
        #expect(rep.status == 0 || rep.status == 1, "\(rep.out)\(rep.err)")
        #expect(rep.out.contains("replayed") && rep.out.contains("logged frames of a fake run"))
    }

    /// SIGINT: the run ends cleanly with a complete log (end line), the summary, and the files.
    @Test func sigintEndsTheRunCleanly() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "60", "--log", "run.jsonl",
                                    "--csv", "run.csv", "--summary", "summary.json"], in: dir)
        usleep(2_500_000)
        p.signal(SIGINT)
        let r = p.finish(timeout: 20)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("end               stopped"))
        #expect(r.out.contains("dropped"))
        // Live status lines on stderr, one a second.
        let status = lines(r.err).filter { $0.contains("fps") && $0.contains("effective") && $0.contains("hitch") }
        #expect(status.count >= 1 && status.count <= 4, "\(r.err)")
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.end?.summary.endReason == "stopped")
        #expect(log.end?.summary.frames == log.records.count)
        #expect(log.records.count > 60)
        let summary = try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json")))
        #expect(summary == log.end?.summary)
        #expect(LogAnalysis.summary(of: log) == summary)
        let csv = try String(contentsOfFile: dir + "/run.csv", encoding: .utf8).split(separator: "\n")
        #expect(csv.count == log.records.count + 1)
        #expect(csv[0].hasPrefix("Frame,Sequence,TargetSequence,TimeInSeconds,MsBetweenPresents,MsBetweenDisplayChange"))
    }

    /// True on a machine without any DRM card (CI, containers): the fallback is observable.
    static let noCard = DRMDevice.discover().isEmpty

    @Test(.enabled(if: noCard)) func fallsBackToTheFakeDisplayInOneLineOnlyWithoutACard() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--frames", "120", "--json"], in: dir)
        #expect(r.status == 0)
        #expect(lines(r.err) == ["cadence run: no DRM device (/dev/dri has no card* nodes): using the fake display at 60 Hz, a simulator"])
        let s = try JSONDecoder().decode(RunSummary.self, from: Data(r.out.utf8))
        #expect(s.backend == "fake" && s.frames == 120)
        // A named device is never replaced by the simulator.
        let named = try cadence(["run", "--device", "/nonexistent/card9", "--frames", "120", "--json"], in: dir)
        #expect(named.status == 2 && lines(named.err) == ["cadence run: no such device: /nonexistent/card9"] && named.out.isEmpty)
    }
}

@Suite(.serialized) struct CLIValidateTests {
    let base = ["validate", "--backend", "fake", "--quiet", "--frames", "600", "--inject-late", "100:1,250:3"]

    @Test func passesUnderTheThreshold() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(base + ["--max-dropped", "4", "--max-drop-events", "2", "--refresh-tolerance", "0.1", "--min-rate", "59", "--junit", "v.xml"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("validate: PASS (4 criteria)"))
        #expect(r.err.isEmpty)
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("tests=\"4\" failures=\"0\""))
    }

    @Test func failsAboveTheThresholdWithOneLinePerCriterion() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(base + ["--max-dropped", "3", "--max-drop-events", "1", "--max-jitter", "0.5", "--junit", "v.xml"], in: dir)
        #expect(r.status == 1)
        #expect(lines(r.err) == ["FAIL max-dropped: dropped refreshes 4 (limit 3)", "FAIL max-drop-events: drop events 2 (limit 1)"])
        #expect(r.out.contains("PASS max-jitter"))
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("tests=\"3\" failures=\"2\""))
    }

    @Test func lateFramesBreakTheJitterLimit() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 1 frame in 50 late by one refresh: the p99 interval is 2 refreshes. --quiet: a loaded
        // machine may take over a wall second and print a live status line on stderr.
        let late = stride(from: 20, to: 600, by: 50).map { "\($0):1" }.joined(separator: ",")
        let r = try cadence(["validate", "--backend", "fake", "--quiet", "--frames", "600", "--inject-late", late, "--max-jitter", "1"], in: dir)
        #expect(r.status == 1)
        #expect(lines(r.err).count == 1 && r.err.hasPrefix("FAIL max-jitter: p99 interval 33.333 ms"), "\(r.err)")
    }

    /// The case: `cadence validate --duration 1 --max-dropped 0` on a machine without a
    /// DRM device used to PASS on the simulator.
    @Test(.enabled(if: CLIRunTests.noCard)) func withoutACardValidateExitsTwoUnlessFakeIsAsked() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--duration", "1", "--max-dropped", "0", "--junit", "v.xml"], in: dir)
        #expect(r.status == 2)
        #expect(lines(r.err) == ["cadence validate: no DRM device: validate needs a real display; use --backend fake to validate the simulator"])
        #expect(r.out.isEmpty && files(in: dir).isEmpty)
    }

    @Test func theFakeDisplayIsNamedInSummaryJUnitAndVerdict() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake", "--quiet", "--frames", "120", "--max-dropped", "0", "--junit", "v.xml"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(lines(r.out).first?.hasPrefix("backend           fake display (simulator)  refresh 60.000 Hz") == true, "\(r.out)")
        #expect(lines(r.out).last == "validate: PASS (1 criteria) on the fake display (a simulator, not a real panel)")
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("<property name=\"display\" value=\"fake display (simulator)\"/>"))
        #expect(xml.contains("<system-out>backend fake display (simulator), refresh 60.000 Hz"))
    }

    @Test func warmupWindowAndLargestDropEvent() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Frame 100 (~1.7 s) drops 1 refresh, frame 250 (~4.2 s) drops 3.
        let pass = try cadence(base + ["--warmup", "2", "--window", "2", "--max-dropped", "3", "--max-drop-event", "3", "--junit", "v.xml"], in: dir)
        #expect(pass.status == 0, "\(pass.err)")
        #expect(pass.out.contains("judged            "), "\(pass.out)")
        #expect(pass.out.contains("after a 2 s warm-up") && pass.out.contains("4 windows of 2 s"), "\(pass.out)")
        #expect(pass.out.contains("PASS max-drop-event: largest drop event 3 refreshes (limit 3); worst 2 s window 4.0–6.0 s"), "\(pass.out)")
        let fail = try cadence(base + ["--window", "2", "--max-drop-event", "2", "--min-rate", "59"], in: dir)
        #expect(fail.status == 1)
        #expect(lines(fail.err).count == 2, "\(fail.err)")
        #expect(fail.err.contains("FAIL min-rate: rate 59.") && fail.err.contains("(1 of 5 windows fail)"), "\(fail.err)")
        // Windows that cannot exist are bad input.
        for args in [["--window", "20", "--duration", "10"], ["--window", "0"], ["--warmup", "-1"], ["--warmup", "100"]] {
            let r = try cadence(["validate", "--backend", "fake", "--quiet", "--max-dropped", "0"] + args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1, "\(args): \(r.err)")
        }
    }

    @Test func usageAndDeviceErrorsExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for args in [["validate", "--backend", "fake", "--frames", "10"],
                     ["validate", "--backend", "fake", "--max-dropped", "-1"],
                     ["validate", "--backend", "kms", "--device", "/nonexistent/card0", "--max-dropped", "0", "--junit", "v.xml"]] {
            let r = try cadence(args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty)
        }
        #expect(files(in: dir).isEmpty)
    }
}

@Suite(.serialized) struct CLIReportReplayTests {
    func recordLog(_ dir: String, _ extra: [String] = []) throws {
        let r = try cadence(["run", "--backend", "fake", "--frames", "600", "--inject-late", "100:1,250:3", "--log", "run.jsonl", "--quiet"] + extra, in: dir)
        #expect(r.status == 0, "\(r.err)")
    }

    @Test func reportWritesPNGAndSVGWithTheDrops() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try recordLog(dir)
        let png = try cadence(["report", "run.jsonl", "--output", "run.png", "--size", "1000x600"], in: dir)
        #expect(png.status == 0, "\(png.err)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/run.png")))
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(bytes[16..<20].reduce(0) { $0 << 8 | Int($1) } == 1000)
        #expect(bytes[20..<24].reduce(0) { $0 << 8 | Int($1) } == 600)
        let svg = try cadence(["report", "run.jsonl", "--output", "run.svg"], in: dir)
        #expect(svg.status == 0)
        let text = try String(contentsOfFile: dir + "/run.svg", encoding: .utf8)
        let frames = text.components(separatedBy: "data-frame=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(frames == ["100", "250"])
        #expect(text.contains("data-cause=\"render-late\""))
        let html = try cadence(["report", "run.jsonl", "--output", "run.html", "--csv", "run.csv"], in: dir)
        #expect(html.status == 0)
        let page = try String(contentsOfFile: dir + "/run.html", encoding: .utf8)
        #expect(page.contains("<svg"))
        let csv = try String(contentsOfFile: dir + "/run.csv", encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 601)
    }

    /// `report run.jsonl*` and `report --all run.jsonl`: the files of a rotated log drawn as the
    /// run unrotated; a missing middle file named in one line, exit 2.
    @Test func reportReadsARotatedLogAsOneRun() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = ["run", "--backend", "fake", "--frames", "900", "--inject-late", "100:1,450:3,800:2", "--quiet"]
        #expect(try cadence(run + ["--log", "plain.jsonl"], in: dir).status == 0)
        #expect(try cadence(run + ["--log", "rot.jsonl", "--log-max-size", "200K"], in: dir).status == 0)
        #expect(Set(files(in: dir).filter { $0.hasPrefix("rot.jsonl") }) == ["rot.jsonl", "rot.jsonl.1", "rot.jsonl.2"])
        let plain = try cadence(["report", "plain.jsonl", "--output", "plain.svg"], in: dir)
        let given = try cadence(["report", "rot.jsonl.1", "rot.jsonl", "rot.jsonl.2", "--output", "given.svg"], in: dir)
        let all = try cadence(["report", "--all", "rot.jsonl", "--output", "all.svg"], in: dir)
        #expect(plain.status == 0 && given.status == 0 && all.status == 0, "\(given.err) \(all.err)")
        let svg = try String(contentsOfFile: dir + "/plain.svg", encoding: .utf8)
        #expect(svg.contains("data-frame=\"450\""))
        #expect(try String(contentsOfFile: dir + "/given.svg", encoding: .utf8) == svg)
        #expect(try String(contentsOfFile: dir + "/all.svg", encoding: .utf8) == svg)
        #expect(plain.out.hasSuffix("900 frames, 6 dropped refreshes in 3 events, 3 frames marked\n"))
        #expect(all.out.hasSuffix("900 frames, 6 dropped refreshes in 3 events, 3 frames marked (segments 1–3 of a rotated log, read as one run)\n"))
        try FileManager.default.removeItem(atPath: dir + "/rot.jsonl.1")
        let missing = try cadence(["report", "--all", "rot.jsonl", "--output", "missing.svg"], in: dir)
        #expect(missing.status == 2 && !FileManager.default.fileExists(atPath: dir + "/missing.svg"))
        #expect(missing.err == "cadence report: segment 2 is missing from the rotated log: between rot.jsonl.2 (segment 1) and rot.jsonl (segment 3)\n")
    }

    @Test func replayReproducesTheSummary() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try recordLog(dir, ["--summary", "recorded.json", "--latency", "2"])
        let r = try cadence(["replay", "run.jsonl", "--json", "--log-out", "replayed.jsonl"], in: dir)
        #expect(r.status == 0, "\(r.out) \(r.err)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        #expect(obj?["equal"] as? Bool == true)
        let recorded = try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/recorded.json")))
        let replayedLog = try RunLog.read(path: dir + "/replayed.jsonl")
        var replayed = try #require(replayedLog.end?.summary)
        #expect(replayed.backend == "replay")
        replayed.backend = recorded.backend
        #expect(replayed == recorded)
        let text = try cadence(["replay", "run.jsonl"], in: dir)
        #expect(text.out.contains("summary           equals the recorded one"))
    }

    @Test func badInputIsOneLineExitTwoAndWritesNothing() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try recordLog(dir)
        let good = try Data(contentsOf: URL(fileURLWithPath: dir + "/run.jsonl"))
        try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: dir + "/truncated.jsonl"))
        try Data("{\"traceEvents\":[]}\n".utf8).write(to: URL(fileURLWithPath: dir + "/foreign.jsonl"))
        try Data("Application,ProcessID,MsBetweenPresents\nfoo.exe,1,16.6\n".utf8).write(to: URL(fileURLWithPath: dir + "/presentmon.csv"))
        let before = files(in: dir)
        let cases: [[String]] = [
            ["run", "--backend", "fake", "--scene", "nope", "--log", "x.jsonl"],
            ["run", "--backend", "fake", "--rate", "60:30:45", "--log", "x.jsonl"],
            ["run", "--backend", "fake", "--duration", "-1", "--log", "x.jsonl"],
            ["run", "--backend", "fake", "--log", "/nonexistent-dir/x.jsonl"],
            ["run", "--backend", "fake", "--log", "x.jsonl", "--csv", "/nonexistent-dir/x.csv"],
            ["run", "--backend", "fake", "--log", "x.jsonl", "--summary", "/nonexistent-dir/x.json"],
            ["run", "--backend", "kms", "--device", "/nonexistent/card0", "--log", "x.jsonl"],
            ["report", "truncated.jsonl", "--output", "x.png"],
            ["report", "foreign.jsonl", "--output", "x.svg"],
            ["report", "presentmon.csv", "--output", "x.png"],
            ["report", "run.jsonl", "--output", "x.gif"],
            ["report", "missing.jsonl", "--output", "x.png"],
            ["replay", "truncated.jsonl"],
            ["replay", "foreign.jsonl"],
            ["replay", "presentmon.csv"],
            ["run", "--backend", "fake", "--duration", "abc", "--log", "x.jsonl"],
            ["run", "--bogus-option"],
            ["measure", "--duration"],
            ["no-such-command"],
        ]
        for args in cases {
            let r = try cadence(args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1, "\(args): \(r.err)")
            #expect(!r.err.contains("Fatal") && !r.err.contains("crashed"))
            #expect(r.out.isEmpty, "\(args)")
            #expect(files(in: dir) == before, "\(args) left \(files(in: dir))")
        }
    }

    @Test func everyCommandHelpHasExamplesAndTheExitCodesIn80Columns() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for cmd in ["", "list", "measure", "run", "validate", "report", "replay", "scenes", "render", "bench"] {
            let r = try cadence(cmd.isEmpty ? ["--help"] : [cmd, "--help"], in: dir, environment: ["COLUMNS": "80"])
            #expect(r.status == 0)
            #expect(r.out.contains("Examples:"), "\(cmd)")
            #expect(r.out.contains("cadence \(cmd)"), "\(cmd)")
            #expect(r.out.contains("Exit status"), "\(cmd)")
            let wide = lines(r.out).filter { $0.count > 80 }
            #expect(wide.isEmpty, "\(cmd): \(wide)")
        }
    }

    /// The log records the machine's context from the (here fake) procfs/sysfs tree, and
    /// `report` draws the temperature; `replay` reads such logs.
    @Test func logContextAndReportTemperature() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tree = dir + "/.sys"
        let files = ["proc/sys/kernel/ostype": "Linux", "proc/sys/kernel/osrelease": "6.1.0-test",
                     "proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU\n",
                     "sys/class/thermal/thermal_zone0/type": "cpu-thermal", "sys/class/thermal/thermal_zone0/temp": "52000",
                     "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "1500000",
                     "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance"]
        for (path, text) in files {
            let full = tree + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: full))
        }
        let r = try cadence(["run", "--backend", "fake", "--frames", "300", "--quiet", "--log", "run.jsonl", "--system-root", tree], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.header?.system == SystemInfo(kernel: "Linux 6.1.0-test", driver: "fake display", cpuModel: "Test CPU", cpus: 1, cpuGovernor: "performance"))
        // One record at the start and one per second of the 5 s run.
        #expect(log.context.count >= 5 && log.context.count <= 7, "\(log.context.count)")
        #expect(log.context.allSatisfy { $0.cpuTemperatureC == 52 && $0.meanFrequencyMHz == 1500 })
        #expect(zip(log.context, log.context.dropFirst()).allSatisfy { $0.timeNs < $1.timeNs })
        let rep = try cadence(["report", "run.jsonl", "--output", "run.svg"], in: dir)
        #expect(rep.status == 0, "\(rep.err)")
        let svg = try String(contentsOfFile: dir + "/run.svg", encoding: .utf8)
        #expect(svg.contains("class=\"temperature\""))
        #expect(svg.contains("CPU temperature (C) by frame: 52.0-52.0 C; CPU frequency 1500-1500 MHz"))
        let replay = try cadence(["replay", "run.jsonl"], in: dir)
        #expect(replay.status == 0 && replay.out.contains("equals the recorded one"), "\(replay.out)")
    }

    @Test func measureAndListBadInputExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for args in [["measure", "--device", "/nonexistent/card0"], ["measure", "--duration", "-1"],
                     ["measure", "--allocator", "nope"], ["measure", "--api", "nope"], ["measure", "--device", "/dev/null"],
                     ["list", "--device", "/nonexistent/card0"], ["list", "--device", "/dev/null"]] {
            let r = try cadence(args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args)")
        }
    }
}
