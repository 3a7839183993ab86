import CadenceCore
import CadenceReport
import Foundation
import Testing

/// Size-based rotation of the run log (issue 11, item 3): files at line boundaries, each under
/// the limit plus one record, keep-N, every file read on its own, the frames of all files the
/// frames of the unrotated log, and replay of the first and of a later file.
@Suite struct LogRotationTests {
    /// Records `config` on the fake display with a rotating log (as `cadence run --log
    /// --log-max-size` does); returns the summary.
    func recordRotated(
        _ config: RunConfiguration, fake: FakeDisplayConfiguration = .init(), path: String,
        rotation: LogRotation
    ) throws -> RunSummary {
        let writer = try RunLogWriter(path: path, rotation: rotation)
        let display = FakeDisplay(fake)
        let run = try PacingRun(backend: display, configuration: config)
        try writer.begin(RunLogHeader(backend: display, configuration: config))
        var failure: Error?
        run.onFrame = { r in
            do { try writer.write(FrameRecord(r)) } catch { failure = error }
        }
        run.onRateSwitch = { try? writer.write($0) }
        run.onSessionChange = { try? writer.write($0) }
        let summary = try run.run()
        try writer.end(summary)
        if let f = failure { throw f }
        return summary
    }

    /// The files of a rotated log, oldest first.
    func segments(_ path: String, keep: Int) -> [String] {
        (0...keep).reversed().map { LogRotation.path(path, age: $0) }.filter {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// The file without its last line: what must fit under the limit.
    func sizeBeforeLastLine(_ b: [UInt8]) -> Int {
        let body = b.dropLast()  // the final newline
        return (body.lastIndex(of: 0x0A) ?? -1) + 1
    }

    @Test func sizes() throws {
        #expect(try LogRotation.parseSize("10M") == 10 << 20)
        #expect(try LogRotation.parseSize("512K") == 512 << 10)
        #expect(try LogRotation.parseSize("1G") == 1 << 30)
        #expect(try LogRotation.parseSize("65536") == 65536)
        #expect(try LogRotation.parseSize("64kib") == 65536)
        for bad in ["", "M", "1.5M", "-5", "10X", "10 MB extra", "99999999999999999999", "9999999999999G"] {
            #expect(throws: LogRotation.Invalid.self, "\(bad)") { try LogRotation.parseSize(bad) }
        }
        #expect(
            LogRotation.path("run.jsonl", age: 0) == "run.jsonl"
                && LogRotation.path("run.jsonl", age: 3) == "run.jsonl.3")
    }

    /// The replay cases, each recorded whole and with a 16 KiB rotating log: every file is under
    /// the limit but for its last line, reads on its own with its frames only, and together they
    /// hold exactly the unrotated log's frames; segment 1 replays equal to its recording, and so
    /// does every later segment, frame by frame, from the frames its continuation line carries
    /// (content rate included: its clock is picked up; a link held back by a late frame at
    /// latency 3: the replay starts a refresh earlier).
    @Test(arguments: ReplayTests.cases.map { $0.0 })
    func rotatedLogReadsFileByFile(name: String) throws {
        let (_, config, fake) = ReplayTests.cases.first { $0.0 == name }!
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let whole = try recordRun(config, fake: fake, in: dir, name: "whole.jsonl")
        let path = dir + "/run.jsonl"
        let rotation = LogRotation(maxBytes: 16 << 10, keep: 1000)
        let summary = try recordRotated(config, fake: fake, path: path, rotation: rotation)
        #expect(summary == whole.summary, "rotation does not change the run")
        let wholeLog = try RunLog.read(path: whole.path)
        let files = segments(path, keep: rotation.keep)
        let expected = Int((try bytes(whole.path).count + (16 << 10) - 1) / (16 << 10))
        #expect(files.count >= expected && files.count <= 2 * expected + 1, "\(files.count) files for \(expected)")
        var frames: [FrameRecord] = []
        var switches: [RateSwitch] = []
        for (i, f) in files.enumerated() {
            let b = try bytes(f)
            #expect(sizeBeforeLastLine(b) <= rotation.maxBytes, "\(f): \(b.count) bytes")
            let log = try RunLog.read(path: f)
            var h = log.header
            h?.startedAt = wholeLog.header!.startedAt
            #expect(h == wholeLog.header, "every file starts with the run's header")
            #expect(log.segment == (files.count > 1 ? i + 1 : nil))
            #expect((log.continuation?.segment ?? 1) == i + 1)
            #expect(log.continuation?.framesBefore ?? 0 == frames.count)
            if i > 0 {
                #expect(
                    log.continuation?.carried == Array(frames.suffix(LogContinuation.carriedFrames)),
                    "the last frames before the cut")
            }
            #expect((log.rotated != nil) == (i < files.count - 1) && (log.end != nil) == (i == files.count - 1))
            if let r = log.rotated { #expect(r.frames == log.records.count) }
            // What `report` shows: this file's frames.
            let chart = ReportChart(log: log, width: 800, height: 480)
            #expect(chart.summary.frames == log.records.count)
            frames += log.records
            switches += log.rateSwitches
        }
        #expect(frames == wholeLog.records, "the files' frames, in order, are the unrotated log's")
        #expect(switches == wholeLog.rateSwitches)
        guard files.count > 1 else { return }
        // Replay: the first file, and every later one.
        let first = try Replay.run(try RunLog.read(path: files[0]))
        #expect(first.differences.isEmpty, "segment 1: \(first.differences)")
        #expect(first.note?.hasPrefix("segment 1 of a rotated log") == true)
        var held = 0
        for f in files.dropFirst() {
            let later = try Replay.run(try RunLog.read(path: f))
            let note = try #require(later.note)
            #expect(note.contains("carried from the previous file") && !note.contains("may differ"), "\(note)")
            // Known limit (see ReplaySegment): a fresh pacer rebuilds its model of vblank times
            // from the carried frames only, so under ±200 µs jitter its predicted target times,
            // and with them the on-time error statistics, can differ; every frame's fate may not.
            let tolerated = name == "events before their timestamps, latency 2" ? ["onTimeErrorUs"] : []
            let differences = later.differences.filter { d in !tolerated.contains { d.hasPrefix($0 + ":") } }
            #expect(differences.isEmpty, "\(name) \(f): \(later.differences)")
            #expect(later.recorded.frames > 0 && later.records.count == later.recorded.frames)
            if note.contains("held back 1 refresh by an earlier late frame") { held += 1 }
        }
        // No case holds the link back at a cut: after a late frame the link fires at its
        // full latency again (a callback found due at once fires at once; it was held one
        // refresh back for the rest of the run at latency 3 before issue 21).
        #expect(held == 0, "\(name): \(held) held back")
    }

    /// A limit below one header: every file holds the preamble and exactly one frame (the end
    /// line rides with the last one), and still reads on its own.
    @Test func limitBelowTheHeaderGivesOneFramePerFile() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        _ = try recordRotated(config(frames: 12), path: path, rotation: LogRotation(maxBytes: 100, keep: 100))
        let files = segments(path, keep: 100)
        #expect(files.count == 12)
        for (i, f) in files.enumerated() {
            let log = try RunLog.read(path: f)
            #expect(log.records.map(\.frame) == [i])
        }
    }

