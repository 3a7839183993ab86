import CadenceCore
import CadenceReport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Long runs at the CLI (issue 11, item 3): `--duration 0` until stopped, the log rotating with
/// `--log-max-size`/`--log-keep`, each file read by `report` and `replay` on its own, bad
/// input in one line, and a rotation that fails ending the log with exit 3.
@Suite(.serialized) struct LongRunTests {
    func names(_ dir: String) -> [String] { files(in: dir).filter { $0.hasPrefix("run.jsonl") } }

    /// A rotating log: run.jsonl and run.jsonl.1 … .N, each under 64 KiB but for its last
    /// line, each one read by `report` (its own frames, "segment K of a rotated log") and by
    /// `replay` (equal), together the frames of the run.
    @Test func rotatedRunLogFilesEachReportAndReplay() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--frames", "1000", "--latency", "2", "--inject-late", "100:1,250:3,700:2",
                             "--log", "run.jsonl", "--log-max-size", "64K", "--log-keep", "20", "--json", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let summary = try JSONDecoder().decode(RunSummary.self, from: Data(r.out.utf8))
        let ages = (0...20).filter { FileManager.default.fileExists(atPath: dir + "/" + LogRotation.path("run.jsonl", age: $0)) }
        #expect(ages == Array(0..<ages.count) && ages.count >= 8, "\(names(dir))")
        var frames = 0, dropped = 0
        for age in ages.reversed() {
            let name = LogRotation.path("run.jsonl", age: age)
            let size = try FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.size] as! Int
            let log = try RunLog.read(path: dir + "/" + name)
            let lastLine = (try String(contentsOfFile: dir + "/" + name, encoding: .utf8)).split(separator: "\n").last!.utf8.count + 1
            #expect(size - lastLine <= 64 << 10, "\(name): \(size) bytes")
            let rep = try cadence(["report", name, "--output", name + ".svg"], in: dir)
            #expect(rep.status == 0, "\(name): \(rep.err)")
            #expect(rep.out.contains("\(log.records.count) frames") && rep.out.contains("segment \(ages.count - age) of a rotated log"), "\(rep.out)")
            let rp = try cadence(["replay", name], in: dir)
            #expect(rp.status == 0, "\(name): \(rp.out)")
            #expect(rp.out.contains("segment") && rp.out.contains("equals the recorded one"), "\(rp.out)")
            frames += log.records.count
            dropped += log.records.map(\.droppedRefreshes).reduce(0, +)
        }
        #expect(frames == 1000 && dropped == summary.droppedRefreshes && summary.droppedRefreshes == 6)
    }

    /// `--duration 0` runs until stopped: past the default 5 s of display time, rotating with
    /// keep 2 (never a run.jsonl.3), and SIGTERM ends it cleanly (exit 0, "stopped").
    @Test func durationZeroRunsUntilStopped() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--scene", "solid", "--duration", "0", "--log", "run.jsonl",
                                    "--log-max-size", "64K", "--log-keep", "2", "--json", "--quiet"], in: dir)
        let end = Date().addingTimeInterval(60 * hangLimitScale)
        var rotations = 0
        while Date() < end {
            if let d = FileManager.default.contents(atPath: dir + "/run.jsonl"), let l = try? RunLog.parse(d, name: "run.jsonl", allowPartialLastLine: true),
               let k = l.continuation?.segment, k >= 5 {
                rotations = k - 1
                break
            }
            usleep(20_000)
        }
        #expect(rotations >= 4, "the log never rotated 4 times")
        p.signal(SIGTERM)
        let r = p.finish(timeout: 30)
        #expect(r.status == 0, "\(r.err)")
        let s = try JSONDecoder().decode(RunSummary.self, from: Data(r.out.utf8))
        #expect(s.endReason == "stopped" && s.frames > 60 * 5 && s.durationSeconds > 5, "\(s.frames) frames: past the default 5 s at 60 Hz")
        #expect(names(dir) == ["run.jsonl", "run.jsonl.1", "run.jsonl.2"])
        let last = try RunLog.read(path: dir + "/run.jsonl")
        #expect(last.end?.summary.endReason == "stopped" && last.records.last?.frame == s.frames - 1)
        #expect(try RunLog.read(path: dir + "/run.jsonl.2").continuation!.segment == last.continuation!.segment - 2)
    }

    /// Bad values: one line on stderr, exit 2, no file left behind.
    @Test(arguments: [
        (["--log-max-size", "10X", "--log", "run.jsonl"], "--log-max-size '10X' is not a size"),
        (["--log-max-size", "1.5M", "--log", "run.jsonl"], "is not a size"),
        (["--log-max-size", "1K", "--log", "run.jsonl"], "below the minimum of 64K"),
        (["--log-max-size", "65535", "--log", "run.jsonl"], "below the minimum of 64K"),
        (["--log-max-size", "1M"], "--log-max-size needs --log FILE"),
        (["--log-keep", "3", "--log", "run.jsonl"], "--log-keep needs --log-max-size"),
        (["--log-keep", "-1", "--log-max-size", "1M", "--log", "run.jsonl"], "--log-keep must be 0 to 10000"),
        (["--duration", "-1"], "--duration must be 0 (until stopped) to 86400 seconds"),
    ])
    func badLongRunOptions(args: [String], message: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--frames", "10", "--quiet"] + args, in: dir)
        #expect(r.status == 2)
        #expect(lines(r.err).count == 1 && r.err.contains(message), "\(r.err)")
        #expect(names(dir).isEmpty)
    }

    /// validate judges a window: --duration 0 is refused in one line.
    @Test func validateRefusesDurationZero() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake", "--duration", "0", "--max-dropped", "0"], in: dir)
        #expect(r.status == 2)
        #expect(lines(r.err).count == 1 && r.err.contains("--duration 0 (until stopped) is for run and observe"), "\(r.err)")
    }

    /// A rotation that fails (run.jsonl.1 is a directory that cannot be removed): one stderr
    /// line, the summary's incompleteOutputs, exit 3; the run goes on and run.jsonl keeps its
    /// lines (no end line, as a killed run's).
    @Test func failedRotationIsAnIncompleteOutput() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/run.jsonl.1/x", withIntermediateDirectories: true)
        let r = try cadence(["run", "--backend", "fake", "--frames", "600", "--log", "run.jsonl", "--log-max-size", "64K",
                             "--log-keep", "1", "--json", "--quiet"], in: dir)
        #expect(r.status == 3, "\(r.err)")
        #expect(lines(r.err).count == 1 && r.err.contains("logging stopped after") && r.err.contains("cannot rotate"), "\(r.err)")
        let s = try JSONDecoder().decode(RunSummary.self, from: Data(r.out.utf8))
        #expect(s.frames == 600)
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(s.incompleteOutputs == ["log run.jsonl: \(log.records.count) frames, no end line (\(r.err.split(separator: ":", maxSplits: 2).last!.split(separator: ";").first!.trimmingCharacters(in: .whitespaces)))"],
                "\(s.incompleteOutputs ?? [])")
        #expect(log.end == nil && log.rotated == nil && log.records.count > 50)
    }

    /// observe's log rotates too (a synthetic trace of 1200 flips at 60 Hz through
    /// --from-trace): keep 2, each file starts with the observe header and a continuation line,
    /// `report` reads each one on its own, and the flips of the files are the last ones
    /// observed, in order.
    @Test func observeLogRotates() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var trace = ""
        for i in 0..<1200 {
            let s = 1000 + i, ns = 10_000_000_000 + i * 16_666_667
            let t = String(format: "%.6f", Double(ns) / 1e9), c = String(format: "%.6f", Double(ns) / 1e9 - 0.005)
            trace += "           app-100     [000] .....    \(c): cadence_atomic: (drm_mode_atomic_ioctl+0x0/0xca0 [drm]) file=0xffff88803fab0a00 flags=513\n"
            trace += "          <idle>-0       [000] d.h3.    \(t): drm_vblank_event_delivered: file=ffff88803fab0a00, crtc=0, seq=\(s)\n"
            trace += "          <idle>-0       [000] d.h3.    \(t): cadence_send: (drm_send_event_timestamp_locked+0x0/0x10 [drm]) file=0xffff88803fab0a00 crtc=0 seq=\(s) type=2 time=\(ns)\n"
            trace += "          <idle>-0       [000] d.h3.    \(t): drm_vblank_event: crtc=0, seq=\(s), time=\(ns), high-prec=\n"
        }
        try trace.write(toFile: dir + "/syn.trace", atomically: true, encoding: .utf8)
        let r = try cadence(["observe", "--from-trace", "syn.trace", "--log", "run.jsonl", "--log-max-size", "64K", "--log-keep", "2"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("1200 flips"))
        #expect(names(dir) == ["run.jsonl", "run.jsonl.1", "run.jsonl.2"])
        var sequences: [Int] = []
        for name in ["run.jsonl.2", "run.jsonl.1", "run.jsonl"] {
            let text = try String(contentsOfFile: dir + "/" + name, encoding: .utf8)
            let l = text.split(separator: "\n")
            #expect(text.utf8.count - l.last!.utf8.count - 1 <= 64 << 10)
            #expect(l[0] == #"{"record":"observe","version":1}"# && l[1].contains(#""record":"continuation""#))
            #expect(l[1].contains(#""framesBefore":\#(sequences.isEmpty ? 0 : sequences.last! - 999)"#) || sequences.isEmpty)
            for line in l where line.contains(#""kind":"observed""#) {
                let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                sequences.append(obj["sequence"] as! Int)
            }
            #expect(l.last!.contains(name == "run.jsonl" ? #""record":"end""# : #""record":"rotated""#))
            // report reads each file on its own, as the segment it is.
            let rep = try cadence(["report", name, "--output", name + ".svg"], in: dir)
            let flips = l.filter { $0.contains(#""kind":"observed""#) }.count
            #expect(rep.status == 0 && rep.out.contains("\(flips) frames") && rep.out.contains("of a rotated log"), "\(rep.out) \(rep.err)")
        }
        #expect(sequences == Array((2199 - sequences.count + 1)...2199), "the newest flips, in order")
    }
}
