import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// Rotation of a compressed log: `run.jsonl.zst`, `run.jsonl.1.zst`, …, each file a zstd
/// stream of its own within the size limit in compressed bytes, read as one run.
@Suite struct CompressedRotationTests {
    @Test func rotatedFilesKeepTheirExtensionLast() {
        #expect(LogRotation.path("/d/run.jsonl.zst", age: 0) == "/d/run.jsonl.zst")
        #expect(LogRotation.path("/d/run.jsonl.zst", age: 3) == "/d/run.jsonl.3.zst")
        #expect(LogRotation.path("/d/run.jsonl", age: 3) == "/d/run.jsonl.3")
    }

    @Test func aCompressedRotationReportsAsTheRunUnrotated() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = config(frames: 3000, latency: 2, injectLate: [100: 1, 1450: 3, 2800: 2])
        c.adapt = true
        let (plain, summary) = try recordRun(c, in: dir, name: "plain.jsonl")
        let rotated = dir + "/rot.jsonl.zst"
        let rotation = LogRotation(maxBytes: 24_000, keep: 5)
        let again = try LogRotationTests().recordRotated(c, path: rotated, rotation: rotation)
        #expect(LogAnalysis.differences(again, summary).isEmpty)
        let files = RunLog.rotationFiles(of: rotated)
        #expect(Set(files) == [rotated, dir + "/rot.jsonl.1.zst", dir + "/rot.jsonl.2.zst", dir + "/rot.jsonl.3.zst"])
        // Every file within the limit in compressed bytes, each a whole zstd stream.
        for f in files {
            let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))
            #expect(b.count <= 24_000 && b.count > 8_000, "\(f): \(b.count) bytes")
            #expect(Array(b.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
            let log = try RunLog.read(path: f)
            #expect(log.segment != nil && (log.rotated != nil || log.end != nil))
        }
        let (chart, log) = try ReportChart.read(paths: files.reversed())
        let (reference, plainLog) = try ReportChart.read(path: plain)
        #expect(log.frameCount == 3000 && log.frameSpan == 0...2999 && log.end != nil && log.rotated == nil)
        #expect(chart.summary == reference.summary && chart.summary.droppedRefreshes == 6)
        #expect(SVGReport.svg(chart) == SVGReport.svg(reference))
        let withoutStart = { (html: String) in
            html.replacingOccurrences(of: #", started [0-9T:Z-]+"#, with: "", options: .regularExpression)
        }
        #expect(
            withoutStart(HTMLReport.html(chart, log: log, source: "run"))
                == withoutStart(HTMLReport.html(reference, log: plainLog, source: "run")))
        let records = try RunLog.read(paths: files).records, plainRecords = try RunLog.read(path: plain).records
        #expect(records == plainRecords)
        // A missing middle file is named as in a plain rotation.
        try FileManager.default.removeItem(atPath: dir + "/rot.jsonl.1.zst")
        #expect(
            throws: RunLog.Invalid(
                "segment 3 is missing from the rotated log: between \(dir)/rot.jsonl.2.zst (segment 2) and \(rotated) (segment 4)"
            )
        ) { try RunLog.read(paths: RunLog.rotationFiles(of: rotated)) }
    }

    /// A session pause is flushed at once (no line may come for minutes); a removed file stops
    /// the log at the next flush, as a plain log's next write does.
    @Test func aSessionPauseFlushesAndARemovedFileFails() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plain = dir + "/plain.jsonl"
        let records = try RunLog.read(path: try recordRun(config(frames: 120), in: dir, name: "plain.jsonl").path)
            .records
        let header = try #require(try RunLog.read(path: plain).header)
        let path = dir + "/run.jsonl.zst"
        let w = try RunLogWriter(path: path)
        let z = try #require(w.file.compressedFile)
        z.flushIntervalNs = .max
        try w.begin(header)
        for r in records { try w.write(r) }
        #expect(z.bytesWritten == 0 && z.unflushedBytes > 120 * 500)
        let pause = SessionChange(event: .paused, timeNs: 5_000_000_000)
        try w.write(pause)
        #expect(z.bytesWritten > 0 && z.unflushedBytes == 0)
        let log = try RunLog.read(path: path)
        #expect(log.records == records && log.sessions == [pause] && log.end == nil)
        try w.write(records[0])
        unlink(path)
        #expect(throws: LineFile.Failure("\(path) was removed")) { try z.flush() }
        #expect(throws: LineFile.Failure("\(path) was removed")) { try w.write(records[1]) }
    }
}
