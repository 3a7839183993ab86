import CadenceReport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `cadence run --log FILE.zst` (issue 24, item 3): a compressed log that `report` and
/// `replay` read as the plain one, rotated by compressed size, and readable up to its last
/// flush after SIGKILL.
@Suite struct CompressedLogCLITests {
    @Test func reportAndReplayReadACompressedLogAsThePlainOne() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = ["run", "--backend", "fake", "--frames", "8000", "--inject-late", "100:1,4500:3,7800:2", "--quiet"]
        #expect(try cadence(run + ["--log", "plain.jsonl"], in: dir).status == 0)
        #expect(try cadence(run + ["--log", "one.jsonl.zst"], in: dir).status == 0)
        let rotate = try cadence(run + ["--log", "rot.jsonl.zst", "--log-max-size", "64K", "--log-keep", "20"], in: dir)
        #expect(rotate.status == 0, "\(rotate.err)")
        let rotated = files(in: dir).filter { $0.hasPrefix("rot.jsonl") }
        #expect(
            rotated.count >= 3 && rotated.contains("rot.jsonl.zst") && rotated.contains("rot.jsonl.1.zst"), "\(rotated)"
        )
        for f in rotated {
            let size = try FileManager.default.attributesOfItem(atPath: dir + "/" + f)[.size] as? Int ?? 0
            #expect(size <= 64 * 1024, "\(f): \(size) bytes")
        }
        let plainSize = try FileManager.default.attributesOfItem(atPath: dir + "/plain.jsonl")[.size] as? Int ?? 0
        let oneSize = try FileManager.default.attributesOfItem(atPath: dir + "/one.jsonl.zst")[.size] as? Int ?? 0
        #expect(oneSize * 5 <= plainSize, "compressed \(oneSize), plain \(plainSize)")

        let plain = try cadence(["report", "plain.jsonl", "--output", "plain.svg"], in: dir)
        let one = try cadence(["report", "one.jsonl.zst", "--output", "one.svg", "--csv", "one.csv"], in: dir)
        let all = try cadence(["report", "--all", "rot.jsonl.zst", "--output", "all.svg"], in: dir)
        #expect(plain.status == 0 && one.status == 0 && all.status == 0, "\(one.err) \(all.err)")
        let svg = try String(contentsOfFile: dir + "/plain.svg", encoding: .utf8)
        #expect(svg.contains("data-frame=\"4500\""))
        #expect(try String(contentsOfFile: dir + "/one.svg", encoding: .utf8) == svg)
        #expect(try String(contentsOfFile: dir + "/all.svg", encoding: .utf8) == svg)
        #expect(plain.out.hasSuffix("8000 frames, 6 dropped refreshes in 3 events, 3 frames marked\n"))
        #expect(one.out.hasSuffix("8000 frames, 6 dropped refreshes in 3 events, 3 frames marked\n"))
        #expect(
            all.out.hasSuffix(
                "8000 frames, 6 dropped refreshes in 3 events, 3 frames marked (segments 1–\(rotated.count) of a rotated log, read as one run)\n"
            ))
        let csv = try String(contentsOfFile: dir + "/one.csv", encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 8001)

        let replayPlain = try cadence(["replay", "plain.jsonl"], in: dir)
        let replayOne = try cadence(["replay", "one.jsonl.zst", "--log-out", "replayed.jsonl.zst"], in: dir)
        #expect(replayPlain.status == 0 && replayOne.status == 0, "\(replayOne.err)")
        #expect(replayOne.out == replayPlain.out && replayOne.out.contains("summary           equals the recorded one"))
        #expect(try RunLog.read(path: dir + "/replayed.jsonl.zst").records.count == 8000)

        let gz = try cadence(run + ["--log", "run.jsonl.gz"], in: dir)
        #expect(gz.status == 2 && !FileManager.default.fileExists(atPath: dir + "/run.jsonl.gz"))
        #expect(gz.err.contains("run.jsonl.gz: compressed logs are zstd: name the file FILE.zst"), "\(gz.err)")
    }

    /// A real-time run killed with SIGKILL: the compressed log reads, without --allow-partial,
    /// every frame up to the last flush, which is at most a second old. The snapshot taken just
    /// before the kill holds what was flushed by then; the log after the kill at least that,
    /// and at least the frames of the run's first 1.5 s (the kill comes 2.5 s or more in).
    @Test func aKilledRunsCompressedLogReadsUpToTheLastFlush() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(
            [
                "run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "60",
                "--log", "run.jsonl.zst", "--quiet"
            ], in: dir)
        let path = dir + "/run.jsonl.zst"
        // The first flush, a second after the log was opened.
        let end = Date().addingTimeInterval(30 * hangLimitScale)
        while Date() < end, (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 == 0 {
            usleep(20_000)
        }
        let firstFlush = Date()
        usleep(1_500_000)
        let snapshot = dir + "/snapshot.jsonl.zst"
        try FileManager.default.copyItem(atPath: path, toPath: snapshot)
        p.signal(SIGKILL)
        let r = p.finish(timeout: 20)
        #expect(r.status == 9 || p.process.terminationReason == .uncaughtSignal)
        let elapsed = Date().timeIntervalSince(firstFlush)
        let before = try RunLog.read(path: snapshot)
        let log = try RunLog.read(path: path)
        #expect(log.end == nil && log.header != nil && log.skippedPartialBytes == 0)
        #expect(log.records.count >= before.records.count && before.records.count >= 60)
        #expect(log.records.map(\.frame) == Array(0..<log.records.count))
        // At 60 Hz: the flush a second after the first one holds 1.5 s of frames or more
        // (the run starts before the first flush).
        #expect(log.records.count >= 90, "\(log.records.count) frames, killed \(elapsed) s after the first flush")
        let report = try cadence(["report", "run.jsonl.zst", "--output", "run.svg"], in: dir)
        #expect(report.status == 0, "\(report.err)")
        #expect(
            report.out.contains("\(log.records.count) frames, ")
                && report.out.contains("(log has no end line: the run did not finish)"))
    }
}
