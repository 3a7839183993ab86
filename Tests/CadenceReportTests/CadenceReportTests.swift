import CadenceCore
import CadenceReport
import Foundation
import Raster
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct RunLogTests {
    @Test func roundTripKeepsEveryRecordAndTheSummary() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, summary) = try recordRun(config(injectLate: [100: 1, 250: 3]), in: dir)
        let log = try RunLog.read(path: path)
        #expect(log.header?.backend == "fake")
        #expect(log.header?.injectLate == ["100": 1, "250": 3])
        #expect(log.records.count == 600)
        #expect(log.end?.summary == summary)
        // Re-accounting the logged frames gives the run's summary exactly.
        #expect(LogAnalysis.summary(of: log) == summary)
        #expect(summary.droppedRefreshes == 4 && summary.dropEvents == 2)
        // The header reproduces the configuration.
        #expect(log.header?.configuration.injectLate == [100: 1, 250: 3])
        #expect(log.header?.configuration.frames == 600)
    }

    @Test func everyLineIsWholeAsSoonAsItIsWritten() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try RunLogWriter(path: dir + "/a.jsonl")
        let display = FakeDisplay()
        let run = try PacingRun(backend: display, configuration: config(frames: 30))
        try writer.begin(RunLogHeader(backend: display, configuration: config(frames: 30)))
        var linesSeen: [Int] = []
        run.onFrame = { r in
            try? writer.write(FrameRecord(r))
            // Without closing or flushing, the file already holds every line written so far.
            let text = (try? String(contentsOfFile: dir + "/a.jsonl", encoding: .utf8)) ?? ""
            linesSeen.append(text.split(separator: "\n").count)
            #expect(text.hasSuffix("\n"))
        }
        _ = try run.run()
        #expect(linesSeen == Array(2...31))
    }

    @Test func rejectsForeignTruncatedAndUnknownLogs() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 20), in: dir)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        func check(_ data: Data, _ fragment: String, allowPartial: Bool = false) {
            do {
                _ = try RunLog.parse(data, name: "x.jsonl", allowPartialLastLine: allowPartial)
                Issue.record("accepted: \(fragment)")
            } catch let e as RunLog.Invalid {
                #expect(e.description.contains(fragment), "\(e.description)")
                #expect(!e.description.contains("\n"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        check(Data(), "empty file")
        check(Data("hello world\n".utf8), "not a JSON object")
        check(Data("{\"name\":\"something else\"}\n".utf8), "not a frame record")
        check(Data("a,b,c\n1,2,3\n".utf8), "not a JSON object")
        // Cut in the middle of the 5th line.
        let cut = good.prefix(good.split(separator: 0x0A).prefix(4).reduce(0) { $0 + $1.count + 1 } + 40)
        check(cut, "cut off")
        // With --allow-partial the complete lines are read.
        let partial = try RunLog.parse(cut, name: "x", allowPartialLastLine: true)
        #expect(partial.records.count == 3 && partial.skippedPartialBytes == 40 && partial.end == nil)
        // A newer log version (the header's) or frame version is refused.
        let text = String(decoding: good, as: UTF8.self)
        let newerLog = text.replacingOccurrences(of: "\"version\":2}", with: "\"version\":9}")
        check(Data(newerLog.utf8), "line 1: unknown log version 9 (this build reads 1 to 3)")
        let newerFrame = text.replacingOccurrences(of: "\"version\":1,\"wakeNs\"", with: "\"version\":9,\"wakeNs\"")
        check(Data(newerFrame.utf8), "line 2: unknown frame record version 9")
        // A header only is not a log.
        let headerOnly = good.prefix(through: good.firstIndex(of: 0x0A)!)
        check(Data(headerOnly), "no frame records")
    }

    @Test func killedRunLogWithoutEndLineIsStillAnalysed() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(injectLate: [100: 1]), in: dir)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let killed = lines.prefix(301).joined(separator: "\n") + "\n"  // header + 300 frames, no end
        let log = try RunLog.parse(Data(killed.utf8), name: "k")
        #expect(log.end == nil && log.records.count == 300)
        let s = LogAnalysis.summary(of: log)
        #expect(s.frames == 300 && s.droppedRefreshes == 1 && s.dropEvents == 1)
        #expect(s.endReason.hasPrefix("unfinished"))
    }
}

