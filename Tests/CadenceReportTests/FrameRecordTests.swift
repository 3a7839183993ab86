import CadenceCore
import CadenceReport
import Foundation
import Testing

/// The JSONL frame record (`--log`): what it keeps of a ``FrameReport``, one line per frame.
@Suite struct FrameRecordTests {
    /// The frame reports of a 60 Hz fake-display run with `faults` (and a copy cost).
    func reports(frames: Int = 120, copyCost: Nanoseconds = 0, faults: [FakeFault] = [], injectLate: [Int: Int] = [:]) throws -> [FrameReport] {
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.copyCost = copyCost
        f.faults = faults
        var c = RunConfiguration()
        c.frames = frames
        c.injectLate = injectLate
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        _ = try run.run()
        return out.sorted { $0.frameIndex < $1.frameIndex }
    }

    @Test func recordRoundTripsAsJSONLines() throws {
        var c = RunConfiguration()
        c.frames = 30
        c.injectLate = [10: 2]
        let run = try PacingRun(backend: FakeDisplay(.init(refreshHz: 60)), configuration: c)
        // Each record as the CLI's log writer (CadenceReport.RunLogWriter) encodes it: one line.
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lines: [Data] = []
        run.onFrame = { if let d = try? enc.encode(FrameRecord($0)) { lines.append(d) } }
        _ = try run.run()
        #expect(lines.count == 30)
        #expect(lines.allSatisfy { !$0.contains(0x0A) })
        let dec = JSONDecoder()
        let recs = try lines.map { try dec.decode(FrameRecord.self, from: $0) }
        #expect(recs.allSatisfy { $0.version == 1 && $0.crtc == 0 })
        #expect(recs[10].cause == .renderLate && recs[10].droppedRefreshes == 2 && recs[10].outcome == .late)
        #expect(recs[10].renderEndNs - recs[10].deadlineNs == 25_000_000)
        #expect(recs[10].flipNs - recs[10].intent.targetTimeNs == 33_333_333)
        #expect(recs[11].outcome == .onTime && recs[11].cause == nil)
    }

    @Test func recordKeepsTheSchedulerDelayTheCopyAndItsCause() throws {
        let stalled = try reports(faults: [.stall(atVBlank: 60, by: 20_000_000)])
        let late = try #require(stalled.first { $0.droppedRefreshes > 0 })
        #expect(late.schedulerDelay > 16_000_000)
        #expect(FrameRecord(late).schedulerDelayNs == late.schedulerDelay)
        #expect(FrameRecord(late).cause == .schedulerLate)
        let copied = try reports(copyCost: 2_000_000)
        #expect(copied.allSatisfy { FrameRecord($0).copyEndNs == $0.copyEnd && $0.copyEnd - $0.renderEnd == 2_000_000 })
        let slow = try reports(faults: [.slowCopy(finish: 50, cost: 20_000_000)])
        #expect(FrameRecord(slow[50]).cause == .copyLate && FrameRecord(slow[50]).outcome == .late)
    }
}
