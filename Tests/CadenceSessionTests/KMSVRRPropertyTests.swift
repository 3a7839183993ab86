import CadenceCore
import CadenceSession
import DRM
import KMSDisplay
import PropertyBased
import Testing

/// The reference model's VRR half (ReferenceModelVRR.swift) on the KMS path: ``PacingRun`` over
/// `KMSDisplay` over the fake DRM device playing the `amdgpu-vrr` profile (DP-1, 48–144 Hz),
/// on virtual time. There the panel has no LFC of its own: `KMSDisplay` commits the repeats
/// itself, and the fake panel starts a refresh 100 µs (`vrrResponseNs`) after a flip is
/// committed, which is the commit margin `cadence run` uses under VRR. Flip timestamps are whole
/// microseconds.
@Suite struct KMSVRRPropertyTests {
    /// Runs `s` on KMS over the fake `amdgpu-vrr` device and returns the model's mismatches.
    static func mismatches(_ s: VRRScenario) throws -> [String] {
        let fake = try FakeDRMProfileFile.load("amdgpu-vrr").makeDevice(wallClock: false, seed: 0)
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), vrr: .on, rate: s.range)
        var c = s.runConfiguration()
        c.commitMargin = 100_000
        let run = try PacingRun(backend: display, configuration: c)
        var reports: [FrameReport] = []
        run.onFrame = { reports.append($0) }
        let summary = try run.run()
        try display.close()
        // The panel's last refresh before the run: the vblank the first callback was woken by.
        let panelStart = Double(reports.first?.callbackTimestamp ?? 0)
        // Flip timestamps are whole µs (truncated): a shown time is up to 1 µs early, and each late
        // frame re-anchors the link's cadence on one, so the targets after it may part from the
        // model's by up to 1 µs more (90 fps … 117 Hz with three late frames: 1.46 µs).
        let slop = 1_000 * Double(2 + s.injectLate.count) + Double(s.frames)
        return ReferenceModel.vrrMismatches(
            s, reports: reports, summary: summary, panelStart: panelStart, commitMargin: 100_000,
            response: Double(fake.vrrResponseNs), slop: slop)
    }

    @Test func thePacerFollowsTheVRRModelOnKMS() async {
        await propertyCheck(count: 200, input: VRRGen.knobs(frames: 60...150)) { k in
            var k = k
            k.panel = 0
            k.drift = 0
            let s = VRRGen.scenario(k)
            // Below the panel's minimum KMSDisplay repeats each frame itself, from the pacing
            // thread (the model's panel repeats by itself, as the fake display's and amdgpu's
            // do), and no repeat is committed while a late render holds that thread: the panel
            // refreshes on its own at its longest refresh and the late frame waits its shortest
            // refresh after that (24 Hz, late 2:1: frame 2 6.94 ms late on KMS, 3.47 ms in the
            // model, whose panel repeated frame 1 meanwhile). So LFC rates run here without
            // injected lateness. (Frames shown late by the panel itself now agree: their repeats
            // fill the time left until the next frame is due on both, issue 21.)
            if ReferenceModel.vrrRate(for: s.range, panel: s.vrr).repeats > 1 && !s.injectLate.isEmpty { return }
            let wrong = try Self.mismatches(s)
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }
}