@Suite struct CSVTests {
    @Test func presentMonColumnsAndValues() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 300, injectLate: [100: 1, 250: 3]), in: dir)
        let log = try RunLog.read(path: path)
        let rows = CSVExport.csv(log.records).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let head = rows[0]
        for c in ["MsBetweenPresents", "MsBetweenDisplayChange", "MsUntilDisplayed", "Dropped", "Sequence", "Cause"] {
            #expect(head.contains(c))
        }
        #expect(rows.count == 301)
        func col(_ row: [String], _ name: String) -> String { row[head.firstIndex(of: name)!] }
        let r100 = rows.first { col($0, "Frame") == "100" }!
        #expect(col(r100, "MsBetweenDisplayChange") == "33.333")
        #expect(col(r100, "Cause") == "render-late")
        #expect(col(r100, "Dropped") == "0")
        #expect(col(r100, "DroppedRefreshes") == "1")
        let r250 = rows.first { col($0, "Frame") == "250" }!
        #expect(col(r250, "MsBetweenDisplayChange") == "66.667")
        #expect(col(r250, "DroppedRefreshes") == "3")
        let r50 = rows.first { col($0, "Frame") == "50" }!
        #expect(col(r50, "MsBetweenDisplayChange") == "16.667")
        #expect(col(r50, "MsUntilDisplayed") == "16.667")
        #expect(col(r50, "Cause") == "")
        #expect(col(r50, "Sequence") == "1051")
    }

    @Test func framesNeverShownAreDroppedWithNA() throws {
        var rec = FrameReport()
        rec.frameIndex = 7
        rec.id = 8
        rec.outcome = .discarded
        rec.cause = .renderLate
        rec.renderEnd = 5
        let csv = CSVExport.csv([FrameRecord(rec)])
        let row = csv.split(separator: "\n")[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let head = CSVExport.columns
        #expect(row[head.firstIndex(of: "Dropped")!] == "1")
        #expect(row[head.firstIndex(of: "MsUntilDisplayed")!] == "NA")
        #expect(row[head.firstIndex(of: "Sequence")!] == "NA")
        #expect(row[head.firstIndex(of: "Outcome")!] == "discarded")
    }
}

@Suite struct CriteriaTests {
    func summary(_ inject: [Int: Int]) throws -> (RunSummary, RunLog) {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, s) = try recordRun(config(frames: 600, injectLate: inject), in: dir)
        return (s, try RunLog.read(path: path))
    }

    @Test func thresholdsGate() throws {
        let (s, log) = try summary([100: 1, 250: 3])
        var c = ValidationCriteria()
        c.maxDropped = 4
        c.maxDropEvents = 2
        c.refreshTolerancePercent = 0.1
        c.minRateHz = 59
        c.maxJitterMs = 0.5
        let hz = LogAnalysis.measuredRefreshHz(log.records)
        #expect(abs(hz! - 60) < 1e-6)
        #expect(c.evaluate(s, measuredRefreshHz: hz).filter { !$0.passed }.isEmpty)
        c.maxDropped = 3
        c.maxDropEvents = 1
        c.minRateHz = 59.9
        let r = c.evaluate(s, measuredRefreshHz: hz)
        #expect(r.filter { !$0.passed }.map(\.name) == ["max-dropped", "max-drop-events", "min-rate"])
        #expect(r.first { $0.name == "max-dropped" }!.detail == "dropped refreshes 4 (limit 3)")
        // A refresh 1% off fails a 0.5% tolerance.
        var t = ValidationCriteria()
        t.refreshTolerancePercent = 0.5
        #expect(t.evaluate(s, measuredRefreshHz: 60.6).map(\.passed) == [false])
        #expect(t.evaluate(s, measuredRefreshHz: nil).map(\.passed) == [false])
    }

    @Test func jitterIsP99DeviationFromTheNominalInterval() throws {
        let (s, _) = try summary([:])
        var c = ValidationCriteria()
        c.maxJitterMs = 0.001
        #expect(c.evaluate(s, measuredRefreshHz: nil).map(\.passed) == [true])
        var late = s
        late.intervalMs.p99 = 33.333
        #expect(c.evaluate(late, measuredRefreshHz: nil).map(\.passed) == [false])
    }

    @Test func invalidThresholds() {
        var c = ValidationCriteria()
        c.maxDropped = -1
        #expect(throws: ValidationCriteria.Invalid.self) { try c.validate() }
        c = ValidationCriteria()
        c.refreshTolerancePercent = .nan
        #expect(throws: ValidationCriteria.Invalid.self) { try c.validate() }
        #expect(ValidationCriteria().isEmpty)
    }

    @Test func junitHasOneCasePerCriterionAndFailures() throws {
        let (s, _) = try summary([100: 1])
        let results = [CriterionResult(name: "max-dropped", passed: false, detail: "dropped refreshes 1 (limit 0) <&>"),
                       CriterionResult(name: "min-rate", passed: true, detail: "ok")]
        let xml = JUnitReport.xml(results, summary: s, seconds: 1.5)
        #expect(xml.contains("<testsuite name=\"cadence.validate\" tests=\"2\" failures=\"1\""))
        #expect(xml.components(separatedBy: "<testcase ").count == 3)
        #expect(xml.contains("<failure message=\"dropped refreshes 1 (limit 0) &lt;&amp;&gt;\""))
        // Well-formed XML.
        let doc = try XMLDocument(xmlString: xml)
        let failures = elements(doc.rootElement()!, "failure")
        #expect(failures.count == 1)
    }
}

/// Every element named `name` under `node`, in document order.
func elements(_ node: XMLNode, _ name: String) -> [XMLElement] {
    var out: [XMLElement] = []
    if let e = node as? XMLElement, (e.localName ?? e.name) == name { out.append(e) }
    for c in node.children ?? [] { out += elements(c, name) }
    return out
}

