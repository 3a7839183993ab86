import SystemPackage
import Testing

@testable import DRM

/// Writeback connectors: the client cap, discovery, the kernel's checks on a commit, and the
/// fake's job that copies the latched buffer at the vblank after the commit and signals its
/// out fence; and the CRC sources a CRTC's control file lists.
@Suite struct WritebackTests {
    /// A vkms-shaped fake with Writeback-1 (id 40, encoder 41) on CRTC index 0, its encoder and
    /// Virtual-1's (34) cloning each other (as the tools/vm guest's vkms2).
    static func vkms(formats: [PixelFormat] = [.xrgb8888]) -> FakeDRMDevice {
        let fake = FakeDRMDevice()
        fake.encoders[0].possibleClones = 0x3
        fake.encoders.append(Encoder(id: EncoderID(41), type: 5, possibleCRTCs: 1, possibleClones: 0x3))
        fake.writebackConnectors = [
            FakeWritebackConnector(id: ConnectorID(40), encoders: [EncoderID(41)], formats: formats)
        ]
        return fake
    }

    /// The fake showing mode 800x600 from a 3-buffer chain (each buffer filled with its own
    /// colour), a capture buffer of the same size, and the writeback connector found.
    static func displaying(
        _ fake: FakeDRMDevice
    ) throws -> (DRMDevice, Swapchain, ScanoutBuffer, WritebackConnector, PlaneProperties) {
        let dev = try DRMDevice.open(fake: fake)
        try dev.enableWriteback()
        let mode = fake.connectors[0].modes[2]
        let chain = try Swapchain(
            device: dev, width: Int(mode.hdisplay), height: Int(mode.vdisplay), count: 3, allocator: .dumb)
        for (i, b) in chain.buffers.enumerated() {
            let px = b.pixels.assumingMemoryBound(to: UInt32.self)
            for k in 0..<(b.stride / 4 * b.height) { px[k] = 0x0010_2030 &* UInt32(i + 1) &+ UInt32(k % 7) }
        }
        try dev.setCRTC(
            fake.crtcs[0].id, framebuffer: chain.buffers[0].framebuffer, connectors: [fake.connectors[0].id], mode: mode
        )
        let capture = try ScanoutBuffer(dumbOn: dev, width: Int(mode.hdisplay), height: Int(mode.vdisplay))
        let wb = try #require(try dev.writebackConnectors().first)
        return (dev, chain, capture, wb, try dev.planeProperties(PlaneID(31)))
    }

    /// An atomic flip to `fb` on CRTC 33, capturing into `capture` when given.
    static func flip(
        _ dev: DRMDevice, _ plane: PlaneProperties, to fb: FramebufferID,
        capture: (WritebackConnector, FramebufferID, WritebackFenceSlot)?
    ) throws {
        var props = plane.fullScreen(PlaneID(31), framebuffer: fb, crtc: CRTCID(33), width: 800, height: 600)
        if let (wb, target, slot) = capture { props += wb.capture(into: target, fence: slot) }
        try dev.atomicCommit(props, flags: [.pageFlipEvent, .nonblock])
    }

    static func pixelsEqual(_ a: ScanoutBuffer, _ b: ScanoutBuffer) -> Bool {
        for y in 0..<a.height {
            let ra = UnsafeRawBufferPointer(start: a.pixels + y * a.stride, count: a.width * 4)
            let rb = UnsafeRawBufferPointer(start: b.pixels + y * b.stride, count: a.width * 4)
            if !ra.elementsEqual(rb) { return false }
        }
        return true
    }

