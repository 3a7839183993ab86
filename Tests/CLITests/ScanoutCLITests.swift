import CadenceReport
import Foundation
import Testing

/// `cadence run --verify crc` on the fake DRM device (vkms' profile: CRC source auto; bochs'
/// profile: none), and its refusals.
@Suite struct ScanoutCLITests {
    static func scanout(_ args: [String]) throws -> (summary: [String: Any], scanout: [String: Any]) {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            ["run", "--backend", "fake-drm", "--scene", "solid", "--verify", "crc", "--json", "--quiet"] + args, in: dir
        )
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        let s = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        return (s, try #require(s["scanout"] as? [String: Any]))
    }

    @Test func aCleanRunVerifiesEveryFrameAndItsRepeatsAreTheDrops() throws {
        let (s, v) = try Self.scanout(["--frames", "300", "--inject-late", "100:1,250:3"])
        #expect(s["droppedRefreshes"] as? Int == 4)
        #expect(v["mismatches"] as? Int == 0 && v["inexact"] as? Int == 0 && v["verified"] as? Int == 300)
        #expect(v["repeatedRefreshes"] as? Int == 4 && v["source"] as? String == "auto")
    }

    @Test func theStaleBufferFaultIsOneStaleFrameTheFlipsDoNotSee() throws {
        let (s, v) = try Self.scanout(["--frames", "300", "--inject-late", "100:1,250:3", "--fault", "stale-buffer:200"]
        )
        #expect(s["droppedRefreshes"] as? Int == 4 && s["causes"] as? [String: Int] == ["render-late": 2])
        #expect(v["stale"] as? Int == 1 && v["staleFrames"] as? [Int] == [200] && v["mismatches"] as? Int == 1)
        #expect(v["changesWithoutFlip"] as? Int == 0)
    }

    @Test func theSummaryHasAScanoutLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake-drm", "--verify", "crc", "--frames", "120", "--quiet"], in: dir)
        #expect(r.status == 0)
        let line = try #require(lines(r.out).first { $0.hasPrefix("scanout ") })
        #expect(
            line.hasPrefix(
                "scanout           crc auto: 120 of 120 frames verified  mismatches 0 (stale 0, changes without flip 0)  inexact 0"
            ), "\(line)")
        // Without --verify there is no scanout line and no scanout key.
        let plain = try cadence(["run", "--backend", "fake-drm", "--frames", "30", "--json", "--quiet"], in: dir)
        #expect(plain.status == 0 && !plain.out.contains("scanout"))
    }

    /// `measure --verify crc`: every measured flip changes the picture at the vblank it names
    /// (the warm-up's flips are not judged); its refusals are in ``refusalsAreOneLineAndExit2(args:message:)``.
    @Test func measureVerifiesEveryMeasuredFlip() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            ["measure", "--backend", "fake-drm", "--duration", "2", "--verify", "crc", "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let j = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let v = try #require(j["scanout"] as? [String: Any])
        let flips = try #require(j["flips"] as? Int)
        #expect(flips >= 119 && v["frames"] as? Int == flips && v["verified"] as? Int == flips, "\(v)")
        #expect(v["mismatches"] as? Int == 0 && v["inexact"] as? Int == 0 && v["repeatedRefreshes"] as? Int == 0)
        let text = try cadence(["measure", "--backend", "fake-drm", "--duration", "1", "--verify", "crc"], in: dir)
        #expect(
            text.status == 0 && text.out.contains("  scanout           crc auto: 61 of 61 frames verified"),
            "\(text.out)")
        // Without --verify there is no scanout key.
        let plain = try cadence(["measure", "--backend", "fake-drm", "--duration", "1", "--json"], in: dir)
        #expect(plain.status == 0 && !plain.out.contains("scanout"))
    }

    /// The log carries the CRC per vblank (version 3), and `report` judges the content again
    /// from it alone: the same verdict as the run's, stale frame named; replay still reads it.
    @Test func theLogCarriesTheCRCsAndReportJudgesThemAgain() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let live = try cadence(
            [
                "run", "--backend", "fake-drm", "--verify", "crc", "--frames", "300", "--inject-late", "100:1,250:3",
                "--fault", "stale-buffer:200", "--log", "v.jsonl", "--quiet"
            ], in: dir)
        #expect(live.status == 0, "\(live.err)")
        let liveLine = try #require(lines(live.out).first { $0.hasPrefix("scanout ") })
        let text = try String(contentsOfFile: dir + "/v.jsonl", encoding: .utf8)
        let records = lines(text).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let header = try #require(records.first)
        #expect(header["version"] as? Int == 3 && header["crcSource"] as? String == "auto")
        let crcs = records.filter { $0["record"] as? String == "crc" }
        #expect(crcs.allSatisfy { $0["version"] as? Int == 3 && ($0["crc"] as? String)?.count == 16 })
        // Written by hand, one write for many lines: byte for byte what JSONEncoder writes.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for line in lines(text) where line.contains(#""record":"crc""#) {
            let record = try JSONDecoder().decode(CRCRecord.self, from: Data(line.utf8))
            #expect(String(decoding: try encoder.encode(record), as: UTF8.self) == line)
            #expect(String(decoding: record.jsonLine, as: UTF8.self) == line)
        }
        // One line per vblank from before the first flip to after the last (fake-drm reads them all).
        let seqs = crcs.compactMap { $0["sequence"] as? Int }
        #expect(seqs.count >= 300 + 4 && seqs == Array(seqs.first!...seqs.last!), "\(seqs.count) lines")
        let report = try cadence(["report", "v.jsonl", "--output", "v.html"], in: dir)
        #expect(report.status == 0, "\(report.err)")
        let reported = try #require(lines(report.out).first { $0.hasPrefix("scanout: ") })
        // The run's line less its read cost (the run's own, not in a log).
        let judged = String(reported.dropFirst("scanout: ".count))
        let liveJudged = liveLine.dropFirst("scanout".count).drop { $0 == " " }
        #expect(liveJudged.hasPrefix(judged), "live: \(liveLine)\nreport: \(reported)")
        #expect(
            judged.hasPrefix("crc auto: 299 of 300 frames verified  mismatches 1 (stale 1 at frame 200,"), "\(judged)")
        let replay = try cadence(["replay", "v.jsonl"], in: dir)
        #expect(replay.status == 0, "\(replay.out)\(replay.err)")
        // A log that says it carries CRCs must: a crc line in a log without crcSource is refused.
        var stray = lines(text).map(String.init)
        stray[0] = stray[0].replacingOccurrences(of: "\"crcSource\":\"auto\",", with: "")
        try (stray.joined(separator: "\n") + "\n").write(
            toFile: dir + "/stray.jsonl", atomically: true, encoding: .utf8)
        let refused = try cadence(["report", "stray.jsonl", "--output", "s.html"], in: dir)
        #expect(
            refused.status == 2 && refused.err.contains("malformed crc record (or no crcSource in the header)"),
            "\(refused.err)")
    }

    @Test(arguments: [
        (["--backend", "fake-drm:bochs", "--verify", "crc"], "cadence run: --verify crc: not supported by bochs-drm"),
        (
            ["--backend", "fake", "--verify", "crc"],
            "cadence run: --verify crc needs a KMS display (the fake display has no CRTC)"
        ),
        (
            ["--backend", "fake-drm", "--verify", "md5"],
            "cadence run: --verify 'md5': the checks are crc, writeback, or crc,writeback"
        ),
        (
            ["--backend", "fake-drm", "--fault", "stale-buffer:3"],
            "cadence run: --fault needs --verify crc (without it nothing can see the fault)"
        ),
        (
            ["--backend", "fake-drm", "--verify", "crc", "--fault", "stale:3"],
            "cadence run: --fault 'stale:3' must be stale-buffer:FRAME with FRAME ≥ 1"
        ),
        (
            ["--backend", "fake-drm:two-crtc", "--connector", "all", "--verify", "crc"],
            "cadence run: --verify is not supported with several outputs yet: run one --connector at a time"
        ),
        (
            ["measure", "--backend", "fake-drm:bochs", "--verify", "crc"],
            "cadence measure: --verify crc: not supported by bochs-drm"
        ),
        (
            ["measure", "--backend", "fake-drm", "--verify", "writeback"],
            "cadence measure: --verify 'writeback': measure checks crc only (writeback is for run and validate)"
        ),
        (
            ["measure", "--backend", "fake-drm:two-crtc", "--connector", "all", "--verify", "crc"],
            "cadence measure: --verify is not supported with several outputs yet: measure one --connector at a time"
        )
    ])
    func refusalsAreOneLineAndExit2(args: [String], message: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // `run` unless the arguments name measure; measure's fake-drm notice line comes first.
        let command =
            args.first == "measure"
            ? ["measure", "--duration", "1"] + args.dropFirst() : ["run", "--frames", "30"] + args
        let r = try cadence(command, in: dir)
        let err =
            args.first == "measure"
            ? r.err.split(separator: "\n").filter { !$0.hasPrefix("notice: ") }.joined(separator: "\n") + "\n" : r.err
        #expect(r.status == 2 && r.out.isEmpty && err == message + "\n", "\(r.err)")
    }

    @Test func validateFailsAboveTheScanoutMismatchLimit() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = [
            "validate", "--backend", "fake-drm", "--verify", "crc", "--frames", "200", "--fault", "stale-buffer:100",
            "--quiet"
        ]
        let fail = try cadence(base + ["--max-scanout-mismatches", "0"], in: dir)
        #expect(fail.status == 1)
        #expect(
            fail.err
                == "FAIL max-scanout-mismatches: scanout mismatches 1 (stale 1 at frame 100, changes without flip 0), inexact frames 0 (limit 0)\n",
            "\(fail.err)")
        let pass = try cadence(base + ["--max-scanout-mismatches", "1"], in: dir)
        #expect(
            pass.status == 0 && pass.out.contains("PASS max-scanout-mismatches: scanout mismatches 1"), "\(pass.err)")
        let unverified = try cadence(
            ["validate", "--backend", "fake-drm", "--frames", "30", "--max-scanout-mismatches", "0"], in: dir)
        #expect(
            unverified.status == 2
                && unverified.err == "cadence validate: --max-scanout-mismatches needs --verify crc\n",
            "\(unverified.err)")
    }
}
