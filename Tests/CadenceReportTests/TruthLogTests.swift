import CadenceCore
import CadenceReport
import Foundation
import Testing

/// The log fields and records added for copy-late, the on-time error and `--adapt`: written,
/// read back (old logs without them too), replayed exactly and drawn.
@Suite struct TruthLogTests {
    func adaptConfig() throws -> RunConfiguration {
        var c = config(frames: 400)
        c.adapt = true
        c.renderCost = try RunSpec.renderCost("100-199:20")
        return c
    }

    @Test func aSlowCopyIsLoggedReplayedAndDrawn() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var fake = FakeDisplayConfiguration()
        fake.copyCost = 1_000_000
        fake.faults = [.slowCopy(finish: 50, cost: 20_000_000)]
        let (path, recorded) = try recordRun(config(frames: 120), fake: fake, in: dir)
        #expect(recorded.causes == ["copy-late": 1])
        let log = try RunLog.read(path: path)
        let r50 = try #require(log.records.first { $0.frame == 50 })
        #expect(r50.cause == .copyLate && r50.copyEndNs! - r50.renderEndNs == 20_000_000)
        #expect(LogAnalysis.summary(of: log) == recorded)
        let result = try Replay.run(log)
        #expect(result.differences == [] && result.divergences == 0)
        #expect(result.records.first { $0.frame == 50 }?.cause == .copyLate)
        // CSV: the copy time per frame; the report: a copy-late marker in its own colour.
        let csv = CSVExport.csv(log.records).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let col = CSVExport.columns.firstIndex(of: "MsCopy")!
        #expect(csv[51][col] == "20.000" && csv[52][col] == "1.000" && csv[51][CSVExport.columns.firstIndex(of: "Cause")!] == "copy-late")
        let svg = SVGReport.svg(ReportChart(log: log))
        #expect(svg.contains("class=\"drop copy-late\" data-frame=\"50\""))
        #expect(svg.contains(String(format: "#%06X", ReportChart.color(.copyLate))))
    }

    /// A log written before copyEndNs, onTimeErrorUs and the rate-switch records existed (the
    /// fields removed from every line) still reads, reports and replays as equal.
    @Test func oldLogsStillReadAndReplay() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 200, injectLate: [50: 1]), in: dir)
        var lines: [String] = []
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            var o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            o["copyEndNs"] = nil
            if var s = o["summary"] as? [String: Any] { s["onTimeErrorUs"] = nil; o["summary"] = s }
            lines.append(String(decoding: try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]), as: UTF8.self))
        }
        #expect(!lines.joined().contains("copyEndNs") && !lines.joined().contains("onTimeErrorUs"))
        let log = try RunLog.parse(Data((lines.joined(separator: "\n") + "\n").utf8), name: "old.jsonl")
        #expect(log.records.count == 200 && log.records.allSatisfy { $0.copyEndNs == nil })
        #expect(log.end?.summary.onTimeErrorUs == nil)
        #expect(CSVExport.csv(log.records).split(separator: "\n")[1].hasSuffix(",NA"))
        let result = try Replay.run(log)
        #expect(result.differences == [])
        #expect(result.replayed.onTimeErrorUs != nil)
    }

    @Test func rateSwitchesAreLoggedReadReplayedAndMarked() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, recorded) = try recordRun(try adaptConfig(), in: dir)
        #expect(recorded.rateSwitches == 2)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.split(separator: "\n").filter { $0.contains("\"record\":\"rate-switch\"") }.count == 2)
        let log = try RunLog.read(path: path)
        #expect(log.header?.adapt == true && log.header?.renderCost == [RenderCost(first: 100, last: 199, costNs: 20_000_000)])
        #expect(log.rateSwitches.map(\.frame) == [103, 260] && log.rateSwitches.map(\.toHz) == [30, 60])
        #expect(log.records.count == 400)
        #expect(LogAnalysis.summary(of: log).droppedRefreshes == recorded.droppedRefreshes)
        let result = try Replay.run(log)
        #expect(result.differences == [] && result.divergences == 0)
        #expect(result.rateSwitches == log.rateSwitches.map { var s = $0; s.timeNs = result.rateSwitches.first { $0.frame == s.frame }?.timeNs ?? 0; return s })
        // A replay that switched elsewhere is reported as different.
        var moved = log
        moved.rateSwitches[1].frame = 261
        #expect(try Replay.run(moved).differences.contains { $0.hasPrefix("rate switches") })
        let chart = ReportChart(log: log)
        #expect(chart.rateSwitches.count == 2)
        let svg = SVGReport.svg(chart)
        #expect(svg.contains("class=\"rate-switch down\" data-frame=\"103\" data-from-hz=\"60.0\" data-to-hz=\"30.0\""))
        #expect(svg.contains("class=\"rate-switch up\" data-frame=\"260\""))
        #expect(svg.contains(">60→30 Hz<") && svg.contains(">30→60 Hz<"))
        let html = HTMLReport.html(chart, log: log, source: "adapt.jsonl")
        #expect(html.contains("<h2>Rate switches</h2>") && html.contains("on-time error"))
        #expect(PNGReport.encode(chart).count > 1000)
    }

    @Test func aRateSwitchRecordAfterTheEndIsRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(try adaptConfig(), in: dir)
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let sw = text.split(separator: "\n").first { $0.contains("rate-switch") }!
        text += sw + "\n"
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data(text.utf8), name: "x.jsonl") }
        let bad = text.replacingOccurrences(of: "\"direction\":\"down\"", with: "\"direction\":1")
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data(bad.utf8), name: "x.jsonl") }
    }
}
