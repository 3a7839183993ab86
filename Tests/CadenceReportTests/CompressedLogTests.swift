import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// Compressed run logs (issue 24, item 3): `--log FILE.zst` writes a zstd stream that reads as
/// the plain log does, a fifth of its size or less, and that a kill leaves readable up to the
/// last flush.
@Suite struct CompressedLogTests {
    /// One run logged twice, line for line: plain to `plain`, compressed to `zst`. `flushEvery`:
    /// flush the compressed log after every that many frames (nil: only at the end, as a
    /// virtual-time run shorter than a second does); `afterFlush` gets the compressed bytes
    /// written and the frames logged at each of those flushes.
    func recordBoth(
        _ c: RunConfiguration, plain: String, zst: String, flushEvery: Int? = nil,
        afterFlush: @escaping (Int64, Int) -> Void = { _, _ in }
    ) throws -> RunSummary {
        let a = try RunLogWriter(path: plain)
        let b = try RunLogWriter(path: zst)
        let z = try #require(b.file.compressedFile)
        z.flushIntervalNs = .max
        #expect(a.file.compressedFile == nil)
        let display = FakeDisplay(FakeDisplayConfiguration())
        let run = try PacingRun(backend: display, configuration: c)
        let header = RunLogHeader(backend: display, configuration: c)
        try a.begin(header)
        try b.begin(header)
        var failure: Error?
        run.onFrame = { r in
            do {
                try a.write(FrameRecord(r))
                try b.write(FrameRecord(r))
                if let n = flushEvery, b.frames % n == 0 {
                    try z.flush()
                    afterFlush(z.bytesWritten, b.frames)
                }
            } catch { failure = error }
        }
        run.onRateSwitch = { s in
            try? a.write(s)
            try? b.write(s)
        }
        let summary = try run.run()
        try a.end(summary)
        try b.end(summary)
        if let f = failure { throw f }
        return summary
    }

    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// The text a log file reads as (decompressed by `LogByteSource`).
    func text(_ path: String) throws -> [UInt8] {
        let source = try LogByteSource(path: path)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 7000)  // not a divisor of anything zstd uses
        while true {
            let n = try chunk.withUnsafeMutableBufferPointer { try source.read(into: $0.baseAddress!, count: $0.count) }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    @Test func aCompressedLogReadsAsThePlainOneAndReportsTheSame() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = config(frames: 3000, latency: 2, injectLate: [100: 1, 1450: 3, 2800: 2])
        c.adapt = true
        c.renderCost = [RenderCost(first: 500, last: 560, costNs: 25_000_000)]
        let plain = dir + "/run.jsonl", zst = dir + "/run.jsonl.zst"
        let summary = try recordBoth(c, plain: plain, zst: zst, flushEvery: 97)
        #expect(Array(try bytes(zst).prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        // Decompressed, the very bytes of the plain log.
        let plainBytes = try bytes(plain)
        let decompressed = try text(zst)
        #expect(decompressed == plainBytes)
        let p = try RunLog.read(path: plain), z = try RunLog.read(path: zst)
        #expect(z.records.count == 3000 && z.records == p.records)
        #expect(z.header == p.header && z.end == p.end && z.rateSwitches == p.rateSwitches && !z.rateSwitches.isEmpty)
        #expect(z.end?.summary == summary && z.frameSpan == 0...2999 && z.skippedPartialBytes == 0)
        let (chart, log) = try ReportChart.read(path: zst)
        let (reference, plainLog) = try ReportChart.read(path: plain)
        #expect(chart.summary == reference.summary && chart.summary.droppedRefreshes == summary.droppedRefreshes)
        #expect(chart.summary.droppedRefreshes == 9)  // 1 + 3 + 2 injected, 3 by the render cost
        #expect(SVGReport.svg(chart) == SVGReport.svg(reference))
        #expect(PNGReport.encode(chart) == PNGReport.encode(reference))
        #expect(
            HTMLReport.html(chart, log: log, source: "run") == HTMLReport.html(reference, log: plainLog, source: "run"))
        // Replay reads it too, to the same result.
        let replayed = try Replay.run(z), plainReplayed = try Replay.run(p)
        #expect(replayed.differences.isEmpty && replayed.replayed == plainReplayed.replayed)
    }

    /// The default scene's log, flushed every 60 frames (a second at 60 Hz, as a real-time run
    /// flushes): a fifth of the plain size or less.
    @Test func aCompressedLogIsAFifthOfThePlainOneOrLess() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plain = dir + "/run.jsonl", zst = dir + "/run.jsonl.zst"
        var flushes = 0
        _ = try recordBoth(config(frames: 4000), plain: plain, zst: zst, flushEvery: 60) { _, _ in flushes += 1 }
        #expect(flushes == 66)
        let p = try bytes(plain).count, z = try bytes(zst).count
        #expect(p > 4000 * 500)
        #expect(z * 5 <= p, "compressed \(z) bytes, plain \(p)")
        #expect(try RunLog.read(path: zst).records.count == 4000)
    }

    /// A compressed log cut at any byte after a flush (a kill before the next one) reads exactly
    /// the frames logged before that flush; cut before the first, it is refused in one line.
    @Test func aStreamCutAfterAFlushReadsExactlyTheFramesBeforeIt() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plain = dir + "/run.jsonl", zst = dir + "/run.jsonl.zst"
        var flushes: [(bytes: Int64, frames: Int)] = []
        _ = try recordBoth(config(frames: 2000), plain: plain, zst: zst, flushEvery: 50) { flushes.append(($0, $1)) }
        #expect(flushes.count == 40 && flushes.last?.frames == 2000)
        let whole = try bytes(zst)
        let records = try RunLog.read(path: plain).records
        let cut = dir + "/cut.jsonl.zst"
        // Every flush's end, a byte either side, and bytes in between (a fixed pseudo-random walk).
        var offsets = flushes.flatMap { [Int($0.bytes) - 1, Int($0.bytes), Int($0.bytes) + 1] }
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<60 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            offsets.append(Int(x >> 33) % whole.count)
        }
        var checked = 0
        for offset in offsets where offset > 0 && offset < whole.count {
            try Data(whole[0..<offset]).write(to: URL(fileURLWithPath: cut))
            guard let last = flushes.last(where: { $0.bytes <= Int64(offset) }) else {
                #expect(throws: RunLog.Invalid.self) { try RunLog.read(path: cut) }
                continue
            }
            let log = try RunLog.read(path: cut)
            #expect(log.records.count == last.frames, "cut at \(offset)")
            #expect(log.records == Array(records.prefix(last.frames)) && log.end == nil && log.skippedPartialBytes == 0)
            checked += 1
        }
        #expect(checked > 100)
    }

    /// zstd emits a block of every 128 KiB of text on its own between flushes: cut after the
    /// last of them before a flush, the log ends inside a line, read as a plain log's cut-off
    /// last line.
    @Test func aStreamCutInsideALineReadsAsACutOffLastLine() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plain = dir + "/run.jsonl", zst = dir + "/run.jsonl.zst"
        var flushes: [Int64] = []
        _ = try recordBoth(config(frames: 1200), plain: plain, zst: zst, flushEvery: 600) { b, _ in flushes.append(b) }
        // Cut before the first flush: only zstd's own blocks are whole.
        let whole = try bytes(zst)
        let cut = dir + "/cut.jsonl.zst"
        try Data(whole[0..<Int(flushes[0]) - 1]).write(to: URL(fileURLWithPath: cut))
        let text = try bytes(plain)
        // The text up to the first flush (the header line and 600 frame lines), in whole blocks.
        let newlines = text.indices.filter { text[$0] == 0x0A }
        let block = (newlines[600] + 1) / (128 * 1024) * (128 * 1024)
        #expect(block == 256 * 1024)
        let lines = text[0..<block].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let lastNewline = text[0..<block].lastIndex(of: 0x0A)!
        #expect(
            throws: RunLog.Invalid(
                "\(cut): line \(lines + 1) is cut off (truncated log); --allow-partial analyses the complete lines")
        ) {
            try RunLog.read(path: cut)
        }
        let log = try RunLog.read(path: cut, allowPartialLastLine: true)
        #expect(log.records.count == lines - 1)  // the header line is not a frame
        #expect(log.skippedPartialBytes == block - lastNewline - 1)
        let plainRecords = try RunLog.read(path: plain).records
        #expect(log.records.map(\.frame) == Array(0..<(lines - 1)))
        #expect(log.records == Array(plainRecords.prefix(lines - 1)))
    }

    @Test func aCorruptOrGzipStreamIsRefusedInOneLine() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/bad.jsonl.zst"
        try Data([0x28, 0xB5, 0x2F, 0xFD] + [UInt8](repeating: 0xFF, count: 64)).write(to: URL(fileURLWithPath: path))
        do {
            _ = try RunLog.read(path: path)
            Issue.record("read a corrupt stream")
        } catch let e as RunLog.Invalid {
            #expect(
                e.description
                    == "\(path): corrupt zstd stream (Unsupported frame parameter); not a readable compressed log")
            #expect(!e.description.contains("\n"))
        }
        // A valid stream with one block's bytes overwritten in the middle.
        let plain = dir + "/run.jsonl", zst = dir + "/run.jsonl.zst"
        _ = try recordBoth(config(frames: 600), plain: plain, zst: zst)
        var b = try bytes(zst)
        for i in (b.count / 2)..<(b.count / 2 + 16) { b[i] = 0xA5 }
        try Data(b).write(to: URL(fileURLWithPath: zst))
        do {
            _ = try RunLog.read(path: zst)
            Issue.record("read a corrupt stream")
        } catch let e as RunLog.Invalid {
            // Text that still decodes, caught by the frame's checksum at its end.
            #expect(
                e.description
                    == "\(zst): corrupt zstd stream (Restored data doesn't match checksum); not a readable compressed log"
            )
        }
        let gz = dir + "/run.jsonl.gz"
        try Data([0x1F, 0x8B, 0x08, 0x00] + [UInt8](repeating: 0, count: 16)).write(to: URL(fileURLWithPath: gz))
        #expect(
            throws: RunLog.Invalid(
                "\(gz): a gzip file; Cadence reads plain and zstd-compressed (.zst) logs (gunzip it first)")
        ) { try RunLog.read(path: gz) }
        #expect(throws: LineFile.Failure("cannot write \(gz): compressed logs are zstd: name the file FILE.zst")) {
            try RunLogWriter(path: gz)
        }
    }
}
