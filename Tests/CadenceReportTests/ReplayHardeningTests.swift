import CadenceCore
import CadenceReport
import Foundation
import Testing

/// Regression tests for what fuzzing `cadence replay` and `cadence report` found
/// (tools/fuzz/Targets/replay, runlog): every log that parses either replays to an end or is
/// refused with one line; none traps or runs forever.
@Suite struct ReplayHardeningTests {
    func recorded(_ c: RunConfiguration, _ fake: FakeDisplayConfiguration = .init()) throws -> RunLog {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try RunLog.read(path: try recordRun(c, fake: fake, in: dir).path)
    }

    /// Found: a VRR log at a rate below the panel's range ran forever on replay (the run ended
    /// only at its frame count, which the replay never reached). Now bounded by the recording's
    /// span and equal to the recording.
    @Test(arguments: [(20_000_000 as Int64?, 0.0), (nil, 60.0), (nil, 47.0)])
    func vrrLogsReplayToTheEnd(_ minDuration: Int64?, _ preferred: Double) throws {
        var c = config(frames: 10)
        c.minimumDuration = minDuration
        c.range = FrameRateRange(minimum: 0, maximum: preferred, preferred: preferred)
        let log = try recorded(c, FakeDisplayConfiguration(refreshHz: 60, vrrRange: 48...144))
        let r = try Replay.run(log)
        #expect(r.differences == [], "\(r.differences)")
        #expect(r.replayed.frames == 10)
    }

    /// Found: two flips logged at one vblank sequence made the replayed sequence go backwards
    /// and the pacer's interval arithmetic trap (UInt64 → Int).
    @Test func aSequenceGoingBackwardsDoesNotTrap() throws {
        var log = try recorded(config(frames: 12, injectLate: [4: 1, 8: 2]))
        let i = try #require(log.records.firstIndex { $0.frame == 6 })
        log.records[i].sequence = log.records[i + 1].sequence
        let r = try Replay.run(log)
        #expect(r.replayed.frames <= 12)
    }

    /// Found (CI's 30 s fuzz run, replay target): a flip logged 10^12 refreshes after the one
    /// before it made the pacer predict a vblank time beyond Int64 (Double → Int64 trapped in
    /// `time(ofSequence:)` when checking a frame's completion timeout). Predictions now saturate;
    /// the replay ends and reports where it could not follow the recording.
    @Test func aSequenceJumpBeyondTheClockDoesNotTrap() throws {
        var log = try recorded(config(frames: 12, injectLate: [4: 1]))
        let i = try #require(log.records.firstIndex { $0.frame == 6 })
        for k in i..<log.records.count { log.records[k].sequence &+= 1_000_000_000_000 }
        let r = try Replay.run(log)
        #expect(r.replayed.frames <= 12)
        #expect(!r.differences.isEmpty)
    }

    /// Numbers no real run writes are refused with one line, before the pacer sees them.
    @Test func hostileNumbersAreRefused() throws {
        let good = try recorded(config(frames: 20))
        var edits: [(String, (inout RunLog) -> Void)] = []
        edits.append(("refresh 0", { $0.header!.refreshIntervalNs = 0 }))
        edits.append(("refresh NaN", { $0.header!.refreshIntervalNs = .nan }))
        edits.append(("refresh 1e300", { $0.header!.refreshIntervalNs = 1e300 }))
        edits.append(("VRR inverted", { $0.header!.vrrRangeHz = [144, 48] }))
        edits.append(("latency 9", { $0.header!.latency = 9 }))
        edits.append(("inject-late huge K", { $0.header!.injectLate = ["3": Int.max] }))
        edits.append(("min duration 1e18", { $0.header!.minDurationNs = 1_000_000_000_000_000_000 }))
        edits.append(("commit margin negative", { $0.header!.commitMarginNs = -5 }))
        edits.append(("queue capacity huge", { $0.header!.queueCapacity = 1 << 40 }))
        edits.append(("frame 10^12", { $0.records[3].frame = 1_000_000_000_000 }))
        edits.append(("negative time", { $0.records[3].flipNs = -1 }))
        edits.append(("time Int64.max", { $0.records[3].receivedNs = .max }))
        edits.append(("sequence 2^63", { $0.records[3].sequence = 1 << 63 }))
        edits.append(("busy retries huge", { $0.records[3].busyRetries = 1 << 40 }))
        edits.append(("flip time backwards", { $0.records[5].flipNs = $0.records[2].flipNs }))
        edits.append(("receipt an hour after every flip", { $0.records[4].receivedNs += 3_600_000_000_000 }))
        edits.append(("flips a year apart", {
            for i in $0.records.indices where i > 10 { $0.records[i].flipNs += 31_536_000_000_000_000 }
        }))
        for (name, edit) in edits {
            var log = good
            edit(&log)
            #expect(throws: ReplayDisplay.Unreplayable.self, "\(name)") { try Replay.run(log) }
        }
        #expect(try Replay.run(good).differences == [])
    }

    /// The reader refuses numbers no run writes, naming the line and the field.
    @Test func readerRefusesOutOfRangeFields() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: try recordRun(config(frames: 5), in: dir).path, encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        for (field, value, line) in [("\"flipNs\":", "-1", 3), ("\"intervalRefreshes\":", "99999999999", 4), ("\"frame\":", "-7", 2),
                                     ("\"refreshIntervalNs\":", "0", 1)] {
            var edited = lines
            let l = edited[line - 1]
            let r = try #require(l.range(of: field))
            let end = l[r.upperBound...].firstIndex { $0 == "," || $0 == "}" }!
            edited[line - 1] = String(l[..<r.upperBound]) + value + String(l[end...])
            let data = Data((edited.joined(separator: "\n") + "\n").utf8)
            #expect(throws: RunLog.Invalid.self, "\(field)") { try RunLog.parse(data, name: "x.jsonl") }
            do { _ = try RunLog.parse(data, name: "x.jsonl") } catch {
                #expect("\(error)".hasPrefix("x.jsonl: line \(line): ") && "\(error)".contains("out of range"), "\(error)")
            }
        }
        lines.removeLast()
        #expect(try RunLog.parse(Data((lines.joined(separator: "\n") + "\n").utf8), name: "x").records.count == 5)
    }

    /// Found by the runlog target: the accounting of frame lines with absurd values (report's
    /// analysis) trapped on overflow. It wraps now, and the picture is still drawn.
    @Test func reportOfAbsurdValuesDoesNotTrap() throws {
        var log = try recorded(config(frames: 20))
        for i in log.records.indices {
            log.records[i].intervalNs = .max
            log.records[i].hitchNs = .max
            log.records[i].lateRefreshes = 1
            log.records[i].droppedRefreshes = .max
            log.records[i].flipNs = i % 2 == 0 ? .min : .max
        }
        let s = LogAnalysis.summary(of: log)
        #expect(s.frames == 20)
        let chart = ReportChart(log: log, width: 480, height: 320)
        #expect(!SVGReport.svg(chart).isEmpty)
        #expect(!PNGReport.encode(chart).isEmpty)
    }
}