    /// keep 0: only the current file; keep 1: it and PATH.1. Older files are deleted.
    @Test(arguments: [0, 1, 3])
    func keepN(keep: Int) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        _ = try recordRotated(config(frames: 300), path: path, rotation: LogRotation(maxBytes: 8 << 10, keep: keep))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["run.jsonl"] + (0..<keep).map { "run.jsonl.\($0 + 1)" })
        let current = try RunLog.read(path: path)
        #expect(current.records.last?.frame == 299 && current.end != nil)
        #expect((current.continuation?.segment ?? 0) > keep + 1, "it rotated more often than it keeps")
        // The kept files are the newest ones, in order.
        var next = current.continuation!.framesBefore
        for age in 1...max(1, keep) where keep > 0 {
            let log = try RunLog.read(path: LogRotation.path(path, age: age))
            #expect(log.records.last!.frame == next - 1)
            next = log.continuation?.framesBefore ?? 0
        }
    }

    /// A rotation that cannot rename (PATH.1 is a non-empty directory): the log stops as a
    /// failed write does; the current file keeps its lines and reads like a killed run's log.
    /// A context line never starts a file: a run that ends just after one that no longer fits
    /// (a session's status tick, then the end line) leaves its last file with frames, readable,
    /// not with the context and end lines only ("no frame records").
    @Test func aContextLineNeverStartsAFile() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recorded = try RunLog.read(path: try recordRun(config(frames: 60), in: dir, name: "whole.jsonl").path)
        let path = dir + "/run.jsonl"
        let rotation = LogRotation(maxBytes: 8 << 10, keep: 100)
        let writer = try RunLogWriter(path: path, rotation: rotation)
        try writer.begin(recorded.header!)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Longer than a frame line (16 CPUs' frequencies): it does not fit after some frame.
        let context = ContextRecord(
            timeNs: 1, cpuTemperatureC: 50, thermal: [],
            cpuFrequencyMHz: (0..<16).map { ContextRecord.Frequency(cpu: $0, mhz: 3_200.5) })
        let contextBytes = try encoder.encode(context).count + 1
        var ended = false
        for r in recorded.records {
            try writer.write(r)
            // A second file, and the context line would not fit in it.
            if writer.file.segment >= 2,
                writer.file.bytesWritten + Int64(contextBytes) + RotatingLineFile.trailerReserve > rotation.maxBytes
            {
                try writer.write(context)
                ended = true
                break
            }
        }
        #expect(ended)
        try writer.end(recorded.end!.summary)
        let files = segments(path, keep: rotation.keep)
        #expect(files.count >= 2)
        for f in files { #expect(try !RunLog.read(path: f).records.isEmpty, "\(f)") }
        #expect(try RunLog.read(path: files.last!).end != nil)
    }

    @Test func failedRotationStopsTheLog() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        try FileManager.default.createDirectory(atPath: path + ".1/x", withIntermediateDirectories: true)
        let writer = try RunLogWriter(path: path, rotation: LogRotation(maxBytes: 8 << 10, keep: 1))
        let display = FakeDisplay()
        let c = config(frames: 100)
        let run = try PacingRun(backend: display, configuration: c)
        try writer.begin(RunLogHeader(backend: display, configuration: c))
        var errors: [String] = []
        run.onFrame = { r in
            do { try writer.write(FrameRecord(r)) } catch { errors.append(String(describing: error)) }
        }
        _ = try run.run()
        #expect(errors.count == 100 - writer.frames && writer.frames > 0)
        #expect(
            Set(errors).count == 1 && errors[0].contains("cannot rotate") && errors[0].contains("run.jsonl.1"),
            "\(errors.first ?? "")")
        let log = try RunLog.read(path: path)
        #expect(log.records.count == writer.frames && log.end == nil && log.rotated == nil && log.continuation == nil)
    }

    /// The reader refuses a continuation record anywhere but line 2, and lines after "rotated".
    @Test func misplacedSegmentRecordsAreRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        _ = try recordRotated(config(frames: 60), path: path, rotation: LogRotation(maxBytes: 8 << 10, keep: 5))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var l = text.split(separator: "\n").map(String.init)
        #expect(l[1].contains(#""record":"continuation""#))
        l.swapAt(1, 2)
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data(l.joined(separator: "\n").utf8), name: "x") }
        let old = try String(contentsOfFile: path + ".1", encoding: .utf8)
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data((old + l[3] + "\n").utf8), name: "y") }
    }

    /// A hostile continuation line (found by thinking like the fuzzer): carried frames out of
    /// range are refused by the reader, and a replay of carried frames that do not fit the file
    /// (a frame 2^53 − 1, a content clock at 0.1 Hz) ends as a difference, never a trap.
    @Test func hostileContinuationIsRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        var c = config(frames: 120)
        c.contentRate = 24
        _ = try recordRotated(c, path: path, rotation: LogRotation(maxBytes: 16 << 10, keep: 5))
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        var cont = try JSONDecoder().decode(LogContinuation.self, from: Data(lines[1].utf8))
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        cont.carried[0].frame = 1 << 60
        lines[1] = String(decoding: try enc.encode(cont), as: UTF8.self)
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data(lines.joined(separator: "\n").utf8), name: "x") }
        cont.carried[0].frame = (1 << 53) - 1
        cont.carried[0].intent.requestedTimeNs = 1 << 61
        lines[1] = String(decoding: try enc.encode(cont), as: UTF8.self)
        var log = try RunLog.parse(Data(lines.joined(separator: "\n").utf8), name: "y")
        log.header?.contentRateHz = 0.1
        // Refused, or replayed as different: never a trap.
        if let r = try? Replay.run(log) { #expect(!r.differences.isEmpty) }
    }
}

