import CadenceCore
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Testing
@testable import cadence

/// `--backend fake-drm[:PROFILE]`: the real KMS code over the fake DRM device playing a
/// `drm_info -j` profile, on `list`, `measure`, `run` and `validate`.
@Suite(.serialized) struct FakeDRMBackendTests {
    static let shipped = ["amdgpu-vrr", "bochs", "two-crtc", "virtio-gpu", "vkms"]

    func tempDir() throws -> String {
        let d = NSTemporaryDirectory() + "cadence-fakedrm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    func object(_ text: String) throws -> [String: Any] {
        let o = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return try #require(o, "not a JSON object: \(text.prefix(200))")
    }

    /// `list --backend B --json`'s first device.
    func listed(_ backend: String, in dir: String) throws -> [String: Any] {
        let r = try cadence(["list", "--backend", backend, "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let top = try object(r.out)
        #expect(top["backend"] as? String == "fake-drm")
        let devices = try #require(top["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        return try #require(devices.first)
    }

    func connector(_ device: [String: Any], _ name: String) throws -> [String: Any] {
        let cs = try #require(device["connectors"] as? [[String: Any]])
        return try #require(cs.first { $0["name"] as? String == name }, "no \(name) in \(cs.map { $0["name"] ?? "?" })")
    }

    @Test func everyShippedProfileIsFoundAndLoads() throws {
        let names = FakeDRMProfileFile.shippedNames()
        #expect(Set(names).isSuperset(of: Self.shipped), "\(names)")
        for name in names {
            let fake = try FakeDRMProfileFile.load(name).makeDevice(wallClock: false, seed: 0)
            let dev = try DRMDevice.open(fake: fake)
            let res = try dev.resources()
            #expect(!res.connectors.isEmpty && !res.crtcs.isEmpty, "\(name)")
            // The real KMS code opens an output on it.
            let display = try KMSDisplay.open(on: dev)
            #expect(display.name == "fake-drm" && display.refreshInterval > 0, "\(name)")
            try display.close()
        }
        // No :PROFILE is the vkms capture.
        #expect(try FakeDRMProfileFile.load(nil).path == FakeDRMProfileFile.load("vkms").path)
        #expect(try FakeDRMProfileFile.load(nil).makeDevice(wallClock: false, seed: 0).driver.name == "vkms")
    }

    @Test func listShowsTheCapturedConnectorsModesAndIdentity() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let vkms = try listed("fake-drm", in: dir)
        #expect(vkms["driver"] as? String == "vkms" && vkms["path"] as? String == "/dev/dri/card0")
        let names = (vkms["connectors"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        // drm_info also saw Writeback-1: list shows it apart (ListScanoutTests), not among these.
        #expect(names == ["Virtual-1"])
        let virtual = try connector(vkms, "Virtual-1")
        let modes = try #require(virtual["modes"] as? [[String: Any]])
        #expect(modes.count == 34)
        #expect(modes.first?["name"] as? String == "1024x768" && modes.first?["preferred"] as? Bool == true)
        #expect((virtual["identity"] as? [String: Any])?["edid"] as? Bool == false)

        for profile in ["bochs", "virtio-gpu"] {
            let qemu = try connector(try listed("fake-drm:\(profile)", in: dir), "Virtual-1")
            let id = try #require(qemu["identity"] as? [String: Any])
            #expect(id["name"] as? String == "QEMU Monitor" && id["manufacturer"] as? String == "RHT", "\(profile)")
            #expect(qemu["edidBytes"] as? Int == 256 && qemu["widthMM"] as? Int == 320)
        }

        let vrr = try connector(try listed("fake-drm:amdgpu-vrr", in: dir), "DP-1")
        let id = try #require(vrr["identity"] as? [String: Any])
        #expect(id["name"] as? String == "Cadence VRR" && id["vrrCapable"] as? Bool == true)
        let range = try #require(id["adaptiveSyncRange"] as? [String: Any])
        #expect(range["minHz"] as? Double == 48 && range["maxHz"] as? Double == 144)
        #expect((vrr["properties"] as? [String: Any])?["vrr_capable"] as? Int == 1)
        // The text listing shows the range and says it is a simulator.
        let text = try cadence(["list", "--backend", "fake-drm:amdgpu-vrr"], in: dir)
        #expect(text.status == 0)
        #expect(text.out.hasPrefix("fake DRM device (simulator) from profile "))
        #expect(text.out.contains("VRR          48–144 Hz (edid-range-limits); vrr_capable 1"), "\(text.out)")
    }

    /// The same inputs on the fake display and on the KMS code over the vkms profile.
    @Test func runOnFakeDRMMatchesTheFakeDisplay() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [[String](), ["--inject-late", "100:1,250:3"]] {
            let args = ["run", "--scene", "solid", "--frames", "400", "--json", "--quiet"] + extra
            let fake = try cadence(args + ["--backend", "fake"], in: dir)
            let drm = try cadence(args + ["--backend", "fake-drm", "--log", "drm.jsonl"], in: dir)
            #expect(fake.status == 0 && drm.status == 0, "\(fake.err) \(drm.err)")
            let a = try object(fake.out), b = try object(drm.out)
            #expect(b["backend"] as? String == "fake-drm")
            for key in ["frames", "presented", "droppedRefreshes", "dropEvents", "late"] {
                #expect(a[key] as? Int == b[key] as? Int, "\(key): fake \(a[key] ?? "-") fake-drm \(b[key] ?? "-") \(extra)")
            }
            #expect(b["droppedRefreshes"] as? Int == (extra.isEmpty ? 0 : 4))
            #expect(b["dropEvents"] as? Int == (extra.isEmpty ? 0 : 2))
            // vkms' 1024x768 mode, from the profile through the KMS code (the fake display says 60).
            #expect(abs((b["refreshHz"] as? Double ?? 0) - 60.0038) < 0.001)
            // Only the KMS path logs the DRM driver and kernel vblank sequences.
            let lines = try String(contentsOfFile: dir + "/drm.jsonl", encoding: .utf8).split(separator: "\n")
            #expect(lines.first?.contains("\"driver\":\"vkms 1.0.0 (fake-drm profile)\"") == true, "\(lines.first ?? "")")
        }
        let (display, _) = try BackendChoice.open(backend: "fake-drm", device: nil, connector: nil, mode: nil,
                                                  fake: FakeDisplayConfiguration(), purpose: .validate)
        let kms = try #require(display as? KMSDisplay, "fake-drm is the KMS backend")
        #expect(kms.device.simulatorName == "fake-drm" && kms.hasHardwareVBlank)
        try kms.close()
    }

    /// Drivers without a vblank interrupt (bochs, virtio-gpu) at frame latency 2 and 3: the run
    /// hung forever (the software vblank a wait was for was computed one short at its exact
    /// time, so the wait returned at once, again and again), and once that was mended every
    /// frame was discarded behind the next (the software vblank counter is already at a frame's
    /// target when its commit time comes). Every frame is shown now, at every latency.
    @Test(arguments: ["bochs", "virtio-gpu"], [1, 2, 3])
    func noVBlankDriversRunAtEveryLatency(profile: String, latency: Int) throws {
        let fake = try FakeDRMProfileFile.load(profile).makeDevice(wallClock: false, seed: 0)
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake))
        #expect(!display.hasHardwareVBlank)
        var c = RunConfiguration()
        c.frames = 120
        c.latency = latency
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c)
        run.maxLoopTurns = 100_000
        let s = try run.run()
        try display.close()
        #expect(s.presented == 120 && s.discarded == 0 && s.droppedRefreshes == 0, "\(profile) latency \(latency): \(s.presented) shown, \(s.discarded) discarded, \(s.droppedRefreshes) dropped")
        #expect(s.endReason == "completed")
    }

    @Test func validateOnFakeDRMSaysSimulator() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake-drm", "--scene", "solid", "--frames", "300", "--max-dropped", "0",
                             "--junit", "v.xml", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("validate: PASS (1 criteria) on the fake DRM device (a simulator running the KMS code, not a real panel)"), "\(r.out)")
        #expect(r.out.contains("backend           fake DRM device (simulator: KMS code, virtual time)"))
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("value=\"fake DRM device (simulator: KMS code, virtual time)\""))
        // A failure says it too.
        let f = try cadence(["validate", "--backend", "fake-drm", "--scene", "solid", "--frames", "300", "--inject-late", "100:2",
                             "--max-dropped", "0", "--quiet"], in: dir)
        #expect(f.status == 1 && f.out.contains("validate: FAIL (1 of 1 criteria) on the fake DRM device"), "\(f.out)")
    }

    @Test func twoCRTCProfilePicksTheOutputByConnector() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let dp = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "DP-1", "--scene", "solid", "--frames", "288", "--quiet"], in: dir)
        #expect(dp.status == 0, "\(dp.err)")
        #expect(dp.out.contains("refresh 144.000 Hz  effective 144.000 Hz"), "\(dp.out)")
        #expect(dp.out.contains("dropped           0 refreshes in 0 events"))
        let edp = try cadence(["run", "--backend", "fake-drm:two-crtc", "--connector", "eDP-1", "--scene", "solid", "--frames", "60", "--json", "--quiet"], in: dir)
        #expect(abs((try object(edp.out)["refreshHz"] as? Double ?? 0) - 60) < 0.001, "\(edp.out) \(edp.err)")
        // Both CRTCs listed, each driving its connector.
        let dev = try listed("fake-drm:two-crtc", in: dir)
        let crtcs = try #require(dev["crtcs"] as? [[String: Any]])
        #expect(crtcs.map { $0["id"] as? Int } == [70, 71])
        #expect(crtcs.map { ($0["mode"] as? [String: Any])?["width"] as? Int } == [1920, 2560])
        let fake = try FakeDRMProfileFile.load("two-crtc").makeDevice(wallClock: false, seed: 0)
        let display = try KMSDisplay.open(on: DRMDevice.open(fake: fake), connector: "DP-1")
        #expect(display.crtcID == 71)
        try display.close()
    }

    @Test func measureOnFakeDRM() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["measure", "--backend", "fake-drm", "--duration", "2", "--json"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let m = try object(r.out)
        #expect(m["backend"] as? String == "fake-drm" && m["driver"] as? String == "vkms" && m["vblank"] as? String == "hardware")
        #expect(abs((m["measuredRefreshHz"] as? Double ?? 0) - 60.0038) < 0.001 && m["missedVblanks"] as? Int == 0)
        #expect(r.err.contains("notice: fake-drm: a fake DRM device (simulator) on virtual time"))
        let bochs = try object(try cadence(["measure", "--backend", "fake-drm:bochs", "--duration", "1", "--json"], in: dir).out)
        #expect(bochs["vblank"] as? String == "none" && bochs["driver"] as? String == "bochs-drm")
    }

    /// The `"cadence"` section: a refresh override moves the measured refresh off the nominal
    /// one; jitter spreads the intervals.
    @Test func cadenceTimingSection() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var profile = try object(String(contentsOfFile: FakeDRMProfileFile.load("vkms").path, encoding: .utf8))
        profile["cadence"] = ["refreshOverrideHz": 59.5, "vblankJitterUs": 300, "eventLatencyUs": 100, "ignored": "x"]
        try JSONSerialization.data(withJSONObject: profile).write(to: URL(fileURLWithPath: dir + "/slow.json"))
        let r = try cadence(["measure", "--backend", "fake-drm:slow.json", "--duration", "3", "--json"], in: dir)
        let m = try object(r.out)
        #expect(abs((m["measuredRefreshHz"] as? Double ?? 0) - 59.5) < 0.01 && abs((m["nominalRefreshHz"] as? Double ?? 0) - 60.0038) < 0.001)
        let sd = (m["intervalMs"] as? [String: Any])?["stddev"] as? Double ?? 0
        #expect(sd > 0.05 && sd < 0.5, "jitter ±300 µs: stddev \(sd) ms")
        #expect(r.status == 1, "the timestamp checks catch a panel off its nominal refresh")
    }

    @Test func wallClockRunsInRealTime() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let start = Date()
        let r = try cadence(["run", "--backend", "fake-drm", "--fake-clock", "wall", "--scene", "solid", "--frames", "30", "--json", "--quiet"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try object(r.out)["backend"] as? String == "fake-drm-wall")
        #expect(Date().timeIntervalSince(start) >= 0.45, "30 frames at 60 Hz take half a second of wall time")
    }

    /// The fake display's timing options would be silently ignored on a fake DRM device (or a
    /// real display): they are refused in one line instead, and still accepted on `fake`.
    @Test func fakeDisplayTimingOptionsAreRefusedOffTheFakeDisplay() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for cmd in [["run"], ["validate", "--max-dropped", "0"]] {
            let r = try cadence(cmd + ["--backend", "fake-drm", "--fake-refresh", "144", "--frames", "10", "--quiet"], in: dir)
            #expect(r.status == 2 && r.out.isEmpty, "\(cmd) \(r.err)")
            #expect(r.err.split(separator: "\n").count == 1
                    && r.err.contains("--fake-refresh is for --backend fake only: a fake DRM device takes its timing from its profile"),
                    "\(cmd): \(r.err)")
        }
        let two = try cadence(["run", "--backend", "kms", "--fake-jitter-us", "5", "--fake-vrr", "48:120", "--frames", "10"], in: dir)
        #expect(two.status == 2 && two.err.contains("--fake-vrr, --fake-jitter-us are for --backend fake only: a real display"),
                "\(two.err)")
        let fake = try cadence(["run", "--backend", "fake", "--fake-refresh", "144", "--frames", "10", "--quiet"], in: dir)
        #expect(fake.status == 0 && fake.out.contains("refresh 144.000 Hz"), "\(fake.err)")
    }

    @Test(arguments: [
        ("missing.json", nil as String?, "profile missing.json: no such file"),
        ("nope", nil, "no profile 'nope': not a file, and no nope.json in "),
        ("bad.json", "{ not json", "profile bad.json: not JSON"),
        ("array.json", "[1, 2]", "profile array.json: not a drm_info -j object"),
        ("empty.json", "{\"/dev/dri/card0\": {\"driver\": {\"name\": \"x\"}, \"connectors\": []}}", "profile empty.json: /dev/dri/card0: no connectors"),
        ("shape.json", "{\"/dev/dri/card0\": {\"driver\": {\"name\": \"x\"}, \"connectors\": [{\"type\": 15}]}}", "profile shape.json: connector 0: no id or type"),
    ])
    func badProfileIsOneLine(file: String, content: String?, message: String) throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        if let content { try content.write(toFile: dir + "/" + file, atomically: true, encoding: .utf8) }
        for cmd in [["list"], ["run", "--frames", "10"], ["measure"], ["validate", "--max-dropped", "0"]] {
            let r = try cadence(cmd + ["--backend", "fake-drm:" + file], in: dir)
            #expect(r.status == 2, "\(cmd) \(r.err)")
            let lines = r.err.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(message), "\(cmd): \(r.err)")
            #expect(r.out.isEmpty, "\(cmd): \(r.out)")
        }
    }
}
