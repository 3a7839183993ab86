import Foundation
import Testing

func writeMonitor(_ dir: String, binary: Bool = false) throws -> String {
    if binary {
        var bytes: [UInt8] = []
        let digits = Array(monitorHex.filter(\.isHexDigit))
        var i = 0
        while i < digits.count {
            bytes.append(UInt8(String(digits[i...i + 1]), radix: 16)!)
            i += 2
        }
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/monitor.bin"))
        return "monitor.bin"
    }
    try monitorHex.write(toFile: dir + "/monitor.hex", atomically: true, encoding: .utf8)
    return "monitor.hex"
}

@Suite(.serialized) struct CLIEDIDTests {
    @Test func decodesBinaryAndHexTheSame() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let hex = try cadence(["edid", try writeMonitor(dir)], in: dir)
        let bin = try cadence(["edid", try writeMonitor(dir, binary: true)], in: dir)
        #expect(hex.status == 0 && bin.status == 0 && hex.err.isEmpty)
        #expect(hex.out.replacingOccurrences(of: "monitor.hex", with: "monitor.bin") == bin.out)
        #expect(hex.out.contains("monitor      \"DELL S2721DGF\""))
        #expect(hex.out.contains("serial       123456  \"7XK2L13\""))
        #expect(hex.out.contains("size         600 x 340 mm (60 x 34 cm, 27.2\")"))
        #expect(hex.out.contains("preferred    2560x1440 @ 144.000477 Hz"))
        #expect(hex.out.contains("VRR          48–144 Hz (edid-range-limits); 48–144 Hz (amd-freesync)"))
    }

    @Test func jsonCarriesIdentityAndVRR() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["edid", "--json", try writeMonitor(dir)], in: dir)
        #expect(r.status == 0)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(o["name"] as? String == "DELL S2721DGF")
        #expect(o["manufacturer"] as? String == "DEL" && o["productCode"] as? Int == 0x4321)
        #expect(o["serialNumber"] as? Int == 123_456 && o["serialString"] as? String == "7XK2L13")
        #expect(o["year"] as? Int == 2021 && o["week"] as? Int == 12)
        let p = try #require(o["preferredTiming"] as? [String: Any])
        #expect(p["refreshHz"] as? Double == 144.000477 && p["width"] as? Int == 2560)
        let a = try #require(o["adaptiveSyncRange"] as? [String: Any])
        #expect(a["minHz"] as? Int == 48 && a["maxHz"] as? Int == 144 && a["source"] as? String == "amd-freesync")
        #expect((o["warnings"] as? [Any])?.isEmpty == true)
    }

    @Test func badInputIsOneLineExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data([1, 2, 3, 250]).write(to: URL(fileURLWithPath: dir + "/garbage"))
        try "00ff".write(toFile: dir + "/short.hex", atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: dir + "/empty", contents: Data()))
        let cases: [([String], String)] = [
            (["edid"], "give an EDID FILE or --connector NAME"),
            (["edid", "nope.bin"], "no such file: nope.bin"),
            (["edid", "garbage"], "garbage: neither a binary EDID nor hex text"),
            (["edid", "short.hex"], "short.hex: 2 bytes: an EDID has at least 128"),
            (["edid", "empty"], "empty (a connector with nothing plugged in has an empty edid file)"),
            (["edid", "--connector", "HDMI-A-1", "--device", "/nonexistent/card0"], "no such device: /nonexistent/card0"),
        ]
        for (args, message) in cases {
            let r = try cadence(args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1 && r.err.contains(message), "\(args): \(r.err)")
            #expect(r.out.isEmpty)
        }
    }

    @Test func helpHasExamples() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["edid", "--help"], in: dir)
        #expect(r.status == 0 && r.out.contains("Examples:") && r.out.contains("cadence edid /sys/class/drm/card0-HDMI-A-1/edid"))
        let v = try cadence(["validate", "--help"], in: dir)
        #expect(v.out.contains("--expect-monitor") && v.out.contains("no EDID on the fake display"))
    }

    @Test func badChecksumIsAWarningNotAnError() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broken = String(monitorHex.filter(\.isHexDigit).dropLast(2)) + "00"  // block 1 checksum
        try broken.write(toFile: dir + "/broken.hex", atomically: true, encoding: .utf8)
        let r = try cadence(["edid", "broken.hex"], in: dir)
        #expect(r.status == 0)
        #expect(r.out.contains("warning: block 1: bad checksum"))
        #expect(r.out.contains("\"DELL S2721DGF\""))
    }
}

