import Testing
import SystemPackage
@testable import DRM

@Suite struct OutputTests {
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
        #expect((59...61).contains(rec.samples.count))
        for (a, b) in zip(rec.samples, rec.samples.dropFirst()) {
            #expect(b.sequence == a.sequence + 1)
            #expect(abs(Double(b.timestampNs - a.timestampNs) - out.mode.refreshInterval) <= 1000)
            #expect(b.timestampNs <= b.receivedNs)
        }
        #expect(fake.calls.contains(api == .atomic ? "drmModeAtomicCommit(TEST_ONLY)" : "drmModeSetCrtc"))
        #expect(fake.calls.contains(api == .atomic ? "drmModeAtomicCommit" : "drmModePageFlip"))
        #expect(fake.activeMode[CRTCID(33)] == out.mode)
        try out.restore()
        // The CRTC was off before: it is off again.
        #expect(fake.activeMode[CRTCID(33)] == nil)
        #expect(!out.flipPending)
    }

    @Test func restoresThePreviousModeAndFramebuffer() throws {
        let fake = FakeDRMDevice()
        let fbcon = fake.connectors[0].modes[2] // 800x600 left by the console
        fake.preset(mode: fbcon, framebuffer: FramebufferID(900))
        let dev = try DRMDevice.open(fake: fake)
        let conn = try dev.connectors()[0]
        let out = try KMSOutput(device: dev, connector: conn, mode: conn.preferredMode!, api: .atomic)
        let chain = try Swapchain(device: dev, width: 1024, height: 768, count: 2, allocator: .gbm)
        _ = try out.recordFlips(swapchain: chain, shadow: ShadowBuffer(width: 1024, height: 768), durationNs: 100_000_000)
        #expect(fake.activeMode[CRTCID(33)]?.hdisplay == 1024)
        try out.restore()
        #expect(fake.activeMode[CRTCID(33)] == fbcon)
        #expect(fake.scanout[CRTCID(33)] == FramebufferID(900))
    }

    @Test func builtModeRunsAtItsRate() throws {
        let fake = FakeDRMDevice()
        let base = fake.connectors[0].modes[0]
        let (out, chain, shadow) = try setUp(fake, api: .auto, mode: base.withClockScaled(toRefresh: 144))
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 500_000_000)
        #expect((71...73).contains(rec.samples.count))
        let span = Double(rec.samples.last!.timestampNs - rec.samples.first!.timestampNs)
        let hz = Double(rec.samples.count - 1) * 1e9 / span
        #expect(abs(hz - 144) < 0.01)
    }

    @Test func missedVBlanksShowAsSequenceGaps() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.flipDelays = [0, 0, 0, 0, 0, 2, 0, 1] // the first three flips are warm-up
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 300_000_000)
        let gaps = zip(rec.samples, rec.samples.dropFirst()).map { $1.sequence - $0.sequence - 1 }
        #expect(gaps.reduce(0, +) == 3)
    }

    @Test func sequencesWidenAcrossThe32BitWrap() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.setVBlankCounter(to: 0xffff_fff0)
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 500_000_000)
        #expect(rec.samples.first!.sequence < 0x1_0000_0000)
        #expect(rec.samples.last!.sequence > 0x1_0000_0000)
        #expect(zip(rec.samples, rec.samples.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 })
    }

    @Test func warmupFlipsAreNotRecorded() throws {
        let fake = FakeDRMDevice()
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        fake.flipDelays = [4, 4]  // a slow start after the modeset
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 200_000_000, warmupFlips: 2)
        let gaps = zip(rec.samples, rec.samples.dropFirst()).map { $1.sequence - $0.sequence - 1 }
        #expect(gaps.reduce(0, +) == 0)
        #expect((11...13).contains(rec.samples.count))
        let all = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 100_000_000, warmupFlips: 0)
        #expect(all.samples.count >= 6)
    }

    @Test func noVBlankDriverIsDetectedAndPaced() throws {
        let fake = FakeDRMDevice()
        fake.hasVBlank = false
        fake.driver.name = "bochs-drm"
        let (out, chain, shadow) = try setUp(fake, api: .atomic)
        #expect(out.probeVBlank() == .none)
        let rec = try out.recordFlips(swapchain: chain, shadow: shadow, durationNs: 1_000_000_000)
        #expect(rec.vblank == .none)
        #expect(rec.samples.allSatisfy { $0.sequence == 0 })
        // Paced to the nominal period, not as fast as commits complete.
        #expect((55...61).contains(rec.samples.count))
    }

    @Test func vblankQueries() throws {
        let fake = FakeDRMDevice()
        let (out, chain, _) = try setUp(fake, api: .legacy)
        try out.modeset(framebuffer: chain.buffers[0].framebuffer)
        let a = try out.currentVBlank()
        fake.advance(by: 100_000_000)
        let b = try out.currentVBlank()
        #expect(b.sequence == a.sequence + 6)
        let q = try out.device.waitVBlankQuery(crtcIndex: 0)
        #expect(q.sequence == b.sequence)
        let target = try out.device.queueSequence(out.crtc, b.sequence + 2, userData: 77)
        #expect(target == b.sequence + 2)
        let events = try out.readEvents(until: out.device.monotonicNow() + 100_000_000)
        #expect(events.count == 1 && events[0].kind == .sequence && events[0].userData == 77)
        #expect(events[0].sequence == target)
    }

    @Test func busyDeviceAndLostDeviceSurfaceAsErrors() throws {
        let fake = FakeDRMDevice()
        let (out, chain, _) = try setUp(fake, api: .legacy)
        try out.modeset(framebuffer: chain.buffers[0].framebuffer)
        try out.flip(to: chain.buffers[1].framebuffer, userData: 2)
        // A second flip before the first completes: the kernel says EBUSY.
        let busy = #expect(throws: DRMError.self) { try out.flip(to: chain.buffers[2].framebuffer, userData: 3) }
        #expect(busy?.errno == .resourceBusy && busy?.call == "drmModePageFlip")
        _ = try out.readEvents(until: out.device.monotonicNow() + 50_000_000)
        fake.inject(.enodev, into: "drmModePageFlip")
        let lost = #expect(throws: DRMError.self) { try out.flip(to: chain.buffers[2].framebuffer, userData: 3) }
        #expect(lost?.errno == .enodev)
    }

    @Test func modesetRefusedByAnotherMaster() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        let conn = try dev.connectors()[0]
        let out = try KMSOutput(device: dev, connector: conn, mode: conn.preferredMode!, api: .legacy)
        let chain = try Swapchain(device: dev, width: 1024, height: 768, count: 2, allocator: .dumb)
        fake.inject(.permissionDenied, into: "drmModeSetCrtc")
        let e = #expect(throws: DRMError.self) { try out.modeset(framebuffer: chain.buffers[0].framebuffer) }
        #expect(e?.errno == .permissionDenied && e?.call == "drmModeSetCrtc" && e?.object == "CRTC 33")
    }

    @Test func atomicUnavailableFallsBackToLegacyOnAuto() throws {
        let fake = FakeDRMDevice()
        fake.supportsAtomic = false
        let (out, _, _) = try setUp(fake, api: .auto)
        #expect(out.api == .legacy)
        let dev = try DRMDevice.open(fake: fake)
        #expect(throws: DRMError.self) {
            try KMSOutput(device: dev, connector: try dev.connectors()[0], mode: out.mode, api: .atomic)
        }
    }
}
