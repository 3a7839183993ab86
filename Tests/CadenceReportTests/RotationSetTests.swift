import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// The files of a rotated log read as one run (issue 24, item 4): the same report as the run
/// logged unrotated; a missing, doubled or foreign file refused in one line.
@Suite struct RotationSetTests {
    static let rotation = LogRotation(maxBytes: 200_000, keep: 5)

    /// The same run logged unrotated (`plain.jsonl`) and rotated (`rot.jsonl*`).
    func record(_ dir: String, _ c: RunConfiguration) throws -> (plain: String, rotated: String, summary: RunSummary) {
        let (plain, summary) = try recordRun(c, in: dir, name: "plain.jsonl")
        let rotated = dir + "/rot.jsonl"
        let again = try LogRotationTests().recordRotated(c, path: rotated, rotation: Self.rotation)
        #expect(LogAnalysis.differences(again, summary).isEmpty)
        return (plain, rotated, summary)
    }

    /// The HTML without the line naming when the run started (the two runs started apart).
    func withoutStart(_ html: String) -> String {
        html.replacingOccurrences(of: #", started [0-9T:Z-]+"#, with: "", options: .regularExpression)
    }

    @Test func aThreeSegmentRotationReportsAsTheRunUnrotated() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = config(frames: 900, latency: 2, injectLate: [100: 1, 450: 3, 800: 2])
        c.adapt = true
        c.renderCost = [RenderCost(first: 500, last: 560, costNs: 25_000_000)]
        let (plain, rotated, summary) = try record(dir, c)
        let files = RunLog.rotationFiles(of: rotated)
        #expect(Set(files) == [rotated, rotated + ".1", rotated + ".2"])
        // In any order: by segment.
        let (chart, log) = try ReportChart.read(paths: files.reversed())
        let (reference, plainLog) = try ReportChart.read(path: plain)
        #expect(
            log.frameCount == 900 && log.frameSpan == 0...899 && log.end != nil && log.rotated == nil
                && log.continuation == nil)
        #expect(log.segmentDescription == nil)
        #expect(chart.summary == reference.summary)
        #expect(LogAnalysis.differences(chart.summary, summary).isEmpty)
        #expect(chart.summary.droppedRefreshes == summary.droppedRefreshes && chart.summary.frames == 900)
        #expect(
            chart.points == reference.points && chart.drops == reference.drops && chart.histogram == reference.histogram
        )
        #expect(chart.rateSwitches == reference.rateSwitches && !chart.rateSwitches.isEmpty)
        #expect(SVGReport.svg(chart) == SVGReport.svg(reference))
        #expect(
            withoutStart(HTMLReport.html(chart, log: log, source: "run"))
                == withoutStart(HTMLReport.html(reference, log: plainLog, source: "run")))
        // Read whole: every record of the unrotated log, in order, and its other lines.
        let whole = try RunLog.read(paths: files)
        let plainWhole = try RunLog.read(path: plain)
        #expect(whole.records == plainWhole.records)
        #expect(
            whole.rateSwitches == plainWhole.rateSwitches && whole.sessions == plainWhole.sessions
                && whole.end == plainWhole.end)
    }

    @Test func aMissingMiddleSegmentIsNamedInOneLine() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (_, rotated, _) = try record(dir, config(frames: 900))
        try FileManager.default.removeItem(atPath: rotated + ".1")
        let files = RunLog.rotationFiles(of: rotated)
        #expect(files.count == 2)
        #expect(
            throws: RunLog.Invalid(
                "segment 2 is missing from the rotated log: between \(rotated).2 (segment 1) and \(rotated) (segment 3)"
            )
        ) {
            try ReportChart.read(paths: files)
        }
        #expect(
            throws: RunLog.Invalid(
                "segment 2 is missing from the rotated log: between \(rotated).2 (segment 1) and \(rotated) (segment 3)"
            )
        ) {
            try RunLog.read(paths: files)
        }
    }

    @Test func theLaterSegmentsAloneAndRefusedSets() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (plain, rotated, _) = try record(dir, config(frames: 900, injectLate: [700: 2]))
        let plainLog = try RunLog.read(path: plain)
        // Segments 2 and 3: the run's frames from the second file on.
        let later = try RunLog.read(paths: [rotated, rotated + ".1"])
        let first = try RunLog.read(path: rotated + ".2")
        #expect(later.records == Array(plainLog.records.dropFirst(first.records.count)))
        #expect(later.continuation?.segment == 2 && later.end != nil)
        // Segments 1 and 2: the run goes on in a file not given.
        let earlier = try RunLog.read(paths: [rotated + ".2", rotated + ".1"])
        #expect(
            earlier.rotated?.segment == 2
                && LogAnalysis.summary(of: earlier).endReason == "rotated (continued in the next file)")
        #expect(earlier.records == Array(plainLog.records.prefix(earlier.records.count)))
        // The same file twice; a file of another run.
        #expect(
            throws: RunLog.Invalid("\(rotated) and \(rotated) are both segment 3: not the files of one rotated log")
        ) {
            try RunLog.read(paths: [rotated, rotated])
        }
        #expect(
            throws: RunLog.Invalid("\(plain) and \(rotated).2 are both segment 1: not the files of one rotated log")
        ) {
            try RunLog.read(paths: [plain, rotated + ".2"])
        }
        let other = dir + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        _ = try LogRotationTests().recordRotated(
            config(frames: 900, latency: 2), path: other + "/rot.jsonl", rotation: Self.rotation)
        #expect(
            throws: RunLog.Invalid("\(other)/rot.jsonl.1: another run's file (its header differs from \(rotated).2's)")
        ) {
            try RunLog.read(paths: [rotated + ".2", other + "/rot.jsonl.1"])
        }
        // A cut-off last file: with allowPartialLastLine, its complete lines.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: rotated))
        bytes.removeLast(100)
        try bytes.write(to: URL(fileURLWithPath: rotated))
        #expect(throws: RunLog.Invalid.self) { try RunLog.read(paths: RunLog.rotationFiles(of: rotated)) }
        let cut = try RunLog.read(paths: RunLog.rotationFiles(of: rotated), allowPartialLastLine: true)
        #expect(
            cut.skippedPartialBytes > 0 && cut.end == nil
                && cut.records == Array(plainLog.records.prefix(cut.records.count)))
        // A file that is not a run log: its own error.
        try Data("not json\n".utf8).write(to: URL(fileURLWithPath: rotated + ".1"))
        #expect(throws: RunLog.Invalid("\(rotated).1: line 1 is not a JSON object; not a Cadence run log")) {
            try RunLog.read(paths: RunLog.rotationFiles(of: rotated))
        }
    }
}
