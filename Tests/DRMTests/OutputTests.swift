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

    @Test func restoresThePreviousModeAndFramebuffer() throws {
        let fake = FakeDRMDevice()
        let fbcon = fake.connectors[0].modes[2] // 800x600 left by the console
        fake.preset(mode: fbcon, framebuffer: FramebufferID(900))
        let dev = try DRMDevice.open(fake: fake)
        let conn = try dev.connectors()[0]
        let out = try KMSOutput(device: dev, connector: conn, mode: conn.preferredMode!, api: .atomic)
        let chain = try Swapchain(device: dev, width: 1024, height: 768, count: 2, allocator: .gbm)
        try out.modeset(framebuffer: chain.buffers[0].framebuffer)
        #expect(fake.activeMode[CRTCID(33)]?.hdisplay == 1024)
        try out.restore()
        #expect(fake.activeMode[CRTCID(33)] == fbcon)
        #expect(fake.scanout[CRTCID(33)] == FramebufferID(900))
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