@Suite(.serialized) struct CLIExpectTests {
    let base = ["validate", "--backend", "fake", "--quiet", "--frames", "120", "--scene", "solid"]

    @Test func fakeDisplayHasNoEDID() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(base + ["--expect-monitor", "DELL S2721DGF", "--expect-serial", "7XK2L13", "--expect-mode", "2560x1440@144"], in: dir)
        #expect(r.status == 1)
        #expect(lines(r.err) == [
            "FAIL expect-monitor: no EDID on the fake display (expected \"DELL S2721DGF\")",
            "FAIL expect-serial: no EDID on the fake display (expected \"7XK2L13\")",
            "FAIL expect-mode: the fake display drives no KMS mode (expected 2560x1440@144)",
        ])
    }

    @Test func fakeEDIDHookPassesTheRightPanel() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try writeMonitor(dir)
        let r = try cadence(base + ["--fake-refresh", "144", "--fake-edid", f, "--expect-monitor", "DELL S2721DGF", "--expect-serial", "123456",
                                    "--expect-mode", "2560x1440@144", "--max-dropped", "0", "--junit", "v.xml"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty)
        #expect(r.out.contains("PASS expect-monitor: monitor \"DELL S2721DGF\" (expected \"DELL S2721DGF\")"))
        #expect(r.out.contains("PASS expect-serial: serial \"7XK2L13\" / \"123456\" (expected \"123456\")"))
        #expect(r.out.contains("PASS expect-mode: mode 2560x1440@144.0000 (expected 2560x1440@144)"))
        #expect(r.out.contains("validate: PASS (4 criteria)"))
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("tests=\"4\" failures=\"0\""))
    }

    @Test func wrongPanelFailsWithOneLineEach() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let f = try writeMonitor(dir)
        // @144.00 asks for 143.995–144.005 Hz; the fake runs at 143.9 Hz.
        let r = try cadence(base + ["--fake-refresh", "143.9", "--fake-edid", f, "--expect-monitor", "DELL U2720Q", "--expect-serial", "7XK2L14",
                                    "--expect-mode", "2560x1440@144.00"], in: dir)
        #expect(r.status == 1)
        #expect(lines(r.err) == [
            "FAIL expect-monitor: monitor \"DELL S2721DGF\" (expected \"DELL U2720Q\")",
            "FAIL expect-serial: serial \"7XK2L13\" / \"123456\" (expected \"7XK2L14\")",
            "FAIL expect-mode: mode 2560x1440@143.9000 (expected 2560x1440@144.00)",
        ])
        // Whole-number rates match to ±0.5 Hz; the size must match exactly.
        let loose = try cadence(base + ["--fake-refresh", "143.9", "--fake-edid", f, "--expect-mode", "2560x1440@144"], in: dir)
        #expect(loose.status == 0, "\(loose.err)")
        let size = try cadence(base + ["--fake-edid", f, "--expect-mode", "1920x1080"], in: dir)
        #expect(size.status == 1 && size.err.hasPrefix("FAIL expect-mode: mode 2560x1440@60.0000"))
    }

    @Test func badExpectationsExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for args in [["--expect-mode", "1920"], ["--expect-mode", "1920x1080@fast"], ["--fake-edid", "nope.bin", "--expect-monitor", "X"]] {
            let r = try cadence(base + args, in: dir)
            #expect(r.status == 2, "\(args)")
            #expect(lines(r.err).count == 1, "\(args): \(r.err)")
        }
    }
}