/// RGB of a canvas pixel (0xFF000000 marks "outside").
func px(_ c: Canvas, x: Int, y: Int) -> UInt32 { c.pixel(x: x, y: y).map { $0 & 0xFFFFFF } ?? 0xFF00_0000 }

@Suite struct ReportPictureTests {
    func chart() throws -> (ReportChart, RunLog) {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 600, injectLate: [100: 1, 250: 3]), in: dir)
        let log = try RunLog.read(path: path)
        return (ReportChart(log: log, width: 1000, height: 600), log)
    }

    @Test func pngMarksDropsAtTheirFramesInTheCauseColour() throws {
        let (chart, _) = try chart()
        #expect(chart.drops.map(\.frame) == [100, 250])
        #expect(chart.drops.map(\.cause) == [.renderLate, .renderLate])
        let bmp = PNGReport.render(chart)
        let c = bmp.canvas
        #expect(bmp.width == 1000 && bmp.height == 600)
        let red = ReportChart.color(.renderLate)
        for f in [100, 250] {
            let m = chart.markerCenter(frame: f)
            #expect(px(c, x: Int(m.x.rounded()), y: Int(m.y.rounded())) == red, "frame \(f)")
        }
        for f in [50, 175, 400] {
            let m = chart.markerCenter(frame: f)
            #expect(px(c, x: Int(m.x.rounded()), y: Int(m.y.rounded())) != red, "frame \(f)")
        }
        // The interval line sits on the 1-refresh gridline at an ordinary frame, above it at the drops.
        let y1 = chart.y(intervalMs: chart.refreshMs)
        #expect(abs(y1 - chart.y(intervalMs: 16.6667)) < 0.01)
        let lineAt400 = px(c, x: Int(chart.x(frame: 400).rounded()), y: Int(y1.rounded()))
        #expect(lineAt400 == ReportChart.lineColor)
        let y4 = Int(chart.y(intervalMs: 4 * chart.refreshMs).rounded())
        #expect(px(c, x: Int(chart.x(frame: 250).rounded()), y: y4) == ReportChart.lineColor)
        // Histogram: 1×, 2×, 4× present; 3× empty.
        let bars = chart.histogramBars
        #expect(bars.map(\.count) == [597, 1, 0, 1])
        // PNG bytes: signature and IHDR size.
        let png = PNGReport.encode(chart)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let w = png[16..<20].reduce(0) { $0 << 8 | Int($1) }, h = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(w == 1000 && h == 600)
    }

    @Test func svgCarriesTheSameMarks() throws {
        let (chart, log) = try chart()
        let svg = SVGReport.svg(chart)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        // FoundationXML reads attributes of namespaced elements poorly: check the same text without it.
        let doc = try XMLDocument(xmlString: svg.replacingOccurrences(of: " xmlns=\"http://www.w3.org/2000/svg\"", with: ""))
        #expect(doc.rootElement()?.attribute(forName: "width")?.stringValue == "1000")
        // The timeline's axis is in refreshes (1×, 2×, …), and its caption says so (it said
        // "frame interval (ms)"); the histogram's too.
        let captions = elements(doc.rootElement()!, "text").compactMap(\.stringValue)
        #expect(captions.contains("frame interval in refreshes by frame (1 refresh = 16.667 ms)"))
        #expect(captions.contains("intervals in refresh units") && !captions.contains { $0.contains("(ms)") })
        let drops = elements(doc.rootElement()!, "circle").filter { $0.attribute(forName: "data-frame") != nil }
        #expect(drops.map { $0.attribute(forName: "data-frame")!.stringValue! } == ["100", "250"])
        for d in drops {
            let f = Int(d.attribute(forName: "data-frame")!.stringValue!)!
            let cx = Double(d.attribute(forName: "cx")!.stringValue!)!
            #expect(abs(cx - chart.x(frame: f)) < 0.01)
            #expect(d.attribute(forName: "fill")!.stringValue == String(format: "#%06X", ReportChart.color(.renderLate)))
        }
        let bars = elements(doc.rootElement()!, "rect").filter { $0.attribute(forName: "class")?.stringValue == "bar" }
        #expect(bars.map { $0.attribute(forName: "data-count")!.stringValue! } == ["597", "1", "0", "1"])
        let gridlines = elements(doc.rootElement()!, "line").filter { $0.attribute(forName: "class")?.stringValue == "gridline" }
        #expect(gridlines.count == chart.yMaxRefreshes + 1)
        let html = HTMLReport.html(chart, log: log, source: "run.jsonl")
        #expect(html.contains("<svg") && html.contains("<td>250</td><td>late</td><td>render-late</td><td>3</td>"))
    }

    @Test func distinctColoursPerCause() {
        let colours = Set(DropCause.allCases.map(ReportChart.color))
        #expect(colours.count == DropCause.allCases.count)
        #expect(!colours.contains(ReportChart.lineColor) && !colours.contains(ReportChart.background))
    }
}
