import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// `cadence replay` of a file reads it record by record (issue 24): the replay equals the one
/// from every record at once, on every log shape the tests write; the records it holds stay a
/// window around the replay's clock; bad logs give the same one-line errors.
@Suite struct StreamingReplayTests {
    /// The replay of `path` three ways: from the file record by record, from all its records
    /// read (the display reading them one by one), and from all its records at once, in the
    /// order of the whole-log replay.
    func threeWays(_ path: String, _ name: String) throws {
        var streamed: [FrameRecord] = []
        let fromFile = try Replay.run(
            path: path, replayedFrames: .init(restart: { streamed = [] }, frame: { streamed.append($0) }))
        let log = try RunLog.read(path: path)
        let fromRecords = try Replay.run(log)
        let whole = try Replay.run(log, forceWhole: true, adjust: { _ in })
        for (how, r, records) in [
            ("from the file", fromFile, streamed), ("from the records", fromRecords, fromRecords.records)
        ] {
            #expect(r.replayed == whole.replayed, "\(name) \(how)")
            #expect(r.recorded == whole.recorded, "\(name) \(how)")
            #expect(r.differences == whole.differences, "\(name) \(how)")
            #expect(r.divergences == whole.divergences, "\(name) \(how)")
            #expect(r.rateSwitches == whole.rateSwitches, "\(name) \(how)")
            #expect(r.note == whole.note, "\(name) \(how)")
            #expect(records == whole.records, "\(name) \(how)")
        }
        #expect(fromFile.records.isEmpty)
        let survey = Replay.source(log).survey
        let streamable = survey.streamable, why = survey.outOfOrder ?? ""
        #expect(streamable, "\(name): \(why)")
        #expect(fromFile.log?.frameCount == log.records.count)
    }

    @Test(arguments: ReplayTests.cases.map { $0.0 })
    func streamingEqualsWholeLogReplay(name: String) throws {
        let (_, cfg, fake) = ReplayTests.cases.first { $0.0 == name }!
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(cfg, fake: fake, in: dir)
        try threeWays(path, name)
        // Compressed: the same.
        let (zst, _) = try recordRun(cfg, fake: fake, in: dir, name: "run.jsonl.zst")
        try threeWays(zst, name + " (zstd)")
    }

    /// VRR (the first callback pinned), a display without a vblank interrupt, and `--adapt`.
    @Test(arguments: ["vrr min-duration", "vrr 47 Hz", "no hardware vblank", "adapt"])
    func otherDisplaysAndModes(name: String) throws {
        var c = config(frames: 400, injectLate: [50: 2])
        var f = FakeDisplayConfiguration()
        switch name {
        case "vrr min-duration":
            f.vrrRange = 48...144
            f.refreshHz = 144
            c.minimumDuration = 20_000_000
        case "vrr 47 Hz":
            f.vrrRange = 48...144
            f.refreshHz = 144
            c.range = FrameRateRange(minimum: 30, maximum: 60, preferred: 47)
        case "no hardware vblank":
            f.hasHardwareVBlank = false
        default:
            c.adapt = true
            c.injectLate = [50: 2, 60: 2, 70: 2, 80: 2]
        }
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(c, fake: f, in: dir)
        try threeWays(path, name)
    }

    /// Every file of a rotated log (the first one continues in the next; later ones start in
    /// the middle of the run).
    @Test func rotatedSegments() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        let c = config(frames: 600, latency: 2, injectLate: [100: 1, 250: 3])
        let writer = try RunLogWriter(path: path, rotation: LogRotation(maxBytes: 64 << 10, keep: 100))
        let display = FakeDisplay(.init())
        let run = try PacingRun(backend: display, configuration: c)
        try writer.begin(RunLogHeader(backend: display, configuration: c))
        run.onFrame = { try? writer.write(FrameRecord($0)) }
        try writer.end(try run.run())
        let files = (0...100).reversed().map { LogRotation.path(path, age: $0) }
            .filter { FileManager.default.fileExists(atPath: $0) }
        #expect(files.count > 2)
        for f in files { try threeWays(f, f) }
    }

    /// A long run (20,000 frames, 5½ minutes at 60 Hz, with late frames and a session gap):
    /// the display holds a window of records, the same size however long the log, by
    /// construction (records within a few seconds of the clock).
    @Test func theWindowStaysBounded() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var f = FakeDisplayConfiguration()
        f.faults = [.sessionPaused(after: 100_000_000_000, for: 2_000_000_000)]
        var inject: [Int: Int] = [:]
        for k in stride(from: 500, to: 20_000, by: 997) { inject[k] = 1 + k % 3 }
        let (path, _) = try recordRun(config(frames: 20_000, latency: 2, injectLate: inject), fake: f, in: dir)
        let source = Replay.source(try RunLog.read(path: path))
        let streamable = source.survey.streamable, why = source.survey.outOfOrder ?? ""
        let within = source.survey.surelyWithinLimits
        #expect(streamable && within, "\(why)")
        let (result, _) = try Replay.once(source, startBetweenVBlanks: false, keep: false, out: nil)
        #expect(result.differences.isEmpty, "\(result.differences)")
        #expect(result.window > 0)
        // Records within 2 s of the clock behind it and about 4 s ahead (the disorder allowed,
        // 1 s, twice, and the derivation's margins), plus up to 256 read before the window is
        // next trimmed: at 60 Hz about 700 of the 20,000.
        #expect(result.window <= 256 + 8 * 60, "\(result.window) records held")
    }

    /// Bad logs give the one-line errors of the whole-log replay: a cut-off last line, records
    /// out of order (flip timestamps going backwards), and hostile numbers.
    @Test func badLogsGiveTheSameErrors() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 300), in: dir)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func message(_ body: () throws -> Any) -> String {
            do {
                _ = try body()
                return "no error"
            } catch { return "\(error)" }
        }
        func same(_ name: String, _ contents: String, contains: String) throws {
            let p = dir + "/" + name
            try contents.write(toFile: p, atomically: true, encoding: .utf8)
            let streamed = message { try Replay.run(path: p) }
            let whole = message { try Replay.run(try RunLog.read(path: p)) }
            #expect(streamed == whole, "\(name)")
            #expect(streamed.contains(contains), "\(name): \(streamed)")
        }
        // Cut off in the middle of frame 150's line (and the end line dropped).
        let cut = lines[0..<151].joined(separator: "\n") + "\n" + lines[151].prefix(40)
        try same("cut.jsonl", cut, contains: "is cut off")
        // Frames 100 and 200 with each other's flip timestamps: flips go backwards.
        func flip(_ line: String) -> Substring {
            let from = line.range(of: "\"flipNs\":")!.upperBound
            return line[from...].prefix { $0.isNumber }
        }
        let (a, b) = (flip(lines[101]), flip(lines[201]))
        lines[101] = lines[101].replacingOccurrences(of: "\"flipNs\":\(a)", with: "\"flipNs\":\(b)")
        lines[201] = lines[201].replacingOccurrences(of: "\"flipNs\":\(b)", with: "\"flipNs\":\(a)")
        try same("swapped.jsonl", lines.joined(separator: "\n"), contains: "flip timestamps go backwards")
    }
}