/// Issue 21: the frames a seat pause cuts off and the pause's own line share a file, wherever
/// the rotation falls, and every file still keeps to the limit (its last line, the trailer,
/// aside).
@Suite struct PauseRotationTests {
    @Test(arguments: [1, 2, 3])
    func theFramesAPauseCutsOffStayWithItsLine(latency: Int) throws {
        var together = 0
        for step in 0..<40 {
            let dir = NSTemporaryDirectory() + "pause-rotation-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var config = RunConfiguration()
            config.frames = 90
            config.latency = latency
            var fake = FakeDisplayConfiguration(refreshHz: 60)
            // The pause moves through a file's span, 13 ms at a time.
            fake.faults = [.sessionPaused(after: 400_000_000 + Nanoseconds(step) * 13_000_000, for: 50_000_000)]
            let path = dir + "/run.jsonl"
            let rotation = LogRotation(maxBytes: 8 << 10, keep: 1_000)
            _ = try LogRotationTests().recordRotated(config, fake: fake, path: path, rotation: rotation)
            for file in LogRotationTests().segments(path, keep: 1_000) {
                let b = try LogRotationTests().bytes(file)
                #expect(LogRotationTests().sizeBeforeLastLine(b) <= 8 << 10, "\(file): \(b.count) bytes")
                let lines = String(decoding: b, as: UTF8.self).split(separator: "\n").map(String.init)
                // After the continuation line's carried frames, a cut-off frame is followed by
                // more cut-off frames and then the pause line.
                let cutOff = { (l: String) in
                    l.contains(#""cause":"session-paused""#) && !l.contains(#""record":"continuation""#)
                }
                for (i, line) in lines.enumerated() where cutOff(line) {
                    guard let next = lines[(i + 1)...].first(where: { !cutOff($0) }) else {
                        Issue.record("step \(step), latency \(latency): \(file) ends with a cut-off frame")
                        continue
                    }
                    #expect(
                        next.contains(#""record":"session""#), "step \(step), latency \(latency): \(next.prefix(80))")
                    together += 1
                }
            }
        }
        // At latency 1 a pause cuts nothing off here (no frame waits behind the one in flight).
        #expect(latency == 1 || together >= 20, "cut-off frames seen: \(together)")
    }
}
