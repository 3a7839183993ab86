import Testing
import CadenceCore
import DRM
@testable import KMSDisplay

@Suite struct KMSDisplayTests {
    func open(_ fake: FakeDRMDevice, mode: String? = nil, api: ModesetAPI = .auto, allocator: BufferAllocator = .dumb) throws -> KMSDisplay {
        try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: mode, allocator: allocator, api: api)
    }

    func wait(_ d: KMSDisplay, ms: Int64 = 100) throws -> [BackendEvent] {
        var events: [BackendEvent] = []
        try d.waitForEvents(until: d.now() + ms * 1_000_000, into: &events)
        return events
    }

    @Test(arguments: [ModesetAPI.atomic, .legacy])
    func presentsEachFrameAtTheNextVBlank(api: ModesetAPI) throws {
        let fake = FakeDRMDevice()
        let d = try open(fake, api: api)
        #expect(d.name == "kms" && d.crtcID == 33 && d.hasHardwareVBlank)
        #expect(abs(d.refreshInterval - 1344.0 * 806 / 65_000_000 * 1e9) < 1e-3)
        #expect(d.queueCapacity == 1)
        let surface = try #require(d.surface)
        #expect(surface.width == 1024 && surface.height == 768 && surface.stride == 4096)
        var last = try d.lastVBlank()
        for frame: FrameID in 1...5 {
            surface.base.storeBytes(of: UInt32(frame), toByteOffset: 0, as: UInt32.self)
            try d.finish(frame: frame)
            try d.submit(frame: frame)
            let events = try wait(d)
            guard case .presented(let f, let vb, let receivedAt) = try #require(events.first) else {
                Issue.record("expected presented, got \(events)"); return
            }
            #expect(f == frame)
            #expect(vb.sequence == last.sequence + 1)
            #expect(vb.timestamp <= receivedAt)
            #expect(abs(Double(vb.timestamp - last.timestamp) - d.refreshInterval) <= 1000)
            last = vb
            // The scanout buffer got the shadow's pixels by copy.
            let on = try #require(d.swapchain.onScreen)
            #expect(d.swapchain.buffers[on].pixels.load(as: UInt32.self) == UInt32(frame))
        }
        try d.close()
        #expect(fake.activeMode[CRTCID(33)] == nil)
    }

    @Test func secondSubmitWhileFlipPendingIsBusy() throws {
        let d = try open(FakeDRMDevice())
        try d.finish(frame: 1)
        try d.finish(frame: 2)
        try d.submit(frame: 1)
        #expect(throws: BackendFailure.busy) { try d.submit(frame: 2) }
        _ = try wait(d)
        try d.submit(frame: 2)
        let ev = try wait(d)
        guard case .presented(2, _, _) = ev.first else { Issue.record("\(ev)"); return }
    }

    @Test func finishRecyclesTheOldestUnsubmittedFrame() throws {
        let d = try open(FakeDRMDevice())
        try d.finish(frame: 1)
        try d.submit(frame: 1)            // in flight
        try d.finish(frame: 2)            // the one free buffer
        try d.finish(frame: 3)            // no free buffer: frame 2's is reused
        #expect(throws: BackendFailure.self) { try d.submit(frame: 2) }
        _ = try wait(d)
        try d.submit(frame: 3)
        guard case .presented(3, _, _) = try wait(d).first else { Issue.record("frame 3 not presented"); return }
    }

    @Test func vblankRequests() throws {
        let d = try open(FakeDRMDevice())
        let v = try d.lastVBlank()
        try d.requestVBlank(after: v.sequence + 1)
        var events = try wait(d, ms: 50)
        guard case .vblank(let vb) = try #require(events.first) else { Issue.record("\(events)"); return }
        #expect(vb.sequence == v.sequence + 2)
        // Already passed: delivered at once with the latest vblank.
        try d.requestVBlank(after: v.sequence)
        events = try wait(d, ms: 0)
        guard case .vblank(let now) = try #require(events.first) else { Issue.record("\(events)"); return }
        #expect(now.sequence >= vb.sequence)
    }

    @Test func waitingUntilADeadlineWithNothingPendingReturnsEmptyAtTheDeadline() throws {
        let d = try open(FakeDRMDevice())
        let start = d.now()
        let events = try wait(d, ms: 30)
        #expect(events.isEmpty)
        #expect(d.now() - start >= 30_000_000)
    }

    @Test func spinBusyWaitsOnTheDeviceClock() throws {
        let d = try open(FakeDRMDevice())
        let t = d.now() + 5_000_000
        d.spin(until: t)
        #expect(d.now() >= t)
    }

    @Test func noVBlankDriverFlipsAtOnceAndSynthesisesVBlanks() throws {
        let fake = FakeDRMDevice()
        fake.hasVBlank = false
        let d = try open(fake)
        #expect(!d.hasHardwareVBlank)
        try d.finish(frame: 9)
        let submitted = d.now()
        try d.submit(frame: 9)
        guard case .presented(9, let vb, _) = try wait(d).first else { Issue.record("not presented"); return }
        #expect(vb.timestamp - submitted <= fake.commitLatencyNs + 1000)
        try d.requestVBlank(after: vb.sequence)
        guard case .vblank(let next) = try wait(d).first else { Issue.record("no vblank"); return }
        #expect(next.sequence == vb.sequence + 1)
        #expect(abs(Double(next.timestamp - vb.timestamp) - d.refreshInterval) < 2)
        // A frame finished 3.4 refreshes later lands 3 synthetic refreshes on.
        d.spin(until: vb.timestamp + Int64(3.4 * d.refreshInterval) - fake.commitLatencyNs)
        try d.finish(frame: 10)
        try d.submit(frame: 10)
        guard case .presented(10, let later, _) = try wait(d).first else { Issue.record("frame 10 not presented"); return }
        #expect(later.sequence == vb.sequence + 3)
    }

    @Test func deviceLossIsReportedAndSticky() throws {
        let fake = FakeDRMDevice()
        let d = try open(fake)
        try d.finish(frame: 1)
        fake.inject(.enodev, into: "drmModeAtomicCommit")
        #expect {
            try d.submit(frame: 1)
        } throws: { e in
            if case BackendFailure.deviceLost = e { return true }
            return false
        }
        #expect(throws: BackendFailure.self) { try d.finish(frame: 2) }
    }

    @Test func kernelBusyMapsToBusy() throws {
        let fake = FakeDRMDevice()
        let d = try open(fake, api: .legacy)
        try d.finish(frame: 1)
        fake.inject(.resourceBusy, into: "drmModePageFlip")
        #expect(throws: BackendFailure.busy) { try d.submit(frame: 1) }
        try d.submit(frame: 1)  // still finished: can be submitted again
        guard case .presented(1, _, _) = try wait(d).first else { Issue.record("not presented"); return }
    }

    @Test func builtModeAndGBM() throws {
        let fake = FakeDRMDevice()
        let d = try open(fake, mode: "1024x768@144", allocator: .gbm)
        #expect(abs(d.refreshInterval - 1e9 / 144) < 100)
        #expect(d.selection.source == "scaled-clock")
        #expect(d.selection.note?.contains("155990 kHz") == true)
        #expect(d.swapchain.buffers.allSatisfy { $0.allocator == .gbm })
    }

    @Test func badInputIsOneLine() throws {
        let fake = FakeDRMDevice()
        #expect(throws: OutputSelectionError("no connector named HDMI-A-1 on /dev/dri/card0 (connectors: Virtual-1)")) {
            try KMSDisplay.open(on: try DRMDevice.open(fake: fake), connector: "HDMI-A-1")
        }
        #expect(throws: OutputSelectionError.self) { try open(fake, mode: "1280x1024") }
        #expect(throws: OutputSelectionError.self) { try open(fake, mode: "garbage") }
        #expect(throws: OutputSelectionError("mode 9000x100@60 is outside what /dev/dri/card0 can scan out (0x0 to 8192x8192)")) {
            try open(fake, mode: "9000x100@60")
        }
        fake.connectors[0].status = .disconnected
        #expect(throws: OutputSelectionError("connector Virtual-1 is disconnected")) {
            try KMSDisplay.open(on: try DRMDevice.open(fake: fake), connector: "Virtual-1")
        }
        let held = FakeDRMDevice()
        held.masterHeldElsewhere = true
        let e = #expect(throws: OutputSelectionError.self) { try open(held) }
        #expect(e?.description.contains("held by another DRM master") == true)
        let noCRTC = FakeDRMDevice()
        noCRTC.encoders[0].possibleCRTCs = 0
        #expect(throws: OutputSelectionError("/dev/dri/card0: no CRTC can drive Virtual-1")) { try open(noCRTC) }
        let noGBM = FakeDRMDevice()
        noGBM.inject(.noSuchFileOrDirectory, into: "gbm_create_device")
        let g = #expect(throws: OutputSelectionError.self) { try open(noGBM, allocator: .gbm) }
        #expect(g?.description.hasPrefix("GBM cannot allocate on /dev/dri/card0") == true)
        let notDRM = FakeDRMDevice()
        notDRM.isNotDRM = true
        #expect(throws: OutputSelectionError("/dev/dri/card0 is not a DRM device")) { try open(notDRM) }
    }

    @Test func releasesKernelObjectsAndRestores() throws {
        let fake = FakeDRMDevice()
        let mode = fake.connectors[0].modes[2]
        fake.preset(mode: mode)
        do {
            let d = try open(fake)
            try d.finish(frame: 1)
            try d.submit(frame: 1)
            _ = d  // deinit restores (waiting for the flip) and frees the buffers
        }
        #expect(fake.activeMode[CRTCID(33)] == mode)
        #expect(fake.liveFramebuffers == 0 && fake.liveDumbBuffers == 0 && fake.liveBlobs == 0)
    }
}
