import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// Reading a run log in one pass (`RunLog.stream`, `ReportChart.read`): the same log, the same
/// errors and the same pictures as reading it whole, without keeping the frame records.
@Suite struct StreamedLogTests {
    /// Logs of several shapes, written to `dir`: name → path.
    func logs(_ dir: String) throws -> [(String, String)] {
        var out: [(String, String)] = []
        out.append(
            (
                "late frames",
                try recordRun(config(frames: 600, injectLate: [100: 1, 250: 3]), in: dir, name: "a.jsonl").path
            ))
        // More than the reader's 1 MiB buffer: lines cross its ends.
        out.append(
            (
                "3000 frames, latency 2",
                try recordRun(config(frames: 3000, latency: 2, injectLate: [7: 2, 2999: 1]), in: dir, name: "b.jsonl")
                    .path
            ))
        var content = config(frames: 300)
        content.contentRate = 23.976
        out.append(("content rate", try recordRun(content, in: dir, name: "c.jsonl").path))
        var vrr = FakeDisplayConfiguration(refreshHz: 144)
        vrr.vrrRange = 48...144
        var v = config(frames: 300, injectLate: [40: 2])
        v.range = FrameRateRange(minimum: 48, maximum: 144, preferred: 90)
        out.append(("vrr", try recordRun(v, fake: vrr, in: dir, name: "d.jsonl").path))
        var adapt = config(frames: 400)
        adapt.adapt = true
        adapt.renderCost = [RenderCost(first: 100, last: 199, costNs: 20_000_000)]
        out.append(("adapt", try recordRun(adapt, in: dir, name: "e.jsonl").path))
        let tree = try FakeSystemTree()
        defer { tree.remove() }
        out.append(("context", try SystemContextTests().logWithContext(dir, tree: tree)))
        // Without a header (refresh estimated), and cut off in the last line.
        let a = try String(contentsOfFile: out[0].1, encoding: .utf8)
        let headerless = dir + "/headerless.jsonl"
        try Data(a.split(separator: "\n").dropFirst().joined(separator: "\n").utf8).write(
            to: URL(fileURLWithPath: headerless))
        out.append(("headerless", headerless))
        let cut = dir + "/cut.jsonl"
        try Data(a.utf8.dropLast(200)).write(to: URL(fileURLWithPath: cut))
        out.append(("cut", cut))
        return out
    }

    func sameLog(_ a: RunLog, _ b: RunLog) -> Bool {
        a.header == b.header && a.end == b.end && a.context == b.context && a.sessions == b.sessions
            && a.rateSwitches == b.rateSwitches && a.continuation == b.continuation && a.rotated == b.rotated
            && a.carriedSessions == b.carriedSessions && a.skippedPartialBytes == b.skippedPartialBytes
    }

    @Test func streamedLogsAndChartsEqualThoseReadWhole() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (name, path) in try logs(dir) {
            let partial = name == "cut"
            let whole = try RunLog.parse(
                try Data(contentsOf: URL(fileURLWithPath: path)), name: path, allowPartialLastLine: partial)
            var records: [FrameRecord] = []
            let streamed = try RunLog.stream(path: path, allowPartialLastLine: partial) { records.append($0) }
            #expect(records == whole.records, "\(name)")
            #expect(
                streamed.records.isEmpty && streamed.frameCount == whole.records.count
                    && streamed.frameSpan == whole.frameSpan)
            #expect(sameLog(streamed, whole), "\(name)")
            let read = try RunLog.read(path: path, allowPartialLastLine: partial)
            #expect(read.records == whole.records && sameLog(read, whole))

