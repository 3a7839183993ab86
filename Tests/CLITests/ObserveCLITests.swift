import Foundation
import Testing

/// `cadence validate --observe` and `cadence report` on observe logs, on a trace recorded on vkms
/// in the VM beside `cadence run --inject-late 30:1,60:3` (cadence: 62 flips, 4 dropped
/// refreshes in 2 render-late events, the largest 3; the kernel's own commit: 1 flip).
/// `--from-trace` stands in for the live kernel.
@Suite struct ObserveCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("DRMTraceTests/Fixtures").path
    static let trace = fixtures + "/vkms-inject-late.trace"

    func validate(_ args: [String], in dir: String) throws -> (status: Int32, out: String, err: String) {
        try cadence(["validate", "--observe", "--duration", "4", "--from-trace", Self.trace, "--quiet"] + args, in: dir)
    }

    @Test func passAndFailOnTheObservedClient() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pass = try validate(["--max-dropped", "4", "--max-drop-event", "3", "--max-drop-events", "2"], in: dir)
        #expect(pass.status == 0, "\(pass.err)")
        #expect(pass.err.isEmpty)
        #expect(
            pass.out.contains(
                "client            cadence (pid 123, name from the trace, crtc 0 crtc-0): 62 flips, the most of 2 clients flipping"
            ))
        #expect(pass.out.contains("dropped           4 refreshes in 2 events"))
        #expect(pass.out.contains("PASS max-drop-event: largest drop event 3 refreshes (limit 3)"))
        #expect(lines(pass.out).last == "validate: PASS (3 criteria)")

        let fail = try validate(["--max-dropped", "3", "--max-drop-event", "2", "--junit", "v.xml"], in: dir)
        #expect(fail.status == 1)
        #expect(
            lines(fail.err) == [
                "FAIL max-dropped: dropped refreshes 4 (limit 3)",
                "FAIL max-drop-event: largest drop event 3 refreshes (limit 2)"
            ])
        #expect(lines(fail.out).last == "validate: FAIL (2 of 2 criteria)")
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains(#"<testsuites tests="2" failures="2""#) && xml.contains(#"value="observed""#))
    }

    @Test func warmupAndExpectRate() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The first drop is 30 flips (0.5 s) after the first flip: a 0.6 s warm-up leaves the second.
        let w = try validate(["--warmup", "0.6", "--max-dropped", "3"], in: dir)
        #expect(w.status == 0, "\(w.out)\(w.err)")
        #expect(w.out.contains("PASS max-dropped: dropped refreshes 3 (limit 3)"))
        #expect(w.out.contains("judged            "))
        // Expected at 15 Hz (every 4 refreshes): no interval (1, 2 or 4 refreshes) drops one.
        let r = try validate(["--expect-rate", "15", "--max-dropped", "0"], in: dir)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("effective 15.001 Hz"))
    }

    @Test func noFlipsAndAnAbsentClientFail() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Only the vblanks: nothing flipped.
        let text = try String(contentsOfFile: Self.trace, encoding: .utf8)
        let idle =
            text.split(separator: "\n").filter { $0.contains("drm_vblank_event:") }.joined(separator: "\n") + "\n"
        try idle.write(toFile: dir + "/idle.trace", atomically: true, encoding: .utf8)
        let none = try cadence(
            [
                "validate", "--observe", "--duration", "2", "--from-trace", dir + "/idle.trace", "--max-dropped", "0",
                "--junit", "n.xml"
            ], in: dir)
        #expect(none.status == 1)
        #expect(none.err == "FAIL flips: no flips observed in 0.0 s\n")
        #expect(lines(none.out).last == "validate: FAIL (1 of 1 criteria)")
        #expect(try String(contentsOfFile: dir + "/n.xml", encoding: .utf8).contains("no flips observed"))

        let absent = try validate(["--client", "chromium", "--max-dropped", "0"], in: dir)
        #expect(absent.status == 1)
        #expect(absent.err == "FAIL flips: no flips observed from chromium (flipping: (kernel), cadence) in 0.0 s\n")
        let named = try validate(["--client", "(kernel)", "--max-dropped", "0"], in: dir)
        #expect(named.status == 0, "\(named.out)\(named.err)")
        #expect(
            named.out.contains(
                "client            (kernel) (pid ?, name from the trace, crtc 0 crtc-0): 1 flips, named by --client"))
    }

    @Test func usageErrorsAreOneLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases: [([String], String)] = [
            (
                ["validate", "--observe", "--max-dropped", "0", "--from-trace", Self.trace],
                "cadence validate: --observe needs --duration S (seconds > 0)"
            ),
            (
                ["validate", "--observe", "--duration", "0", "--max-dropped", "0"],
                "cadence validate: --duration must be seconds > 0"
            ),
            (
                ["validate", "--observe", "--duration", "2"],
                "cadence validate: give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, --max-jitter, --min-rate, --max-frozen)"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--max-frozen", "1"],
                "cadence validate: --max-frozen needs --observe --verify crc"
            ),
            (
                ["validate", "--duration", "2", "--max-frozen", "1", "--verify", "crc"],
                "cadence validate: --max-frozen needs --observe --verify crc"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--verify", "crc", "--max-frozen", "-1"],
                "cadence validate: --max-frozen must be seconds ≥ 0"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--verify", "writeback", "--max-frozen", "1"],
                "cadence validate: --verify 'writeback' with --observe: only crc (writeback would take over the other program's CRTC)"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--verify", "crc", "--max-scanout-mismatches", "0"],
                "cadence validate: --max-scanout-mismatches judges Cadence's own frames; with --observe use --max-frozen"
            ),
            (
                [
                    "validate", "--observe", "--duration", "2", "--verify", "crc", "--max-frozen", "1", "--from-trace",
                    Self.trace
                ],
                "cadence validate: the CRC check needs the live kernel: a saved trace holds no CRC lines"
            ),
            (
                ["observe", "--verify", "writeback"],
                "cadence: --verify 'writeback': observe checks crc only (writeback would take over another program's CRTC) (see --help)"
            ),
            (["observe", "--expect-motion"], "cadence: --expect-motion needs --verify crc (see --help)"),
            (
                ["observe", "--verify", "crc", "--from-trace", Self.trace],
                "cadence: --verify crc needs the live kernel: a saved trace (--from-trace) holds no CRC lines (see --help)"
            ),
            (
                [
                    "validate", "--observe", "--duration", "2", "--max-dropped", "0", "--scene", "solid", "--latency",
                    "2"
                ],
                "cadence validate: --latency, --scene cannot be used with --observe (it judges another program's flips; Cadence draws nothing)"
            ),
            (
                [
                    "validate", "--observe", "--duration", "2", "--max-dropped", "0", "--inject-late", "3:1",
                    "--backend", "fake"
                ],
                "cadence validate: --backend, --inject-late cannot be used with --observe (it judges another program's flips; Cadence draws nothing)"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--max-dropped", "0", "--expect-mode", "1024x768"],
                "cadence validate: --expect-mode cannot be used with --observe (it judges another program's flips; Cadence draws nothing)"
            ),
            (
                ["validate", "--client", "x", "--duration", "2", "--max-dropped", "0"],
                "cadence validate: --client needs --observe"
            ),
            (
                ["validate", "--observe", "--duration", "2", "--max-dropped", "0", "--expect-rate", "-1"],
                "cadence validate: --expect-rate must be a rate in Hz > 0"
            )
        ]
        for (args, line) in cases {
            let r = try cadence(args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(r.err == line + "\n", "\(args)")
            #expect(r.out.isEmpty, "\(args)")
        }
    }

    /// A client whose cadence never becomes known (the kernel's one commit in this trace) is
    /// judged a second after its last flip, not only when observing ends: its line comes among
    /// the app's, once a vblank more than 1 s after it was traced (a mid-run scrape counts it).
    @Test func aClientThatStopsFlippingIsJudgedASecondLater() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let obs = try cadence(["observe", "--from-trace", Self.trace, "--log", "o.jsonl", "--quiet"], in: dir)
        #expect(obs.status == 0)
        let text = try String(contentsOfFile: dir + "/o.jsonl", encoding: .utf8)
        let flips = text.split(separator: "\n").compactMap { line -> [String: Any]? in
            let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return o?["kind"] as? String == "observed" ? o : nil
        }
        let kernel = try #require(flips.firstIndex { $0["client"] as? String == "(kernel)" })
        let kernelNs = try #require(flips[kernel]["flipNs"] as? Int)
        let before = flips[..<kernel].compactMap { $0["flipNs"] as? Int }
        let after = flips[(kernel + 1)...].compactMap { $0["flipNs"] as? Int }
        #expect(!after.isEmpty, "the kernel's flip was judged only at the end")
        #expect(before.allSatisfy { $0 < kernelNs + 1_100_000_000 } && after.allSatisfy { $0 > kernelNs + 900_000_000 })
    }

    @Test func reportDrawsAnObserveLog() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let obs = try cadence(["observe", "--from-trace", Self.trace, "--log", "o.jsonl", "--quiet"], in: dir)
        #expect(obs.status == 0)
        let r = try cadence(["report", "o.jsonl", "--output", "o.png", "--csv", "o.csv"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(
            lines(r.out) == [
                "client (kernel) (pid 0, crtc 0): 1 flips, 0 dropped refreshes in 0 events",
                "client cadence (pid 123, crtc 0): 62 flips, 4 dropped refreshes in 2 events",
                "drawing client cadence (pid 123, crtc 0): the most flips of 2 clients",
                "wrote o.png (\(try FileManager.default.attributesOfItem(atPath: dir + "/o.png")[.size] as! Int) bytes)",
                "wrote o.csv (\(try FileManager.default.attributesOfItem(atPath: dir + "/o.csv")[.size] as! Int) bytes)",
                "62 frames, 4 dropped refreshes in 2 events, 2 frames marked"
            ])
        // The same log compressed (FILE.zst) reports the same.
        let zst = try cadence(["observe", "--from-trace", Self.trace, "--log", "o.jsonl.zst", "--quiet"], in: dir)
        #expect(zst.status == 0, "\(zst.err)")
        let magic = try #require(FileManager.default.contents(atPath: dir + "/o.jsonl.zst")).prefix(4)
        #expect(Array(magic) == [0x28, 0xB5, 0x2F, 0xFD])
        let rz = try cadence(["report", "o.jsonl.zst", "--output", "oz.png"], in: dir)
        #expect(rz.status == 0, "\(rz.err)")
        #expect(lines(rz.out).filter { !$0.hasPrefix("wrote") } == lines(r.out).filter { !$0.hasPrefix("wrote") })
        let file = { (name: String) in FileManager.default.contents(atPath: dir + "/" + name) }
        #expect(file("oz.png") == file("o.png"))
        // A saved trace names clients from the trace only (debugfs is this machine's, not the trace's).
        let json = try cadence(["observe", "--from-trace", Self.trace, "--json"], in: dir)
        let obj = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        let clients = try #require(obj?["clients"] as? [[String: Any]])
        #expect(clients.map { $0["client"] as? String } == ["(kernel)", "cadence"])
        #expect(clients.map { $0["nameSource"] as? String } == ["trace", "trace"])
        #expect(clients.map { $0["largestDropEvent"] as? Int } == [0, 3])
        #expect(clients.allSatisfy { $0["master"] == nil })
        let png = try #require(FileManager.default.contents(atPath: dir + "/o.png"))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let k = try cadence(["report", "o.jsonl", "--output", "k.svg", "--client", "(kernel)"], in: dir)
        #expect(k.status == 0 && k.out.contains("drawing client (kernel) (pid 0, crtc 0): named by --client"))
        let none = try cadence(["report", "o.jsonl", "--output", "x.svg", "--client", "nope"], in: dir)
        #expect(
            none.status == 2
                && none.err == "cadence report: o.jsonl: no client named 'nope' (clients: (kernel), cadence)\n")
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.svg"))
    }
}
