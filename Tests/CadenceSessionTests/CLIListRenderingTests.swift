import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import EDID
import Foundation
import Raster
import Scenes
import Testing

/// The renderers `list`, `edid`, `bench`, `render` and `replay` print with, moved out of the CLI.
@Suite struct CLIListRenderingTests {
    @Test func jsonKeepsTheKeyOrderAndRoundsNumbers() {
        let v = JSON.object([
            ("z", .int(-3)), ("a", .number(60.000_04, decimals: 4)), ("whole", .number(59.999_99, decimals: 4)),
            ("nan", .number(.nan, decimals: 2)), ("s", .string("a\"b\n")), ("none", .optional(nil as String?)),
            ("list", .array([.bool(true), .null, .optional(7)])), ("raw", .raw("{\"k\":1}"))
        ])
        #expect(
            v.rendered
                == #"{"z":-3,"a":60,"whole":60,"nan":null,"s":"a\"b\n","none":null,"list":[true,null,7],"raw":{"k":1}}"#
        )
        #expect(JSON.number(143.99954, decimals: 4).rendered == "143.9995")
        #expect(JSON.encoded(["b": 2, "a": 1]).rendered == #"{"a":1,"b":2}"#)
    }

    @Test func aWatchReportIsOneLinePerChangeStampedOnce() {
        var on = WatchedConnector(name: "DP-1", id: 40, status: .connected, mode: "2560x1440@143.9995")
        on.monitor = "DELL S2721DGF"
        on.serial = "7XK2L13"
        let off = WatchedConnector(name: "HDMI-A-1", id: 41, status: .disconnected)
        let report: WatchedConnector.Changes = ([(old: .disconnected, now: on), (old: nil, now: off)], 123)
        #expect(
            WatchedConnector.lines(report, device: "card1", json: false, time: "T") == [
                "T card1 DP-1 disconnected→connected  mode 2560x1440@143.9995 Hz  monitor \"DELL S2721DGF\" serial 7XK2L13",
                "T card1 HDMI-A-1 disconnected (initial)"
            ])
        #expect(
            WatchedConnector.lines(report, device: "card1", json: true, time: "T")[0]
                == #"{"time":"T","monotonicNs":123,"device":"card1","connector":"DP-1","connectorId":40,"old":"disconnected","new":"connected","mode":"2560x1440@143.9995","monitor":"DELL S2721DGF","manufacturer":null,"serial":"7XK2L13"}"#
        )
        #expect(WatchedConnector.lines(([], 5), device: "card1", json: false).isEmpty)
        // ISO 8601 UTC with milliseconds: 2026-11-23T22:40:01.123Z.
        let now = WatchedConnector.now()
        #expect(now.count == 24 && now.hasSuffix("Z") && Array(now)[10] == "T" && Array(now)[19] == ".")
    }

    @Test func theEDIDIdentityLinesAndTheJSONIdentity() throws {
        let bytes = try EDIDInput.bytes(data: Array(monitorHex.utf8), path: "monitor.hex")
        #expect(bytes.count == 256 && bytes[0] == 0 && bytes[1] == 0xFF)
        let edid = try EDIDInput.decode(bytes, origin: "monitor.hex")
        #expect(
            EDIDReport.identityLines(edid, indent: "  ") == [
                "  monitor      \"DELL S2721DGF\"",
                "  manufacturer DEL, product code 17185 (0x4321)",
                "  serial       123456  \"7XK2L13\"",
                "  made         week 12 of 2021",
                "  size         600 x 340 mm (60 x 34 cm, 27.2\")",
                "  preferred    2560x1440 @ 144.000477 Hz  (580.080 MHz, 2720x1481 total)",
                "  VRR          48–144 Hz (edid-range-limits); 48–144 Hz (amd-freesync)"
            ])
        let identity = JSON.object(EDIDReport.identityJSON(edid)).rendered
        #expect(
            identity.hasPrefix(
                #"{"name":"DELL S2721DGF","manufacturer":"DEL","productCode":17185,"serialNumber":123456,"serialString":"7XK2L13","week":12,"year":2021,"modelYear":null,"sizeMM":{"width":600,"height":340},"diagonalInches":27.2,"#
            ))
        // `list`'s lines under the connector: vrr_capable after the VRR ranges.
        let panel = PanelIdentity(bytes: bytes, properties: [])
        #expect(
            panel.listingLines(indent: "    ").last
                == "    VRR          48–144 Hz (edid-range-limits); 48–144 Hz (amd-freesync); no vrr_capable property")
        #expect(PanelIdentity(bytes: nil, properties: []).listingJSON.rendered.hasPrefix(#"{"edid":false,"problem":"#))
    }

    @Test func badEDIDInputIsOneLine() {
        func line(_ body: () throws -> Any) -> String? {
            do {
                _ = try body()
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(
            line { try EDIDInput.bytes(data: [], path: "empty") }
                == "empty: empty (a connector with nothing plugged in has an empty edid file)")
        #expect(
            line { try EDIDInput.bytes(data: Array("garbage".utf8), path: "g") }
                == "g: neither a binary EDID nor hex text")
        #expect(line { try EDIDInput.bytes(ofFile: "/nonexistent/edid.bin") } == "no such file: /nonexistent/edid.bin")
        #expect(
            line { try EDIDInput.decode([0, 0xFF], origin: "short.hex") }
                == "short.hex: 2 bytes: an EDID has at least 128")
    }

    @Test func aCRTCsCRCSourcesInTheListing() {
        #expect(DeviceInventory.crcText(.success(["auto", "dprx"])) == "sources auto dprx")
        #expect(DeviceInventory.crcText(.success([])) == "sources unknown (the control file lists none)")
        #expect(DeviceInventory.hex(0b101) == "0x5")
        #expect(
            DeviceInventory.listingJSON(
                [.object([("path", .string("/dev/dri/card0"))])], profiles: ["a.json", "b.json"])
                == #"{"backend":"fake-drm","profile":"a.json,b.json","devices":[{"path":"/dev/dri/card0"}]}"#)
        #expect(DeviceInventory.listingJSON([], profiles: []) == #"{"devices":[]}"#)
    }

    @Test func aBenchLineInTextAndJSON() {
        // A million pixels in 2 ms (median and fastest): 500 Mpix/s.
        let t = WorkloadTiming(workload: .fill, width: 1000, height: 1000, times: [0.002, 0.002, 0.003])
        #expect(
            t.line(isa: .baseline, threads: 2, json: false)
                == "fill             1000x1000 threads 2  median 2.0000 ms  min 2.0000 ms  500.00 Mpix/s")
        #expect(
            t.line(isa: .avx2, threads: 1, json: true)
                == #"{"workload":"fill","isa":"avx2","size":"1000x1000","threads":1,"frames":3,"msPerFrame":{"median":2.0000,"min":2.0000},"mpixPerSec":500.00}"#
        )
        #expect(WorkloadTiming.workloads(named: "rects") == [.rects])
        #expect(
            WorkloadTiming.workloads(named: "all")?.count == BenchWorkload.standard.count + SceneCatalog.names.count)
        #expect(WorkloadTiming.workloads(named: "nope") == nil)
    }

    @Test func aStillsArgumentsAndItsFile() throws {
        #expect(try SceneStill.size("640X360") == (640, 360))
        #expect(
            throws: SceneStill.Invalid(
                description: "invalid size '0x10': expected WIDTHxHEIGHT such as 1920x1080 (1 to 16384 each)")
        ) {
            try SceneStill.size("0x10")
        }
        #expect(throws: SceneStill.Invalid(description: "invalid --frame '-1': expected an integer ≥ 0")) {
            try SceneStill.integer("-1", "--frame", min: 0)
        }
        #expect(throws: SceneStill.Invalid(description: "invalid --refresh 'inf': expected a positive number")) {
            try SceneStill.positive("inf", "--refresh")
        }
        let still = SceneStill(
            scene: try SceneStill.scene(named: "bar"), frame: 7, width: 32, height: 18, refreshHz: 60, hud: true)
        #expect(still.defaultPath == "bar-7.png" && still.hudStats?.presentedFrames == 7)
        #expect(throws: SceneStill.Invalid(description: "output 'x.jpg' must end in .png")) {
            try still.write(to: "x.jpg")
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("still-\(getpid()).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try still.write(to: path) == "wrote \(path) (32x18, bar frame 7)")
        let png = try #require(FileManager.default.contents(atPath: path))
        #expect(Array(png.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
    }

    @Test func aReplayOfAFakeRunPrintsItsSummary() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("replaytext-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, summary) = try ReplayReportTests.recordFakeRun(in: dir)

        let result = try LogReplay.run(path: path, allowPartialLastLine: false, logOut: nil)
        let lines = result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "replayed          120 logged frames of a fake run at 60.000 Hz")
        #expect(
            lines.contains(
                "dropped           1 refreshes in 1 events  hitch \(String(format: "%.3f", summary.hitchTimeRatio)) ms/s"
            ))
        #expect(lines.contains("causes            render-late 1"))
        #expect(lines.suffix(2) == ["summary           equals the recorded one", ""])
        #expect(try result.json().hasPrefix(#"{"differences":[],"divergences":0,"equal":true,"recorded":{"#))
    }

    @Test func anObservationsTextNamesEachCRTCAndClient() throws {
        let (flips, vblanks) = try ObserveContentTests.flips()
        let from = flips[49]
        let r = try ObserveContentTests.observeResult(
            content: { v in UInt64(flips.filter { $0 <= min(v, from) }.count) }, lines: vblanks)
        let lines = r.text(source: "t.trace").split(separator: "\n").map(String.init)
        #expect(lines.first == "observe  \(String(format: "%.1f", r.durationSeconds)) s from t.trace")
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "client cadence (pid 123, name from trace) on crtc 0: 62 flips, expected every 1 refresh (")
            })
        #expect(lines.contains { $0.hasPrefix("  dropped refreshes 4, drop events 2, hitch ") })
        #expect(lines.last?.hasPrefix("trace: ") == true && !lines.contains("no flips observed"))
        let stale = flips.count - 50
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "  content (crc auto): \(flips.count) flips, 50 changed the picture, \(stale) changed nothing")
            })
        let crtc = try #require(r.frozenCRTCs.first)
        #expect(
            r.frozenLines == [
                "crtc 0 (\(crtc.connector)): \(stale) flips changed nothing; "
                    + crtc.scanout!.longestFrozen!.text(refreshHz: crtc.refreshHz)
            ])
        let picked = try #require(r.pick(command: nil))
        #expect(
            r.pickNote(picked, command: nil)
                == "client            cadence (pid 123, name from the trace, crtc 0 \(crtc.connector)): 62 flips, the most of 2 clients flipping"
        )
        #expect(r.pickNote(picked, command: "cadence").hasSuffix(": 62 flips, named by --client"))
        #expect(try r.json().hasPrefix("{\n  \"clients\" : ["))
    }
}