            let (chart, log) = try ReportChart.read(path: path, allowPartialLastLine: partial, width: 900, height: 600)
            let reference = ReportChart(log: whole, width: 900, height: 600)
            #expect(chart.summary == reference.summary && chart.summary == LogAnalysis.summary(of: whole), "\(name)")
            #expect(
                chart.points == reference.points && chart.drops == reference.drops
                    && chart.histogram == reference.histogram)
            #expect(chart.temperatures == reference.temperatures && chart.refreshMs == reference.refreshMs)
            #expect(SVGReport.svg(chart) == SVGReport.svg(reference), "\(name)")
            #expect(
                HTMLReport.html(chart, log: log, source: "x") == HTMLReport.html(reference, log: whole, source: "x"),
                "\(name)")
            if name == "late frames" || name == "context" {
                #expect(PNGReport.encode(chart) == PNGReport.encode(reference), "\(name)")
            }
        }
    }

    @Test func streamedChartKnownAnswers() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, summary) = try recordRun(config(frames: 600, injectLate: [100: 1, 250: 3]), in: dir)
        let (chart, log) = try ReportChart.read(path: path)
        #expect(log.records.isEmpty && log.frameCount == 600 && log.frameSpan == 0...599)
        #expect(
            chart.summary == summary && summary.frames == 600 && summary.droppedRefreshes == 4
                && summary.dropEvents == 2)
        #expect(chart.drops.map(\.frame) == [100, 250] && chart.drops.map(\.droppedRefreshes) == [1, 3])
        #expect(
            chart.drops.allSatisfy { $0.cause == .renderLate && $0.outcome == .late }
                && chart.drops.map(\.lateRefreshes) == [1, 3])
        // 599 intervals: 597 of one refresh, one of 2 and one of 4.
        #expect(
            chart.points.count == 599 && chart.histogram[1] == 597 && chart.histogram[2] == 1 && chart.histogram[4] == 1
        )
        #expect(chart.firstFrame == 0 && chart.lastFrame == 599)
        // The HTML's drop table lists the late refreshes.
        let html = HTMLReport.html(chart, log: log, source: "run.jsonl")
        #expect(html.contains("<tr><td>250</td><td>late</td><td>render-late</td><td>3</td><td>3</td></tr>"))
    }

    /// A file of a rotated log read on its own: its segment line names its own frames.
    @Test func aRotatedFileStreamedNamesItsSegment() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/rot.jsonl"
        _ = try LogRotationTests().recordRotated(
            config(frames: 600, injectLate: [300: 2]), path: path, rotation: LogRotation(maxBytes: 160_000, keep: 5))
        let later = LogRotation.path(path, age: 1)
        let whole = try RunLog.read(path: later)
        let (chart, streamed) = try ReportChart.read(path: later)
        #expect(streamed.segmentDescription == whole.segmentDescription)
        let d = try #require(streamed.segmentDescription)
        #expect(d.hasPrefix("segment ") && d.hasSuffix("continued in the next file)"))
        #expect(
            HTMLReport.html(chart, log: streamed, source: "x")
                == HTMLReport.html(ReportChart(log: whole), log: whole, source: "x"))
    }

    /// The same one-line errors as reading the file whole, on the fuzz corpus and on it with
    /// bytes changed or cut.
    @Test func streamedErrorsAreThoseOfTheWholeRead() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let corpus = root.appendingPathComponent("tools/fuzz/corpus/runlog").path
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func outcome(_ path: String, stream: Bool, partial: Bool) -> String {
            do {
                if stream {
                    var n = 0
                    let log = try RunLog.stream(path: path, allowPartialLastLine: partial) { _ in n += 1 }
                    return "\(n) \(log.skippedPartialBytes) \(log.end != nil)"
                }
                let log = try RunLog.parse(
                    try Data(contentsOf: URL(fileURLWithPath: path)), name: path, allowPartialLastLine: partial)
                return "\(log.records.count) \(log.skippedPartialBytes) \(log.end != nil)"
            } catch {
                return "\(error)"
            }
        }
        var g = SplitMix64(seed: 3)
        var errors = 0, checked = 0
        for f in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted() {
            let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: corpus + "/" + f)))
            for k in 0..<30 {
                var m = d
                if k > 0 {
                    switch Int.random(in: 0..<3, using: &g) {
                    case 0:
                        m[Int.random(in: 0..<m.count, using: &g)] = [0x0A, 0x31, 0x7D, 0x22, 0x2C].randomElement(
                            using: &g)!
                    case 1: m.removeLast(Int.random(in: 1..<m.count, using: &g))
                    default: m.insert(0x0A, at: Int.random(in: 0..<m.count, using: &g))
                    }
                }
                let path = dir + "/" + f
                try Data(m).write(to: URL(fileURLWithPath: path))
                for partial in [false, true] {
                    let a = outcome(path, stream: true, partial: partial)
                    #expect(a == outcome(path, stream: false, partial: partial), "\(f) #\(k)")
                    if a.hasPrefix(path) { errors += 1 }
                    checked += 1
                }
            }
        }
        #expect(checked == 7 * 30 * 2 && errors > 50)
        // No file, a directory, an empty file.
        #expect(throws: RunLog.Invalid("\(dir)/none.jsonl: no such file")) {
            try RunLog.stream(path: dir + "/none.jsonl") { _ in }
        }
        #expect(throws: RunLog.Invalid("\(dir): cannot be read (a directory)")) {
            try RunLog.stream(path: dir) { _ in }
        }
        try Data().write(to: URL(fileURLWithPath: dir + "/empty.jsonl"))
        #expect(throws: RunLog.Invalid("\(dir)/empty.jsonl: empty file, not a Cadence run log")) {
            try RunLog.stream(path: dir + "/empty.jsonl") { _ in }
        }
    }

    /// A line longer than the reader's buffer: the buffer grows to hold it.
    @Test func aLineLongerThanTheBuffer() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 20), in: dir)
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let long = String(repeating: "A", count: 3_000_000)
        lines[5] = lines[5].replacingOccurrences(of: "\"crtc\":0,", with: "\"connector\":\"\(long)\",\"crtc\":0,")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        var records: [FrameRecord] = []
        _ = try RunLog.stream(path: path) { records.append($0) }
        #expect(records.count == 20)
        #expect(records.filter { $0.connector != nil }.map { $0.connector!.count } == [3_000_000])
        #expect(records == (try RunLog.parse(try Data(contentsOf: URL(fileURLWithPath: path)), name: path)).records)
    }
}

