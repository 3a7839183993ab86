import CadenceCore
import DRM
import PropertyBased
import Testing
@testable import KMSDisplay

/// The reference model's property on the KMS path: PacingRun over KMSDisplay over the fake DRM
/// device (60 and 144 Hz modes, 1 ms commit margin as `cadence run` uses on KMS; flip events
/// carry whole microseconds, so times are known to ±1 µs and ε is 1–1.001 µs).
@Suite struct KMSPacingPropertyTests {
    /// Link and minimum-duration frames; content frames' outcomes and causes are checked in
    /// `contentFramesOnKMSAreOnTime`.
    @Test func thePacerFollowsTheModelOnKMS() async {
        await check(count: 300, content: false)
    }

    /// Content frames on KMS, outcomes and causes too. Flip timestamps are whole µs, so a
    /// content rate that puts frames on vblanks (144 on 144 Hz) has its times within ε of them:
    /// one frame took the later vblank, the next aimed at that same one, was shown a vblank
    /// later (where the contract allows) and reported late by 1, flip-late, 0 dropped
    /// refreshes, and so was every frame after it. Shrunk counterexample (as found): 144 Hz, latency 2, 60 frames,
    /// content 144 Hz: frame 9 (due 1 µs after vblank 9) shown at vblank 10; frames 10–59 each
    /// aim at their predecessor's vblank: 50 frames late/flip-late, summary causes
    /// [flip-late: 50] with 0 dropped refreshes (model: all on time, causes [:]).
    @Test
    func contentFramesOnKMSAreOnTime() async throws {
        try expectTheModel(PacingScenario(refreshHz: 144, latency: 2, frames: 60, mode: .content(144)), content: true)
        await check(count: 300, content: true)
    }

    func check(count: Int, content: Bool) async {
        await propertyCheck(count: count, input: PacingGen.knobs(frames: 60...150)) { k in
            var k = k
            if content { k.mode = 2 }
            try expectTheModel(PacingGen.scenario(k, refreshes: [60, 144], noisy: false, guardNs: 3_000, maxRefreshes: 600), content: content)
        }
    }

    /// Runs `s` on KMSDisplay over the fake DRM device and expects the model's answer
    /// (`content`: content frames' outcomes and causes too).
    func expectTheModel(_ s: PacingScenario, content: Bool) throws {
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: KMSPacingTests.device()), mode: "640x480@\(Int(s.refreshHz))")
        let run = try PacingRun(backend: display, configuration: s.runConfiguration(commitMargin: 1_000_000))
        var reports: [FrameReport] = []
        run.onFrame = { reports.append($0) }
        let summary = try run.run()
        try display.close()
        let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary, slop: 2_000, checkOutcomes: content || !s.mode.isContent)
        #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
    }
}
