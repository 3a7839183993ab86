import ArgumentParser
import CadenceCore
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Testing
@testable import cadence

/// `--backend auto` falls back to the fake display only on a machine without any DRM card;
/// a card that cannot be opened or mastered is an error with the reason and what to do.
/// Tested on the scripted DRM device (no /dev/dri needed).
@Suite(.serialized) struct BackendChoiceTests {
    func open(_ backend: String, _ source: DeviceSource, device: String? = nil,
              purpose: BackendChoice.Purpose = .run) throws -> (display: any DisplayBackend, notice: String?) {
        try BackendChoice.open(backend: backend, device: device, connector: nil, mode: nil,
                               fake: FakeDisplayConfiguration(), source: source, purpose: purpose)
    }

    /// The one line an open fails with.
    func failure(_ backend: String, _ fake: FakeDRMDevice, purpose: BackendChoice.Purpose = .run) -> String? {
        do {
            _ = try open(backend, .fake(fake), purpose: purpose)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test func noCardAtAllFallsBackForRunOnly() throws {
        let none = FakeDRMDevice()
        none.cardNodes = []
        let (display, notice) = try open("auto", .fake(none))
        #expect(display is FakeDisplay)
        #expect(notice == "no DRM device (/dev/dri has no card* nodes): using the fake display at 60 Hz, a simulator")
        #expect(none.calls.isEmpty, "nothing was opened")
        // validate never judges the simulator by accident.
        #expect(failure("auto", none, purpose: .validate) == BackendChoice.validateNeedsDisplay)
        // Asked for explicitly, both get it, without a notice.
        let explicit = try open("fake", .fake(none), purpose: .validate)
        #expect(explicit.display is FakeDisplay && explicit.notice == nil)
        // kms, or a named device, never falls back.
        #expect(failure("kms", none) == OutputSelection.noDeviceMessage)
        let named = #expect(throws: CLIFailure.self) { try open("auto", .fake(none), device: "/dev/dri/card7") }
        #expect(named?.description == "no such device: /dev/dri/card7")
    }

    @Test func aCardThatOpensIsUsed() throws {
        for purpose in [BackendChoice.Purpose.run, .validate] {
            let fake = FakeDRMDevice()
            let (display, notice) = try open("auto", .fake(fake), purpose: purpose)
            #expect(display is KMSDisplay && notice == nil)
            #expect(fake.calls.contains("drmSetMaster") || fake.calls.contains("open"))
            try (display as? KMSDisplay)?.close()
        }
    }

    @Test(arguments: ["auto", "kms"], [BackendChoice.Purpose.run, .validate])
    func noPermissionIsAnErrorWithTheVideoGroupHint(backend: String, purpose: BackendChoice.Purpose) {
        let fake = FakeDRMDevice()
        fake.openError = .permissionDenied
        let line = failure(backend, fake, purpose: purpose)
        #expect(line == "permission denied opening /dev/dri/card0: add your user to the 'video' group (sudo usermod -aG video $USER, then log in again) or run as root")
    }

    @Test(arguments: ["auto", "kms"], [BackendChoice.Purpose.run, .validate])
    func anotherMasterIsAnErrorWithTheVTHint(backend: String, purpose: BackendChoice.Purpose) {
        let fake = FakeDRMDevice()
        fake.masterHeldElsewhere = true
        let line = failure(backend, fake, purpose: purpose) ?? ""
        #expect(line.hasPrefix("/dev/dri/card0 is held by another DRM master (a compositor or X server?): stop the compositor or X server on it, or run from a free text VT (Ctrl+Alt+F3)"), "\(line)")
        #expect(line.contains("EBUSY"))
        #expect(!line.contains("fake display"))
    }

    @Test func masterRefusedWithEACCESOrAModesetRefusedIsAnError() {
        // Another master, and the kernel says EACCES (not EBUSY) to drmSetMaster.
        let refused = FakeDRMDevice()
        refused.masterHeldElsewhere = true
        refused.inject(.permissionDenied, into: "drmSetMaster")
        let a = failure("auto", refused) ?? ""
        #expect(a.contains("held by another DRM master") && a.contains("EACCES") && a.contains("free text VT"), "\(a)")
        // The kernel refuses the modeset itself with EACCES (master lost between the checks).
        let modeset = FakeDRMDevice()
        modeset.inject(.permissionDenied, into: "drmModeAtomicCommit", times: 4)
        let b = failure("auto", modeset) ?? ""
        #expect(b.contains("held by another DRM master") && b.contains("EACCES") && b.contains("free text VT"), "\(b)")
        let busy = FakeDRMDevice()
        busy.inject(.resourceBusy, into: "drmModeAtomicCommit", times: 4)
        let c = failure("auto", busy) ?? ""
        #expect(c.contains("is busy") && c.contains("EBUSY") && c.contains("free text VT"), "\(c)")
    }

    @Test func errorsAreClassified() {
        let path = "/dev/dri/card0"
        #expect(OutputSelection.failure(DRMError(call: "open", object: path, errno: .permissionDenied), path: path).kind == .permissionDenied)
        #expect(OutputSelection.failure(DRMError(call: "open", object: path, errno: .noSuchFileOrDirectory), path: path).kind == .noSuchNode)
        #expect(OutputSelection.failure(DRMError(call: "drmSetMaster", object: path, errno: .resourceBusy), path: path).kind == .masterHeld)
        #expect(OutputSelection.failure(DRMError(call: "drmModeSetCrtc", object: "CRTC 33", errno: .permissionDenied), path: path).kind == .masterHeld)
        #expect(OutputSelection.failure(DRMError(call: "drmModePageFlip", object: "CRTC 33", errno: .resourceBusy), path: path).kind == .busy)
        #expect(OutputSelection.failure(DRMError(call: "drmGetVersion", object: path, errno: .enotty), path: path).kind == .other)
        #expect(throws: OutputSelectionError(OutputSelection.noDeviceMessage, kind: .noDevice)) {
            try OutputSelection.devicePath(nil, discovered: [])
        }
    }

    /// `cadence run --backend kms --latency 3` over the fake DRM device: the run works, latency
    /// is 2, and the notice says why.
    @Test func kmsRunCapsLatencyAtTwoAndSaysSo() throws {
        let fake = FakeDRMDevice()
        let cmd = try RunCommand.parse(["--backend", "kms", "--scene", "solid", "--frames", "60", "--latency", "3", "--quiet"])
        var notice: String?
        let s = try cmd.pace(source: .fake(fake), onRun: { run, _ in
            notice = RunPlanning.latencyNotice(requested: 3, display: run.backend)
        })
        #expect(s.backend == "kms" && s.frames == 60 && s.latency == 2)
        #expect(notice == "kms has 3 buffers, so frame latency is capped at 2: --latency 3 runs as 2")
        #expect(RunPlanning.latencyNotice(requested: 2, display: FakeDisplay(FakeDisplayConfiguration())) == nil)
        #expect(RunPlanning.latencyNotice(requested: 3, display: FakeDisplay(FakeDisplayConfiguration())) == nil)
    }

    /// `cadence validate` on the KMS path over the fake DRM device: a device error is exit 2,
    /// and a working device is judged (not the simulator).
    @Test func validateExitsTwoOnDeviceErrorsAndJudgesTheCard() throws {
        let held = FakeDRMDevice()
        held.masterHeldElsewhere = true
        let cmd = try ValidateCommand.parse(["--scene", "solid", "--frames", "60", "--quiet", "--max-dropped", "0"])
        do {
            try cmd.execute(source: .fake(held))
            Issue.record("validate passed without a device")
        } catch let e as ExitCode {
            #expect(e.rawValue == 2)
        }
        let none = FakeDRMDevice()
        none.cardNodes = []
        do {
            try cmd.execute(source: .fake(none))
            Issue.record("validate passed on the simulator by accident")
        } catch let e as ExitCode {
            #expect(e.rawValue == 2)
        }
        // The card goes away after the modeset: the verdict is a failure (exit 1), not a pass
        // and not a usage error, and the JUnit file records it.
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lost = FakeDRMDevice()
        let gone = try ValidateCommand.parse(["--scene", "solid", "--frames", "60", "--quiet", "--max-dropped", "100",
                                              "--junit", dir + "/v.xml"])
        do {
            try gone.execute(source: .fake(lost), onRun: { _ in lost.inject(.enodev, into: "drmModeAtomicCommit", times: 1000) })
            Issue.record("validate passed on a lost device")
        } catch let e as ExitCode {
            #expect(e.rawValue == 1)
        }
        let xml = try String(contentsOfFile: dir + "/v.xml", encoding: .utf8)
        #expect(xml.contains("<testcase classname=\"cadence.validate\" name=\"device\">"), "\(xml)")
        #expect(xml.contains("the device was lost mid-run (device-lost"), "\(xml)")
        var backend: String?
        let judged = try ValidateCommand.parse(["--scene", "solid", "--frames", "60", "--quiet", "--max-dropped", "0"])
        let s = try judged.options.pace(source: .fake(FakeDRMDevice()), purpose: .validate, onRun: { run, _ in backend = run.backend.name })
        #expect(backend == "kms" && s.frames == 60)
    }
}

/// "stuck at 60": a connector that offers a faster mode at the size in use.
@Suite struct FasterModeTests {
    /// vkms' 1024x768@60.0038 with its pixel clock scaled to `hz`.
    func mode(_ hz: Double, _ base: ModeInfo, preferred: Bool = false) -> ModeInfo {
        var m = base
        m.clock = UInt32((Double(base.clock) * hz / base.refreshHz).rounded())
        m.type = preferred ? [.preferred, .driver] : [.driver]
        return m
    }