/// `report --csv` without keeping the log: `CSVExport.write(logs:…)` streams the records through
/// a window that puts them in frame order, and writes the bytes `CSVExport.csv` writes.
@Suite struct StreamedCSVTests {
    func whole(_ paths: [String], partial: Bool = false) throws -> String {
        CSVExport.csv(try RunLog.read(paths: paths, allowPartialLastLine: partial).records)
    }

    func streamed(
        _ paths: [String], partial: Bool = false, window: Int = CSVExport.reorderWindow, in dir: String
    ) throws -> (text: String, inOrder: Bool, highWater: Int) {
        let out = dir + "/out.csv"
        let r = try CSVExport.write(logs: paths, allowPartialLastLine: partial, to: out, window: window)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(r.bytes == text.utf8.count)
        #expect(!FileManager.default.fileExists(atPath: out + ".partial"))
        return (text, r.inOrder, r.highWater)
    }

    @Test func everyLogShapeGivesTheWholeReadsCSV() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (name, path) in try StreamedLogTests().logs(dir) {
            let partial = name == "cut"
            let s = try streamed([path], partial: partial, in: dir)
            let same = s.text == (try whole([path], partial: partial))
            #expect(same, "\(name)")
            #expect(s.inOrder, "\(name)")
            #expect(s.highWater <= CSVExport.reorderWindow + 1, "\(name)")
        }
    }

    /// The frame lines of a log, permuted by `permute`; header and end line stay where they are.
    func permuted(_ path: String, to out: String, _ permute: ([Substring]) -> [Substring]) throws {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let isFrame = { (l: Substring) in l.contains("\"intervalNs\":") }
        let frames = lines.filter(isFrame)
        #expect(frames.count > 100)
        var next = permute(frames).makeIterator()
        let text = lines.map { isFrame($0) ? next.next()! : $0 }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: out))
    }

    @Test func framesOutOfOrderWithinTheWindowAreSortedInOnePass() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 600, latency: 3, injectLate: [100: 2, 300: 1]), in: dir)
        let swapped = dir + "/swapped.jsonl"
        // Pairs swapped: every record one place out of frame order.
        try permuted(path, to: swapped) { f in
            var f = f
            for i in stride(from: 0, to: f.count - 1, by: 2) { f.swapAt(i, i + 1) }
            return f
        }
        let s = try streamed([swapped], window: 4, in: dir)
        #expect(s.inOrder)
        #expect(s.highWater == 5)
        let sameAsLog = s.text == (try whole([path]))
        let sameAsSwapped = s.text == (try whole([swapped]))
        #expect(sameAsLog && sameAsSwapped)
    }

    @Test func framesFurtherOutOfOrderThanTheWindowAreReadAgainWhole() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 300, injectLate: [100: 2]), in: dir)
        let reversed = dir + "/reversed.jsonl"
        try permuted(path, to: reversed) { $0.reversed() }
        let s = try streamed([reversed], window: 16, in: dir)
        #expect(!s.inOrder)
        let same = s.text == (try whole([path]))
        #expect(same)
        // The default window holds the whole of this log, reversed: one pass.
        let t = try streamed([reversed], in: dir)
        #expect(t.inOrder)
        #expect(t.highWater == 300)
        let again = t.text == s.text
        #expect(again)
    }

    @Test func aRotatedLogIsOneCSV() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let c = config(frames: 900, latency: 2, injectLate: [100: 1, 800: 2])
        let (plain, rotated, _) = try RotationSetTests().record(dir, c)
        let files = RunLog.rotationFiles(of: rotated)
        #expect(files.count == 3)
        let s = try streamed(files.reversed(), in: dir)
        let same = s.text == (try whole([plain]))
        #expect(same)
    }

    @Test func anUnwritableCSVFailsInOneLineAndLeavesNothing() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 60), in: dir)
        #expect(throws: LineFile.Failure.self) {
            _ = try CSVExport.write(logs: [path], to: dir + "/no-such-dir/out.csv")
        }
        // A log that does not read: its error, and no CSV or partial file left behind.
        let bad = dir + "/bad.jsonl"
        try Data("not a log\n".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(throws: RunLog.Invalid.self) { _ = try CSVExport.write(logs: [bad], to: dir + "/bad.csv") }
        #expect(!FileManager.default.fileExists(atPath: dir + "/bad.csv"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/bad.csv.partial"))
    }
}
