import CadenceCore
import Foundation
import Testing
@testable import CadenceReport

/// `cadence observe --log` files read as run logs, on a fixture: the log `observe --from-trace`
/// wrote for a trace recorded on vkms in the VM beside `cadence run --inject-late 30:1,60:3`
/// (the kernel's own commit, 1 flip, and cadence, 62 flips with 4 dropped refreshes in 2
/// render-late events).
@Suite struct ObservedLogTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("DRMTraceTests/Fixtures/vkms-inject-late.observe.jsonl").path
    static var data: Data { FileManager.default.contents(atPath: fixture) ?? Data() }

    @Test func clientsAndTheMostFlips() throws {
        let log = try ObservedLog.parse(Self.data, name: "f")
        #expect(log.complete)
        #expect(log.clients.map(\.client) == ["(kernel)", "cadence"])
        #expect(log.clients.map { $0.log.records.count } == [1, 62])
        let c = try #require(log.mostFlips())
        #expect(c.client == "cadence" && c.pid == 123 && c.crtc == 0)
        #expect(log.mostFlips(command: "(kernel)")?.file == "0")
        #expect(log.mostFlips(command: "nope") == nil)
    }

    @Test func summaryEqualsTheOneObservePrinted() throws {
        let log = try ObservedLog.parse(Self.data, name: "f")
        for c in log.clients {
            let end = try #require(c.log.end?.summary)
            let again = LogAnalysis.summary(of: c.log)
            #expect(LogAnalysis.differences(again, end) == [], "client \(c.client)")
            #expect(again.backend == "observed")
        }
        let s = LogAnalysis.summary(of: log.mostFlips()!.log)
        #expect(s.presented == 62 && s.droppedRefreshes == 4 && s.dropEvents == 2 && s.causes == ["render-late": 2])
    }

    @Test func chartAndPNG() throws {
        let c = try #require(try ObservedLog.parse(Self.data, name: "f").mostFlips())
        let chart = ReportChart(log: c.log, width: 800, height: 480)
        #expect(chart.drops.map(\.droppedRefreshes) == [1, 3])
        #expect(chart.drops.allSatisfy { $0.cause == .renderLate })
        #expect(chart.histogram[1] == 59 && chart.histogram[2] == 1 && chart.histogram[4] == 1)
        #expect(chart.title.hasPrefix("observed 60.00 Hz"))
        let png = PNGReport.encode(chart)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(CSVExport.csv(c.log.records).split(separator: "\n").count == 63)
    }

    @Test func aKilledObservation() throws {
        // No end line: the summary comes from the flips alone, and the effective rate from the
        // expected interval logged with each flip.
        var lines = String(decoding: Self.data, as: UTF8.self).split(separator: "\n")
        lines.removeLast()
        let noEnd = Data((lines.joined(separator: "\n") + "\n").utf8)
        let log = try ObservedLog.parse(noEnd, name: "f")
        #expect(!log.complete)
        let s = LogAnalysis.summary(of: log.mostFlips()!.log)
        #expect(s.droppedRefreshes == 4 && s.dropEvents == 2)
        #expect(abs(s.effectiveRateHz - 60.0038) < 0.01)
        // A cut-off last line: refused, or dropped with allowPartialLastLine.
        let cut = Data((lines.joined(separator: "\n") + "\n" + lines[lines.count - 1].prefix(40)).utf8)
        #expect(throws: RunLog.Invalid.self) { try ObservedLog.parse(cut, name: "f") }
        let partial = try ObservedLog.parse(cut, name: "f", allowPartialLastLine: true)
        #expect(partial.mostFlips()!.log.records.count == 62)
    }

    @Test func logsWithoutTargets() throws {
        // Logs written before targetNs/targetSequence: the target is the flip less its hitch.
        let text = String(decoding: Self.data, as: UTF8.self)
        let stripped = text.replacingOccurrences(of: #","targetNs":\d+,"targetSequence":\d+"#, with: "", options: .regularExpression)
        #expect(stripped != text && !stripped.contains("targetNs"))
        let c = try #require(try ObservedLog.parse(Data(stripped.utf8), name: "f").mostFlips())
        let s = LogAnalysis.summary(of: c.log)
        #expect(s.droppedRefreshes == 4 && s.dropEvents == 2 && s.presented == 62)
        let late = c.log.records.filter { $0.droppedRefreshes > 0 }
        #expect(late.map { $0.flipNs - $0.intent.targetTimeNs } == late.map(\.hitchNs))
        #expect(late.map { $0.sequence - $0.intent.targetSequence } == [1, 3])
    }

    @Test func telling() throws {
        #expect(ObservedLog.isObserveLog(Self.data))
        #expect(!ObservedLog.isObserveLog(Data(#"{"record":"run","version":1}"#.utf8)))
        #expect(!ObservedLog.isObserveLog(Data("not json\n".utf8)))
        let header = #"{"record":"observe","version":1}"#
        #expect(throws: RunLog.Invalid("f: no observed flips (nothing flipped while it was observed)")) {
            try ObservedLog.parse(Data((header + "\n").utf8), name: "f")
        }
        #expect(throws: RunLog.Invalid("f: line 2: unknown record 'context' in an observe log")) {
            try ObservedLog.parse(Data((header + "\n" + #"{"record":"context","version":1}"# + "\n").utf8), name: "f")
        }
        #expect(throws: RunLog.Invalid("f: line 1: unknown observe log version 2 (this build reads 1)")) {
            try ObservedLog.parse(Data(#"{"record":"observe","version":2}"#.utf8 + [0x0A]), name: "f")
        }
        #expect(throws: RunLog.Invalid("f: line 2: malformed observed frame record")) {
            try ObservedLog.parse(Data((header + "\n" + #"{"record":"frame","kind":"observed","crtc":0}"# + "\n").utf8), name: "f")
        }
    }
}
