import CadenceReport
import CadenceSession
import Foundation
import Testing

/// `LogReport`: which log `cadence report` draws, and its refusals.
@Suite struct LogReportTests {
    static let observeLog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("DRMTraceTests/Fixtures/vkms-inject-late.observe.jsonl").path

    @Test func anObserveLogDrawsTheClientWithTheMostFlipsOrTheOneNamed() throws {
        let r = try LogReport.read([Self.observeLog], client: nil, allowPartialLastLine: false, width: 800, height: 600)
        let observed = try #require(r.observed)
        #expect(r.isObserved)
        let drawn = try #require(r.drawn)
        #expect(drawn.client == observed.mostFlips()?.client)
        #expect(r.log.frameCount == drawn.log.frameCount)
        #expect(r.source == Self.observeLog)
        let named = try LogReport.read(
            [Self.observeLog], client: drawn.client, allowPartialLastLine: false, width: 800, height: 600)
        #expect(named.drawn?.client == drawn.client)
        #expect(
            throws: LogReport.Refusal.noSuchClient(
                path: Self.observeLog, client: "nosuch", clients: Set(observed.clients.map(\.client)).sorted())
        ) {
            try LogReport.read(
                [Self.observeLog], client: "nosuch", allowPartialLastLine: false, width: 800, height: 600)
        }
    }

    @Test func severalFilesAreOneRotatedRunLog() throws {
        #expect(throws: LogReport.Refusal.severalObserveLogs) {
            try LogReport.read(
                [Self.observeLog, "/nonexistent/run.jsonl.1"], client: nil, allowPartialLastLine: false, width: 800,
                height: 600)
        }
        #expect(throws: LogReport.Refusal.severalObserveLogs) {
            try LogReport.read(
                ["/a.jsonl", "/a.jsonl.1"], client: "x", allowPartialLastLine: false, width: 800, height: 600)
        }
        #expect(throws: LogReport.Refusal.noLog) {
            try LogReport.read([], client: nil, allowPartialLastLine: false, width: 800, height: 600)
        }
    }

    @Test func aRunLogIsDrawnInOnePassAndTakesNoClient() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("logreport-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("run.jsonl").path
        try Data("{\"type\":\"header\"}\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: LogReport.Refusal.clientOfRunLog(path: path)) {
            try LogReport.read([path], client: "x", allowPartialLastLine: false, width: 800, height: 600)
        }
    }
}