    @Test func theFastestSameSizeModeIsFound() {
        let base = FakeDRMDevice().connectors[0].modes[0]
        let sixty = mode(60, base, preferred: true)
        let list = [sixty, mode(75, base), mode(144, base), mode(120, base)]
        #expect(OutputSelection.fasterMode(than: sixty, in: list).map { Int($0.refreshHz.rounded()) } == 144)
        #expect(OutputSelection.fasterMode(than: mode(144, base), in: list) == nil)
        // Within 0.5 Hz is the same rate; other sizes and interlaced modes do not count.
        #expect(OutputSelection.fasterMode(than: sixty, in: [sixty, mode(60.4, base)]) == nil)
        #expect(OutputSelection.fasterMode(than: sixty, in: [sixty, mode(60.6, base)]) != nil)
        var other = mode(144, base)
        other.hdisplay = 800
        var interlaced = mode(144, base)
        interlaced.flags.insert(.interlace)
        #expect(OutputSelection.fasterMode(than: sixty, in: [sixty, other, interlaced]) == nil)
    }

    @Test func listWarnsOncePerConnectorThatCouldGoFaster() throws {
        let fake = FakeDRMDevice()
        let base = fake.connectors[0].modes[0]
        fake.connectors[0].modes.append(mode(120, base))
        let report = try DeviceInventory(try DRMDevice.open(fake: fake))
        let w = report.fasterModeWarnings
        #expect(w.count == 1)
        #expect(w.first?.hasPrefix("Virtual-1 prefers 1024x768@60.0038 Hz but offers 1024x768@120") == true, "\(w)")
        #expect(w.first?.contains("(stuck at 60 Hz?): --mode 1024x768@120") == true, "\(w)")
        // Driven (by fbcon, say) at 60: the CRTC's mode is the one in use.
        let driven = FakeDRMDevice()
        driven.connectors[0].modes.append(mode(120, base))
        driven.preset(mode: base)
        let d = try DeviceInventory(try DRMDevice.open(fake: driven)).fasterModeWarnings
        #expect(d == ["Virtual-1 is driven at 1024x768@60.0038 Hz but offers 1024x768@120.0003 Hz at the same size (stuck at 60 Hz?): --mode 1024x768@120.0003 uses it"])
        // Driven at the fast mode: nothing to say.
        let fast = FakeDRMDevice()
        fast.connectors[0].modes.append(mode(120, base))
        fast.preset(mode: fast.connectors[0].modes.last!)
        #expect(try DeviceInventory(try DRMDevice.open(fake: fast)).fasterModeWarnings.isEmpty)
        // The plain fake (vkms' three sizes) offers nothing faster; a disconnected one is skipped.
        #expect(try DeviceInventory(try DRMDevice.open(fake: FakeDRMDevice())).fasterModeWarnings.isEmpty)
        fake.connectors[0].status = .disconnected
        #expect(try DeviceInventory(try DRMDevice.open(fake: fake)).fasterModeWarnings.isEmpty)
    }
}