    @Test func hiddenWithoutTheCapWhichNeedsAtomic() throws {
        let fake = Self.vkms()
        let dev = try DRMDevice.open(fake: fake)
        #expect(try dev.resources().connectors == [ConnectorID(35)])
        #expect(try dev.writebackConnectors().isEmpty)
        #expect(throws: DRMError(call: "drmSetClientCap", object: "CLIENT_CAP_5", errno: .invalidArgument)) {
            try dev.enable(.writebackConnectors)
        }
        try dev.enableWriteback()
        #expect(try dev.resources().connectors == [ConnectorID(35), ConnectorID(40)])
        let wb = try #require(try dev.writebackConnectors().first)
        #expect(wb.name == "Writeback-1" && wb.id == ConnectorID(40) && wb.crtc == CRTCID(0))
        #expect(
            wb.formats == [.xrgb8888] && wb.possibleCRTCs == 1 && wb.canWrite(crtcIndex: 0)
                && !wb.canWrite(crtcIndex: 1))
        #expect(try dev.connector(ConnectorID(40)).name == "Writeback-1")
        // Another file that did not ask still sees none.
        let other = try DRMDevice.open(fake: fake)
        #expect(try other.writebackConnectors().isEmpty)
        // A driver with none lists none.
        let plain = try DRMDevice.open(fake: FakeDRMDevice())
        try plain.enableWriteback()
        #expect(try plain.writebackConnectors().isEmpty)
    }

    /// Encoders report `possible_clones` as the kernel does (their own bit always set); the
    /// writeback connector names its encoder; ``DRMDevice/cloning(_:)`` tells whether two may
    /// share a CRTC.
    @Test func encodersReportTheirClones() throws {
        let dev = try DRMDevice.open(fake: Self.vkms())
        try dev.enableWriteback()
        #expect(try dev.encoder(EncoderID(34)).possibleClones == 0x3)
        #expect(try dev.encoder(EncoderID(41)).possibleClones == 0x3)
        #expect(try dev.writebackConnectors().first?.encoders == [EncoderID(41)])
        let both = try dev.cloning([EncoderID(34), EncoderID(41)])
        #expect(both.allowed && both.mask == 0x3 && both.possibleClones == [0x3, 0x3])
        // A driver's 0 is "only itself" (drm_mode_config_validate), as stock vkms on 6.1.
        let stock = FakeDRMDevice()
        stock.encoders.append(Encoder(id: EncoderID(41), type: 5, possibleCRTCs: 1))
        let plain = try DRMDevice.open(fake: stock)
        #expect(try plain.encoder(EncoderID(34)).possibleClones == 0x1)
        #expect(try plain.encoder(EncoderID(41)).possibleClones == 0x2)
        let apart = try plain.cloning([EncoderID(34), EncoderID(41)])
        #expect(!apart.allowed && apart.mask == 0x3 && apart.possibleClones == [0x1, 0x2])
        #expect(try plain.cloning([EncoderID(41)]).allowed)
        // One way only is not enough: each must list the other.
        stock.encoders[0].possibleClones = 0x3
        #expect(try !plain.cloning([EncoderID(34), EncoderID(41)]).allowed)
    }

    /// The kernel's clone check at the attach: writeback encoders that cannot clone the display's
    /// are refused (EINVAL, "failed valid clone check for mask 0x3" on 6.1's vkms); on a CRTC
    /// that drives no connector the writeback alone is fine.
    @Test func theCloneCheckRefusesTheAttach() throws {
        let fake = Self.vkms()
        fake.encoders[0].possibleClones = 0
        fake.encoders[1].possibleClones = 0
        let (dev, _, _, wb, _) = try Self.displaying(fake)
        #expect(throws: DRMError(call: "drmModeAtomicCommit", object: nil, errno: .invalidArgument)) {
            try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: .allowModeset)
        }
        #expect(try dev.writebackConnectors().first?.crtc == CRTCID(0))
        let alone = Self.vkms()
        alone.encoders[0].possibleClones = 0
        alone.encoders[1].possibleClones = 0
        let d = try DRMDevice.open(fake: alone)
        try d.enableWriteback()
        let w = try #require(try d.writebackConnectors().first)
        alone.preset(mode: alone.connectors[0].modes[2], connectors: [])
        try d.atomicCommit([w.attach(to: CRTCID(33))], flags: .allowModeset)
        #expect(try d.writebackConnectors().first?.crtc == CRTCID(33))
    }

    @Test func theKernelsChecksOnACommit() throws {
        let fake = Self.vkms()
        let (dev, chain, capture, wb, plane) = try Self.displaying(fake)
        let slot = WritebackFenceSlot()
        // An FB before the connector is attached to a CRTC.
        #expect(throws: DRMError.self) {
            try Self.flip(dev, plane, to: chain.buffers[1].framebuffer, capture: (wb, capture.framebuffer, slot))
        }
        // Attaching changes the CRTC's connectors: only with ALLOW_MODESET.
        #expect(throws: DRMError(call: "drmModeAtomicCommit", object: nil, errno: .invalidArgument)) {
            try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: [])
        }
        try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: .allowModeset)
        #expect(try dev.writebackConnectors().first?.crtc == CRTCID(33))
        // A fence pointer without an FB.
        #expect(throws: DRMError.self) {
            try dev.atomicCommit(
                [AtomicProperty(object: wb.id.rawValue, property: wb.properties.outFencePointer, value: slot.address)],
                flags: [])
        }
        // A capture buffer of another size than the mode.
        let small = try ScanoutBuffer(dumbOn: dev, width: 640, height: 480)
        #expect(throws: DRMError.self) {
            try Self.flip(dev, plane, to: chain.buffers[1].framebuffer, capture: (wb, small.framebuffer, slot))
        }
        // A format the connector does not write.
        let fake2 = Self.vkms(formats: [PixelFormat(rawValue: PixelFormat.fourcc("RG16"))])
        let (dev2, chain2, capture2, wb2, plane2) = try Self.displaying(fake2)
        try dev2.atomicCommit([wb2.attach(to: CRTCID(33))], flags: .allowModeset)
        #expect(throws: DRMError.self) {
            try Self.flip(dev2, plane2, to: chain2.buffers[1].framebuffer, capture: (wb2, capture2.framebuffer, slot))
        }
        #expect(
            fake.writebackCompletions.isEmpty && fake2.writebackCompletions.isEmpty && fake.openWritebackFences == 0)
    }

    @Test func aCaptureIsTheLatchedBufferWrittenAtTheVBlankAfterTheCommit() throws {
        let fake = Self.vkms()
        let (dev, chain, capture, wb, plane) = try Self.displaying(fake)
        try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: .allowModeset)
        let slot = WritebackFenceSlot()
        let before = try dev.crtcSequence(CRTCID(33))
        try Self.flip(dev, plane, to: chain.buffers[1].framebuffer, capture: (wb, capture.framebuffer, slot))
        let fence = try #require(slot.take(device: dev))
        #expect(slot.take(device: dev) == nil)
        // Not written before the vblank: the capture buffer is still zero.
        #expect(try !fence.wait())
        #expect(capture.pixels.load(as: UInt32.self) == 0)
        // The flip event and the fence: the fence signals the writeback latency after the vblank.
        let events = try dev.readEvents(until: dev.monotonicNow() + 100_000_000)
        let flip = try #require(events.first { $0.kind == .flipComplete })
        #expect(flip.sequence == before.sequence + 1)
        let t0 = dev.monotonicNow()
        #expect(try fence.wait(timeoutNs: 50_000_000))
        #expect(dev.monotonicNow() - t0 <= fake.writebackLatencyNs)
        #expect(Self.pixelsEqual(capture, chain.buffers[1]) && !Self.pixelsEqual(capture, chain.buffers[0]))
        #expect(
            fake.writebackCompletions == [
                .init(
                    connector: wb.id, crtc: CRTCID(33), framebuffer: capture.framebuffer, sequence: flip.sequence,
                    written: true)
            ])
        // A flip without WRITEBACK_FB_ID writes nothing.
        try Self.flip(dev, plane, to: chain.buffers[2].framebuffer, capture: nil)
        _ = try dev.readEvents(until: dev.monotonicNow() + 100_000_000)
        #expect(fake.writebackCompletions.count == 1 && Self.pixelsEqual(capture, chain.buffers[1]))
        #expect(fake.openWritebackFences == 1)
        _ = fence
    }

    @Test func fencesCloseWithTheirOwner() throws {
        let fake = Self.vkms()
        let (dev, chain, capture, wb, plane) = try Self.displaying(fake)
        try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: .allowModeset)
        let slot = WritebackFenceSlot()
        do {
            try Self.flip(dev, plane, to: chain.buffers[1].framebuffer, capture: (wb, capture.framebuffer, slot))
            let fence = try #require(slot.take(device: dev))
            #expect(fake.openWritebackFences == 1 && fence.fileDescriptor >= 0)
        }
        #expect(fake.openWritebackFences == 0)
    }

    @Test func aStaleFlipIsCapturedWithThePreviousContentAndADroppedJobWritesNothing() throws {
        let fake = Self.vkms()
        fake.staleFlips = [2]
        fake.writebackDroppedJobs = [3]
        let (dev, chain, capture, wb, plane) = try Self.displaying(fake)
        try dev.atomicCommit([wb.attach(to: CRTCID(33))], flags: .allowModeset)
        let slot = WritebackFenceSlot()
        let captures = (0..<3).map { _ in try! ScanoutBuffer(dumbOn: dev, width: 800, height: 600) }
        for (i, target) in [1, 2, 0].enumerated() {
            try Self.flip(
                dev, plane, to: chain.buffers[target].framebuffer, capture: (wb, captures[i].framebuffer, slot))
            let fence = try #require(slot.take(device: dev))
            _ = try dev.readEvents(until: dev.monotonicNow() + 100_000_000)
            #expect(try fence.wait(timeoutNs: 50_000_000))
        }
        // Flip 1: buffer 1. Flip 2 (stale): buffer 2 latched with buffer 1's content still shown.
        #expect(Self.pixelsEqual(captures[0], chain.buffers[1]))
        #expect(Self.pixelsEqual(captures[1], chain.buffers[1]) && !Self.pixelsEqual(captures[1], chain.buffers[2]))
        // Job 3 dropped: its fence signalled, the buffer holds what it held (zeros).
        #expect(captures[2].pixels.load(as: UInt32.self) == 0)
        #expect(fake.writebackCompletions.map(\.written) == [true, true, false])
        _ = capture
    }

    @Test func crcSourcesComeFromTheControlFile() throws {
        let fake = FakeDRMDevice()
        fake.crcSources = ["auto", "plane1"]
        let (dev, _) = try CRCTests.displaying(fake)
        #expect(try dev.crcSources(crtcIndex: 0) == ["auto", "plane1"])
        // The selected source is marked in the file; the list is the same.
        let cap = try CRCCapture(device: dev, crtcIndex: 0, source: "plane1")
        #expect(try dev.crcSources(crtcIndex: 0) == ["auto", "plane1"])
        _ = cap
        fake.crcSources = []
        fake.driver.name = "bochs-drm"
        #expect(throws: CRCError.unsupported(driver: "bochs-drm", path: "/sys/kernel/debug/dri/0/crtc-0/crc")) {
            try dev.crcSources(crtcIndex: 0)
        }
        fake.debugfsError = .permissionDenied
        #expect(throws: CRCError.noAccess(path: "/sys/kernel/debug/dri", errno: .permissionDenied)) {
            try dev.crcSources(crtcIndex: 0)
        }
    }

    /// A drm_info writeback connector (type 18) becomes the fake's writeback connector with the
    /// formats of its WRITEBACK_PIXEL_FORMATS data; `cadence.writebackFormats` replaces them.
    @Test func profilesGiveWritebackConnectorsAndTheirFormats() throws {
        typealias J = FakeDRMProfile.JSON
        let wb: J = .object([
            "id": .integer(11), "type": .integer(18), "status": .integer(3), "encoders": .array([.integer(21)]),
            "properties": .object([
                "WRITEBACK_PIXEL_FORMATS": .object(["data": .array([.integer(875_713_112), .integer(909_199_186)])])
            ])
        ])
        let withWB = { (dev: inout [String: J]) in
            dev["connectors"] = .array((dev["connectors"]?.array ?? []) + [wb])
            dev["encoders"] = .array(
                (dev["encoders"]?.array ?? []) + [.object(["id": .integer(21), "possible_crtcs": .integer(1)])])
        }
        func device(_ cadence: [String: J]?) throws -> FakeDRMDevice {
            try FakeDRMProfile(json: FakeDRMProfileTests.card(cadence: cadence, withWB)).makeDevice(
                wallClock: false, seed: 0)
        }
        let fake = try device(nil)
        #expect(fake.connectors.map(\.id) == [ConnectorID(10)])
        #expect(fake.writebackConnectors.map(\.id) == [ConnectorID(11)])
        #expect(fake.writebackConnectors.first?.formats.map(\.description) == ["XR24", "RG16"])
        #expect(
            try device(["writebackFormats": .array([.string("XR24")])]).writebackConnectors.first?.formats == [
                .xrgb8888
            ])
        #expect(try device(["writebackFormats": .array([])]).writebackConnectors.isEmpty)
        let plain = try FakeDRMProfile(json: FakeDRMProfileTests.card()).makeDevice(wallClock: false, seed: 0)
        #expect(plain.writebackConnectors.isEmpty)
        let e = #expect(throws: FakeDRMProfileError.self) {
            try device(["writebackFormats": .array([.string("XRGB8888")])])
        }
        #expect(e?.message == "/dev/dri/card1: cadence.writebackFormats must be an array of fourcc strings (\"XR24\")")
    }
}
