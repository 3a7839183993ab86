import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// `ReplayResult.report`: what `cadence replay --json` encodes.
@Suite struct ReplayReportTests {
    /// A 120-frame run on the fake display, frame 40 late by a refresh, logged to `dir/run.jsonl`
    /// (`dir` is created): the log's path and the run's summary.
    static func recordFakeRun(in dir: String) throws -> (path: String, summary: RunSummary) {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var config = RunConfiguration()
        config.frames = 120
        config.injectLate = [40: 1]
        let path = dir + "/run.jsonl"
        let writer = try RunLogWriter(path: path)
        let display = FakeDisplay(FakeDisplayConfiguration())
        let run = try PacingRun(backend: display, configuration: config)
        try writer.begin(RunLogHeader(backend: display, configuration: config))
        run.onFrame = { try? writer.write(FrameRecord($0)) }
        let summary = try run.run()
        try writer.end(summary)
        return (path, summary)
    }

    @Test func aReplayOfAFakeRunReportsItEqualToTheRecording() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("replayreport-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, summary) = try Self.recordFakeRun(in: dir)

        let result = try Replay.run(try RunLog.read(path: path))
        #expect(result.isEqual)
        let report = result.report
        #expect(report.equal && report.differences.isEmpty && report.divergences == 0)
        #expect(report.replayed.frames == 120 && report.recorded.droppedRefreshes == summary.droppedRefreshes)
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let json = String(decoding: try enc.encode(report), as: UTF8.self)
        #expect(json.hasPrefix("{\"differences\":[],\"divergences\":0,\"equal\":true,\"recorded\":{"))
        #expect(!json.contains("\"note\""))
    }
}
