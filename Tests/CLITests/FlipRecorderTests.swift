import Testing
import CadenceCore
import CadenceSession
import DRM
@testable import cadence

/// The `measure` flip loop over the fake DRM device: flips at every vblank, sequences, warm-up,
/// missed vblanks, drivers without vblank, stopping.
@Suite struct FlipRecorderTests {
    func setUp(_ fake: FakeDRMDevice, api: ModesetAPI, mode: ModeInfo? = nil) throws -> (KMSOutput, Swapchain, ShadowBuffer) {
        let dev = try DRMDevice.open(fake: fake)
        let conn = try dev.connectors()[0]
        let m = mode ?? conn.preferredMode!
        let out = try KMSOutput(device: dev, connector: conn, mode: m, api: api)
        let chain = try Swapchain(device: dev, width: Int(m.hdisplay), height: Int(m.vdisplay), allocator: .dumb)
        return (out, chain, ShadowBuffer(width: Int(m.hdisplay), height: Int(m.vdisplay)))
    }

    @Test(arguments: [ModesetAPI.atomic, .legacy])
    func flipsEveryVBlankAndRestores(api: ModesetAPI) throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: api)
        #expect(out.api == api)
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 1_000_000_000)
        #expect(rec.vblank == .hardware)
        #expect((59...61).contains(rec.flips.count))
        for (a, b) in zip(rec.flips, rec.flips.dropFirst()) {
            #expect(b.sequence == a.sequence + 1)
            #expect(abs(Double(b.timestamp - a.timestamp) - out.mode.refreshInterval) <= 1000)
            #expect(b.timestamp <= b.receivedAt)
        }
        #expect(fake.calls.contains(api == .atomic ? "drmModeAtomicCommit(TEST_ONLY)" : "drmModeSetCrtc"))
        #expect(fake.calls.contains(api == .atomic ? "drmModeAtomicCommit" : "drmModePageFlip"))
        #expect(fake.activeMode[CRTCID(33)] == out.mode)
        try out.restore()
        // The CRTC was off before: it is off again.
        #expect(fake.activeMode[CRTCID(33)] == nil)
        #expect(!out.flipPending)
    }

    @Test func builtModeRunsAtItsRate() throws {
        let fake = FakeDRMDevice()
        let base = fake.connectors[0].modes[0]
        let (out, chain, shadow) = try setUp(fake, api: .auto, mode: base.withClockScaled(toRefresh: 144))
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 500_000_000)
        #expect((71...73).contains(rec.flips.count))
        let span = Double(rec.flips.last!.timestamp - rec.flips.first!.timestamp)
        let hz = Double(rec.flips.count - 1) * 1e9 / span
        #expect(abs(hz - 144) < 0.01)
    }

    /// The device disappears mid-measurement (ENODEV from the next commit, as a removed PCI
    /// device gives): the loop throws ENODEV, which `measure` reports as a lost device (exit 1),
    /// and restoring afterwards does not trap.
    @Test(arguments: [ModesetAPI.atomic, .legacy])
    func aLostDeviceEndsTheLoopWithENODEV(api: ModesetAPI) throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: api)
        var turns = 0
        #expect {
            _ = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 5_000_000_000, shouldStop: {
                turns += 1
                if turns == 40 { fake.inject(.enodev, into: api == .legacy ? "drmModePageFlip" : "drmModeAtomicCommit", times: 1000) }
                return false
            })
        } throws: { e in
            (e as? DRMError)?.errno == .enodev
        }
        #expect(turns >= 40)
        _ = try? out.restore()
    }

    @Test func missedVBlanksShowAsSequenceGaps() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.flipDelays = [0, 0, 0, 0, 0, 2, 0, 1] // the first three flips are warm-up
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 300_000_000)
        let gaps = zip(rec.flips, rec.flips.dropFirst()).map { $1.sequence - $0.sequence - 1 }
        #expect(gaps.reduce(0, +) == 3)
    }

    @Test func sequencesWidenAcrossThe32BitWrap() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.setVBlankCounter(to: 0xffff_fff0)
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 500_000_000)
        #expect(rec.flips.first!.sequence < 0x1_0000_0000)
        #expect(rec.flips.last!.sequence > 0x1_0000_0000)
        #expect(zip(rec.flips, rec.flips.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 })
    }

    /// measure's CRC check across the wrap: the flips and the CRC lines are widened against one
    /// 64-bit count, so every measured flip is verified wherever the 32-bit counter wraps (during
    /// the warm-up, between the first CRC line and the first flip, at the first measured flip,
    /// later), as far from it.
    @Test func theCRCCheckSurvivesThe32BitWrap() throws {
        // A first flip 3 refreshes late: CRC lines of vblanks before the wrap are read before it.
        for (before, delay) in [UInt64?.none, 1, 2, 3, 4, 5, 30].flatMap({ b in [0, 3].map { (b, $0) } }) {
            let fake = FakeDRMDevice()
            let (out, chain, shadow) = try setUp(fake, api: .atomic)
            if let before { fake.setVBlankCounter(to: (1 << 32) - before) }
            fake.flipDelays = [delay]
            let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 500_000_000, crcSource: "auto")
            let v = try #require(rec.scanout)
            #expect(rec.flips.count >= 29)
            #expect(
                v.frames == rec.flips.count && v.verified == rec.flips.count && v.mismatches == 0 && v.inexact == 0,
                "counter from 2³² − \(before.map(String.init) ?? "none"), first flip \(delay) late: \(v)")
        }
    }

    @Test func warmupFlipsAreNotRecorded() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.flipDelays = [4, 4]  // a slow start after the modeset
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 200_000_000, warmupFlips: 2)
        let gaps = zip(rec.flips, rec.flips.dropFirst()).map { $1.sequence - $0.sequence - 1 }
        #expect(gaps.reduce(0, +) == 0)
        #expect((11...13).contains(rec.flips.count))
        let all = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 100_000_000, warmupFlips: 0)
        #expect(all.flips.count >= 6)
    }

    @Test func noVBlankDriverIsDetectedAndPaced() throws {
        let fake = FakeDRMDevice()
        fake.hasVBlank = false
        fake.driver.name = "bochs-drm"
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        #expect(out.probeVBlank() == .none)
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 1_000_000_000)
        #expect(rec.vblank == .none)
        #expect(rec.flips.allSatisfy { $0.sequence == 0 })
        // Paced to the nominal period, not as fast as commits complete.
        #expect((55...61).contains(rec.flips.count))
    }

    @Test func shouldStopEndsTheRecordingEarly() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        var asked = 0
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 10_000_000_000, warmupFlips: 0,
                                      shouldStop: { asked += 1; return asked > 20 })
        #expect(rec.stopped)
        #expect(rec.flips.count < 30)
    }
}
