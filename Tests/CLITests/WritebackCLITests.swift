import CadenceSession
import Foundation
import Testing

/// `cadence run --verify writeback --capture …` on the fake DRM device (vkms' profile has
/// Writeback-1; bochs' none), and its refusals.
@Suite struct WritebackCLITests {
    @Test func everyFiftiethFrameIsCapturedDecodedAndEqual() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "run", "--backend", "fake-drm", "--verify", "writeback", "--capture", "every:50", "--frames", "600",
                "--log", "run.jsonl", "--json", "--quiet"
            ], in: dir)
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        let s = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let scanout = try #require(s["scanout"] as? [String: Any])
        // No CRC ran: the summary claims no CRC check (no zeros for frames, lines, mismatches).
        #expect(Array(scanout.keys) == ["writeback"], "\(scanout.keys)")
        let w = try #require(scanout["writeback"] as? [String: Any])
        #expect(w["captures"] as? Int == 12 && w["decoded"] as? Int == 12 && w["equal"] as? Int == 12)
        #expect(
            w["skipped"] as? Int == 0 && w["timedOut"] as? Int == 0
                && (w["mismatchedFrames"] as? [Int])?.isEmpty == true)
        let pngs = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".png") }.sorted()
        #expect(pngs == stride(from: 0, to: 600, by: 50).map { String(format: "run-capture-%06d.png", $0) })
        let png = try #require(FileManager.default.contents(atPath: dir + "/run-capture-000050.png"))
        #expect(png.prefix(4) == Data([0x89, 0x50, 0x4e, 0x47]))
    }

    /// A capture PNG that cannot be written (a directory has its name): the check stands, one
    /// line says how many were not written, the summary lists it and the run exits 3.
    @Test func aCapturePNGThatCannotBeWrittenIsReportedAndExits3() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(
            atPath: dir + "/run-capture-000050.png", withIntermediateDirectories: false)
        let r = try cadence(
            [
                "run", "--backend", "fake-drm", "--verify", "writeback", "--capture", "every:50", "--frames", "200",
                "--log", "run.jsonl", "--json", "--quiet"
            ], in: dir)
        #expect(r.status == 3, "\(r.err)")
        #expect(
            lines(r.err).count == 1
                && r.err.hasPrefix(
                    "cadence: 1 of 4 writeback captures were not written as PNGs (first run-capture-000050.png: "),
            "\(r.err)")
        let s = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let w = try #require((s["scanout"] as? [String: Any])?["writeback"] as? [String: Any])
        #expect(w["captures"] as? Int == 4 && w["decoded"] as? Int == 4 && w["equal"] as? Int == 4)
        let incomplete = try #require(s["incompleteOutputs"] as? [String])
        #expect(
            incomplete.count == 1 && incomplete[0].hasPrefix("captures run-capture-*.png: 1 of 4 not written"),
            "\(incomplete)")
        #expect(FileManager.default.fileExists(atPath: dir + "/run-capture-000100.png"))
    }

    @Test func withCRCAStaleFrameIsCapturedAsThePreviousFrame() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "run", "--backend", "fake-drm", "--verify", "crc,writeback", "--capture", "frames:100,299,300",
                "--frames", "400", "--fault", "stale-buffer:300", "--quiet"
            ], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let line = try #require(lines(r.out).first { $0.hasPrefix("scanout ") })
        #expect(line.contains("stale 1 at frame 300"), "\(line)")
        // Frame 300 was drawn as frame 299: equal to its render, decoding to 299.
        #expect(
            line.hasSuffix("writeback: captures 3, decoded 2, equal 3 (mismatched frames 300), read 0.0 µs/capture"),
            "\(line)")
        #expect(FileManager.default.fileExists(atPath: dir + "/capture-000300.png"))
    }

    /// `--capture on-mismatch` over vkms' profile: `args` added to a 600-frame run; its JSON
    /// summary, its `scanout.writeback` object and the PNGs written.
    static func onMismatch(_ args: [String]) throws -> (summary: [String: Any], wb: [String: Any], pngs: [String]) {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "run", "--backend", "fake-drm:vkms", "--verify", "crc,writeback", "--capture", "on-mismatch",
                "--frames", "600", "--json", "--quiet"
            ] + args, in: dir)
        #expect(r.status == 0, "\(r.err)")
        let s = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let w = try #require((s["scanout"] as? [String: Any])?["writeback"] as? [String: Any])
        let pngs = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".png") }.sorted()
        return (s, w, pngs)
    }

    /// The stale frame 300 is the one frame captured, and its capture shows frame 299; every
    /// other flip's job is recycled unread; the flips see no drop. The capture is compared with
    /// the render kept for its job, as every:N compares: the fault draws frame 300 with frame
    /// 299's content, so the two are equal pixel for pixel (the identity is what tells them apart).
    @Test func onMismatchCapturesExactlyTheStaleFrame() throws {
        let (s, w, pngs) = try Self.onMismatch(["--fault", "stale-buffer:300"])
        #expect(s["droppedRefreshes"] as? Int == 0)
        let scanout = try #require(s["scanout"] as? [String: Any])
        #expect(scanout["staleFrames"] as? [Int] == [300])
        #expect(w["captures"] as? Int == 1 && w["decoded"] as? Int == 0 && w["equal"] as? Int == 1)
        #expect(w["mismatchedFrames"] as? [Int] == [300] && w["skipped"] as? Int == 0 && w["timedOut"] as? Int == 0)
        let m = try #require(w["onMismatch"] as? [String: Any])
        #expect(m["jobs"] as? Int == 600 && m["withoutJob"] as? Int == 0 && m["ring"] as? Int == 6)
        #expect(m["recycledUnread"] as? Int == 599 && m["recycledUnjudged"] as? Int == 0)
        let flagged = try #require(m["flagged"] as? [[String: Any]])
        #expect(flagged.count == 1)
        #expect(flagged.first?["frame"] as? Int == 300 && flagged.first?["shows"] as? Int == 299)
        #expect(flagged.first?["reason"] as? String == "stale" && flagged.first?["vblank"] == nil)
        #expect(flagged.first?["equal"] as? Bool == true)
        #expect(pngs == ["capture-000300.png"])
    }

    /// Without a fault nothing is flagged: no capture buffer is read (0 reads, 0 µs), every job
    /// is recycled unread, no PNG.
    @Test func onMismatchWithoutAFaultReadsNoBuffer() throws {
        let (s, w, pngs) = try Self.onMismatch([])
        #expect(s["droppedRefreshes"] as? Int == 0)
        #expect((s["scanout"] as? [String: Any])?["mismatches"] as? Int == 0)
        #expect(w["captures"] as? Int == 0 && w["readMicroseconds"] as? Double == 0 && w["skipped"] as? Int == 0)
        let m = try #require(w["onMismatch"] as? [String: Any])
        #expect(m["jobs"] as? Int == 600 && m["recycledUnread"] as? Int == 600)
        #expect((m["flagged"] as? [Any])?.isEmpty == true)
        #expect(pngs.isEmpty)
    }

    /// The text summary names the flagged frame and what its capture shows.
    @Test func onMismatchTextNamesWhatTheCaptureShows() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "run", "--backend", "fake-drm", "--verify", "crc,writeback", "--capture", "on-mismatch", "--frames",
                "400", "--fault", "stale-buffer:300", "--quiet"
            ], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let line = try #require(lines(r.out).first { $0.hasPrefix("scanout ") })
        #expect(line.contains("stale 1 at frame 300"), "\(line)")
        #expect(
            line.hasSuffix(
                "writeback on-mismatch: jobs 400, captures 1 (frame 300 (stale): capture shows frame 299, "
                    + "equal to its render), recycled unread 399, read 0.0 µs/capture"), "\(line)")
    }

    /// Stock Linux 6.1 vkms (the drm_info data of vkms' profile without its `possibleClones`, the
    /// tools/vm guest's patch): Virtual-1's encoder clones only itself (0x1), Writeback-1's only
    /// itself (0x2), so the kernel would refuse the two on one CRTC. One line, exit 2, before any
    /// attach commit.
    @Test func encodersThatCannotCloneRefuseWritebackInOneLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try Data(contentsOf: URL(fileURLWithPath: try FakeDRMProfileFile.load("vkms").path))
        var profile = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        var section = try #require(profile["cadence"] as? [String: Any])
        #expect(section.removeValue(forKey: "possibleClones") != nil)
        profile["cadence"] = section
        try JSONSerialization.data(withJSONObject: profile).write(to: URL(fileURLWithPath: dir + "/stock.json"))
        for capture in ["every:50", "on-mismatch"] {
            let verify = capture == "on-mismatch" ? "crc,writeback" : "writeback"
            let r = try cadence(
                [
                    "run", "--backend", "fake-drm:stock.json", "--verify", verify, "--capture", capture, "--frames",
                    "60"
                ], in: dir)
            #expect(r.status == 2 && r.out.isEmpty)
            #expect(
                r.err
                    == "cadence run: --verify writeback: Writeback-1 cannot share a CRTC with Virtual-1: their encoders do not clone each other (possible_clones: Virtual-1's 0x1, Writeback-1's 0x2; both need 0x3)\n",
                "\(r.err)")
        }
    }

    @Test func aDriverWithoutWritebackGetsOneLineAndExit2() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            ["run", "--backend", "fake-drm:bochs", "--verify", "writeback", "--capture", "every:50", "--frames", "60"],
            in: dir)
        #expect(r.status == 2 && r.out.isEmpty)
        #expect(r.err == "cadence run: --verify writeback: bochs-drm has no writeback connector\n", "\(r.err)")
        let fake = try cadence(
            ["run", "--backend", "fake", "--verify", "writeback", "--capture", "every:50", "--frames", "60"], in: dir)
        #expect(fake.status == 2 && fake.err.contains("--verify writeback needs a KMS display"), "\(fake.err)")
    }

    @Test(arguments: [
        (["--verify", "writeback"], "--verify writeback needs --capture every:N or frames:LIST"),
        (["--capture", "every:5"], "--capture needs --verify writeback"),
        (["--verify", "crc", "--capture", "every:5"], "--capture needs --verify writeback"),
        (["--verify", "writeback", "--capture", "every:0"], "--capture 'every:0' must be every:N (N ≥ 1)"),
        (["--verify", "writeback", "--capture", "frames:1,x"], "--capture 'frames:1,x' must be every:N"),
        (["--verify", "writeback", "--capture", "on-mismatch"], "--capture on-mismatch needs --verify crc,writeback"),
        (["--verify", "crc", "--capture", "on-mismatch"], "--capture on-mismatch needs --verify crc,writeback"),
        (["--capture", "on-mismatch"], "--capture on-mismatch needs --verify crc,writeback"),
        (["--verify", "crc,crc"], "--verify 'crc,crc': the checks are crc, writeback, or crc,writeback"),
        (["--verify", "writeback", "--capture", "every:5", "--fault", "stale-buffer:3"], "--fault needs --verify crc")
    ])
    func refusals(args: [String], message: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake-drm", "--frames", "10"] + args, in: dir)
        #expect(r.status == 2 && r.err.contains(message), "\(r.err)")
    }

    @Test func validateCountsScanoutMismatchesOnlyWithCRC() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(
            [
                "validate", "--backend", "fake-drm", "--verify", "writeback", "--capture", "every:5", "--frames", "10",
                "--max-scanout-mismatches", "0"
            ], in: dir)
        #expect(r.status == 2 && r.err.contains("--max-scanout-mismatches needs --verify crc"), "\(r.err)")
    }
}
