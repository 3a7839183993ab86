import Testing
import SystemPackage
@testable import DRM

@Suite struct DeviceTests {
    @Test func discoversAndDescribesTheFakeCard() throws {
        let fake = FakeDRMDevice()
        fake.connectors[0].edid = Array(repeating: 0xAB, count: 128)
        #expect(DRMDevice.discover(fake: fake) == ["/dev/dri/card0"])
        let dev = try DRMDevice.open(fake: fake)
        #expect(try dev.version().name == "fake")
        #expect(try dev.capability(.timestampMonotonic) == 1)
        #expect(dev.has(.dumbBuffer))
        #expect(!dev.has(.asyncPageFlip))
        let conns = try dev.connectors()
        #expect(conns.map(\.name) == ["Virtual-1"])
        #expect(conns[0].status == .connected)
        #expect(abs(conns[0].preferredMode!.refreshHz - 60.0038) < 1e-4)
        #expect(try dev.edid(of: conns[0].id)?.count == 128)
        let props = try dev.properties(of: conns[0].id, type: .connector)
        #expect(props.contains { $0.info.name == "DPMS" && $0.displayValue == "On" })
        let kinds = try dev.planeIDs().map { try dev.planeKind($0) }
        #expect(kinds.filter { $0 == .primary }.count == 1)
    }

    @Test func missingPathAndNonDRMFile() throws {
        let fake = FakeDRMDevice()
        #expect(throws: DRMError(call: "open", object: "/dev/dri/card9", errno: .noSuchFileOrDirectory)) {
            try DRMDevice(sys: fake, path: "/dev/dri/card9")
        }
        fake.isNotDRM = true
        let dev = try DRMDevice.open(fake: fake)
        let e = #expect(throws: DRMError.self) { try dev.version() }
        #expect(e?.errno == .enotty && e?.call == "drmGetVersion")
    }

    @Test func noPermission() {
        let fake = FakeDRMDevice()
        fake.openError = .permissionDenied
        let e = #expect(throws: DRMError.self) { try DRMDevice.open(fake: fake) }
        #expect(e?.errno == .permissionDenied && e?.call == "open")
    }

    @Test func eintrIsRetriedOtherErrnoCarriesContext() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        fake.inject(.interrupted, into: "drmModeGetResources", times: 2)
        #expect(try dev.resources().connectors == [ConnectorID(35)])
        #expect(fake.calls.filter { $0 == "drmModeGetResources" }.count == 3)
        fake.inject(.invalidArgument, into: "drmModeGetCrtc")
        #expect(throws: DRMError(call: "drmModeGetCrtc", object: "CRTC 33", errno: .invalidArgument)) {
            try dev.crtc(CRTCID(33))
        }
    }

    @Test func masterHeldElsewhere() throws {
        let fake = FakeDRMDevice()
        fake.masterHeldElsewhere = true
        let dev = try DRMDevice.open(fake: fake)
        #expect(!dev.isMaster)
        let e = #expect(throws: DRMError.self) { try dev.acquireMaster() }
        #expect(e?.call == "drmSetMaster" && e?.errno == .resourceBusy)
    }

    @Test(arguments: BufferAllocator.allCases)
    func swapchainReleasesEverythingInDeinit(allocator: BufferAllocator) throws {
        let fake = FakeDRMDevice()
        do {
            let dev = try DRMDevice.open(fake: fake)
            let chain = try Swapchain(device: dev, width: 1024, height: 768, count: 3, allocator: allocator)
            #expect(fake.liveFramebuffers == 3)
            #expect(fake.liveMappings == 3)
            #expect(chain.buffers.allSatisfy { $0.stride >= 4096 && $0.allocator == allocator })
            // State machine: free -> queued -> on screen -> free.
            let a = try #require(chain.acquire())
            chain.markQueued(a)
            let b = try #require(chain.acquire())
            #expect(a != b)
            chain.markOnScreen(a)
            chain.markQueued(b)
            chain.markOnScreen(b)
            #expect(chain.states[a] == .free && chain.onScreen == b && chain.queuedCount == 0)
            // Shadow copy reaches the scanout memory.
            let shadow = ShadowBuffer(width: 1024, height: 768)
            shadow.fill(0x00FF_8000)
            shadow.copy(to: chain.buffers[a])
            let px = chain.buffers[a].pixels.load(fromByteOffset: chain.buffers[a].stride * 767 + 4 * 1023, as: UInt32.self)
            #expect(px == 0x00FF_8000)
        }
        #expect(fake.liveFramebuffers == 0)
        #expect(fake.liveMappings == 0)
        #expect(fake.liveDumbBuffers == 0)
        #expect(fake.liveGBMObjects == 0)
    }

    @Test func failedAllocationLeaksNothing() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        fake.inject(.noMemory, into: "drmModeAddFB2")
        let e = #expect(throws: DRMError.self) { try ScanoutBuffer(dumbOn: dev, width: 64, height: 64) }
        #expect(e?.call == "drmModeAddFB2")
        #expect(fake.liveDumbBuffers == 0 && fake.liveMappings == 0)
    }
}
