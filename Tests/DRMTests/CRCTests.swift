import SystemPackage
import Testing

@testable import DRM

/// The CRC line format, the debugfs paths and errors, and the fake's CRC of the latched buffer.
@Suite struct CRCTests {
    // MARK: Parsing (the kernel's format: drm_debugfs_crc.c, crtc_crc_read)

    @Test func parsesTheKernelsLines() {
        #expect(CRCLine(parsing: "0x0000002a 0xdeadbeef\n") == CRCLine(frame: 42, values: [0xdead_beef]))
        #expect(CRCLine(parsing: "0x0000002a 0xdeadbeef\n\0") == CRCLine(frame: 42, values: [0xdead_beef]))
        #expect(
            CRCLine(parsing: "0xffffffff 0x00000000 0x00000001 0x12345678")
                == CRCLine(frame: 0xffff_ffff, values: [0, 1, 0x1234_5678]))
        // No frame counter.
        #expect(CRCLine(parsing: "XXXXXXXXXX 0x0000beef\n") == CRCLine(frame: nil, values: [0xbeef]))
        // Ten CRC words is the kernel's maximum: 122 bytes with the newline and the NUL.
        let ten = "0x00000001" + String(repeating: " 0x00000002", count: 10) + "\n\0"
        #expect(ten.utf8.count == CRCLine.maximumLength)
        #expect(CRCLine(parsing: ten)?.values == Array(repeating: 2, count: 10))
    }

    @Test func refusesWhatIsNotALine() {
        #expect(CRCLine(parsing: "") == nil)
        #expect(CRCLine(parsing: "0x0000002a\n") == nil)  // no CRC word
        #expect(CRCLine(parsing: "0x2a 0xdeadbeef") == nil)  // not 8 digits
        #expect(CRCLine(parsing: "0x0000002a 0xdeadbeeg") == nil)  // not hex
        #expect(CRCLine(parsing: "0000002a00 0xdeadbeef") == nil)  // no 0x
        #expect(CRCLine(parsing: "0x00000001" + String(repeating: " 0x00000002", count: 11)) == nil)
    }

    @Test func printsAsTheKernelDoes() {
        let line = CRCLine(frame: 0x1f, values: [0xabc, 0])
        #expect(line.description == "0x0000001f 0x00000abc 0x00000000")
        #expect(CRCLine(parsing: line.description) == line)
        #expect(CRCLine(frame: nil, values: [1]).description == "XXXXXXXXXX 0x00000001")
    }

    // MARK: Paths and errors

    @Test func debugfsDirectoryIsTheCardsMinor() throws {
        let fake = FakeDRMDevice(path: "/dev/dri/card3")
        let dev = try DRMDevice.open(fake: fake)
        #expect(try dev.debugfsDirectory() == "/sys/kernel/debug/dri/3")
        #expect(try dev.debugfsDirectory(root: "/d") == "/d/dri/3")
    }

    @Test func noDebugfsAndNoPermissionAreNoAccess() throws {
        let fake = FakeDRMDevice()
        let (dev, _) = try Self.displaying(fake)
        fake.debugfsError = .permissionDenied
        #expect(throws: CRCError.noAccess(path: "/sys/kernel/debug/dri", errno: .permissionDenied)) {
            try CRCCapture(device: dev, crtcIndex: 0)
        }
        fake.debugfsError = .noSuchFileOrDirectory
        let e = #expect(throws: CRCError.self) { try CRCCapture(device: dev, crtcIndex: 0) }
        #expect(e == .noAccess(path: "/sys/kernel/debug/dri", errno: .noSuchFileOrDirectory))
        #expect(e?.description.hasPrefix("no debugfs: /sys/kernel/debug/dri does not exist") == true)
        fake.debugfsError = .permissionDenied
        let p = #expect(throws: CRCError.self) { try CRCCapture(device: dev, crtcIndex: 0) }
        #expect(
            p?.description
                == "no access to debugfs: /sys/kernel/debug/dri: Permission denied (EACCES): run as root (debugfs needs root or CAP_SYS_ADMIN)"
        )
    }

    @Test func aDriverWithoutCRCIsUnsupported() throws {
        let fake = FakeDRMDevice()
        fake.crcSources = []
        fake.driver.name = "bochs-drm"
        let (dev, _) = try Self.displaying(fake)
        let e = #expect(throws: CRCError.self) { try CRCCapture(device: dev, crtcIndex: 0) }
        #expect(e == .unsupported(driver: "bochs-drm", path: "/sys/kernel/debug/dri/0/crtc-0/crc"))
        #expect(e?.description == "not supported by bochs-drm (no /sys/kernel/debug/dri/0/crtc-0/crc)")
        // A CRTC index the card does not have is unsupported too.
        fake.crcSources = ["auto"]
        #expect(throws: CRCError.unsupported(driver: "bochs-drm", path: "/sys/kernel/debug/dri/0/crtc-1/crc")) {
            try CRCCapture(device: dev, crtcIndex: 1)
        }
    }

    @Test func callFailuresCarryErrnoAndPath() throws {
        let fake = FakeDRMDevice()
        let (dev, _) = try Self.displaying(fake)
        // A source the driver does not offer.
        #expect(
            throws: CRCError.failed(
                DRMError(
                    call: "write", object: "/sys/kernel/debug/dri/0/crtc-0/crc/control",
                    errno: .invalidArgument))
        ) {
            try CRCCapture(device: dev, crtcIndex: 0, source: "pipe")
        }
        // One capture at a time per CRTC.
        let first = try CRCCapture(device: dev, crtcIndex: 0)
        #expect(
            throws: CRCError.failed(
                DRMError(
                    call: "write", object: "/sys/kernel/debug/dri/0/crtc-0/crc/control",
                    errno: .resourceBusy))
        ) {
            try CRCCapture(device: dev, crtcIndex: 0)
        }
        _ = first
        // EACCES on the control file itself is no access, EINTR is retried.
        fake.inject(.interrupted, into: "open(crc/control)")
        fake.inject(.permissionDenied, into: "open(crc/control)")
        #expect(throws: CRCError.noAccess(path: "/sys/kernel/debug/dri/0/crtc-0/crc/control", errno: .permissionDenied))
        {
            try CRCCapture(device: dev, crtcIndex: 0)
        }
    }

    @Test func anInactiveCRTCRefusesTheCapture() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        #expect(
            throws: CRCError.failed(
                DRMError(call: "open", object: "/sys/kernel/debug/dri/0/crtc-0/crc/data", errno: .ioError))
        ) {
            try CRCCapture(device: dev, crtcIndex: 0)
        }
    }

    // MARK: The fake's CRC

    /// A device showing buffer 0 of a 2-buffer chain in 800x600 (60.3165 Hz), buffers filled
    /// with different colours.
    static func displaying(_ fake: FakeDRMDevice) throws -> (DRMDevice, Swapchain) {
        let dev = try DRMDevice.open(fake: fake)
        let mode = fake.connectors[0].modes[2]
        let chain = try Swapchain(
            device: dev, width: Int(mode.hdisplay), height: Int(mode.vdisplay), count: 2, allocator: .dumb)
        for (i, b) in chain.buffers.enumerated() {
            let px = b.pixels.assumingMemoryBound(to: UInt32.self)
            for k in 0..<(b.stride / 4 * b.height) { px[k] = 0x0010_2030 &* UInt32(i + 1) }
        }
        try dev.setCRTC(
            fake.crtcs[0].id, framebuffer: chain.buffers[0].framebuffer,
            connectors: [fake.connectors[0].id], mode: mode)
        return (dev, chain)
    }

    /// Waits (virtual time) until after vblank `seq` + the CRC latency and reads every line.
    static func read(
        _ cap: CRCCapture, _ dev: DRMDevice, _ fake: FakeDRMDevice, through seq: UInt64
    ) throws -> [CRCLine] {
        let period = Int64(fake.connectors[0].modes[2].refreshInterval.rounded())
        while try dev.crtcSequence(fake.crtcs[0].id).sequence < seq { fake.advance(by: period / 4) }
        fake.advance(by: fake.crcLatencyNs)
        var lines: [CRCLine] = []
        try cap.readAvailable(into: &lines)
        return lines
    }

    @Test func everyVBlankCarriesTheLatchedBuffersChecksum() throws {
        let fake = FakeDRMDevice()
        let (dev, chain) = try Self.displaying(fake)
        let crtc = fake.crtcs[0].id
        let a = fake.contentChecksum(of: chain.buffers[0].framebuffer)
        let b = fake.contentChecksum(of: chain.buffers[1].framebuffer)
        #expect(a != b)
        let start = try dev.crtcSequence(crtc).sequence
        let cap = try CRCCapture(device: dev, crtcIndex: 0)
        // Nothing before the first vblank after the capture opened: EAGAIN is no line.
        var none: [CRCLine] = []
        #expect(try cap.readAvailable(into: &none) == 0)
        let first = try Self.read(cap, dev, fake, through: start + 2)
        #expect(
            first == [CRCLine(frame: UInt32(start + 1), values: [a]), CRCLine(frame: UInt32(start + 2), values: [a])])
        // A flip latched at the next vblank: from it on, B's checksum.
        try dev.pageFlip(crtc, to: chain.buffers[1].framebuffer, userData: 7)
        let flipSeq = start + 3
        let after = try Self.read(cap, dev, fake, through: start + 5)
        #expect(after.map(\.frame) == [start + 3, start + 4, start + 5].map { UInt32($0) })
        #expect(after.map(\.values) == [[b], [b], [b]])
        let events = try dev.readEvents(until: fake.clock)
        #expect(events.first { $0.kind == .flipComplete }?.sequence == flipSeq)
        #expect(cap.linesRead == 5)
    }

    @Test func aReadBufferShorterThanALineIsEINVAL() throws {
        let fake = FakeDRMDevice()
        let (dev, _) = try Self.displaying(fake)
        let cap = try CRCCapture(device: dev, crtcIndex: 0)
        fake.advance(by: 40_000_000)
        let fd = cap.fileDescriptor
        var small = [UInt8](repeating: 0, count: 64)
        #expect(throws: Errno.invalidArgument) {
            try small.withUnsafeMutableBytes { try fake.readFile(fd, into: $0) }
        }
    }

    @Test func skippedLinesAndCatchUpRepeats() throws {
        let fake = FakeDRMDevice()
        let (dev, chain) = try Self.displaying(fake)
        let crtc = fake.crtcs[0].id
        let a = fake.contentChecksum(of: chain.buffers[0].framebuffer)
        let b = fake.contentChecksum(of: chain.buffers[1].framebuffer)
        let s = try dev.crtcSequence(crtc).sequence
        fake.crcSkippedFrames = [s + 2]
        // The worker falls behind from s+3 to s+5; the flip latches B at s+4.
        fake.crcCatchUps = [(s + 3)...(s + 5)]
        let cap = try CRCCapture(device: dev, crtcIndex: 0)
        _ = try Self.read(cap, dev, fake, through: s + 1)
        fake.advance(by: 1_000_000)
        #expect(try dev.crtcSequence(crtc).sequence == s + 1)
        let lines1 = try Self.read(cap, dev, fake, through: s + 3)
        // s+2 is missing; s+3 waits for the worker.
        #expect(lines1.isEmpty)
        try dev.pageFlip(crtc, to: chain.buffers[1].framebuffer, userData: 1)
        let lines2 = try Self.read(cap, dev, fake, through: s + 6)
        // Catch-up: s+3 (A on screen) repeats s+5's content, B.
        #expect(
            lines2 == [
                CRCLine(frame: UInt32(s + 3), values: [b]), CRCLine(frame: UInt32(s + 4), values: [b]),
                CRCLine(frame: UInt32(s + 5), values: [b]), CRCLine(frame: UInt32(s + 6), values: [b])
            ])
        _ = a
    }

    @Test func aStaleFlipKeepsTheContentOnScreen() throws {
        let fake = FakeDRMDevice()
        let (dev, chain) = try Self.displaying(fake)
        let crtc = fake.crtcs[0].id
        let a = fake.contentChecksum(of: chain.buffers[0].framebuffer)
        let b = fake.contentChecksum(of: chain.buffers[1].framebuffer)
        fake.staleFlips = [2]
        let s = try dev.crtcSequence(crtc).sequence
        let cap = try CRCCapture(device: dev, crtcIndex: 0)
        try dev.pageFlip(crtc, to: chain.buffers[1].framebuffer, userData: 1)  // flip 1: B at s+1
        _ = try Self.read(cap, dev, fake, through: s + 1)
        _ = try dev.readEvents(until: fake.clock)
        try dev.pageFlip(crtc, to: chain.buffers[0].framebuffer, userData: 2)  // flip 2 (stale): B stays
        let lines = try Self.read(cap, dev, fake, through: s + 3)
        _ = try dev.readEvents(until: fake.clock)
        // Drawing into B afterwards does not change what the stale flip shows.
        let px = chain.buffers[1].pixels.assumingMemoryBound(to: UInt32.self)
        px[0] = 0x00ff_ffff
        let later = try Self.read(cap, dev, fake, through: s + 4)
        #expect(lines.map(\.values) == [[b], [b]])
        #expect(later.map(\.values) == [[b]])
        #expect(fake.presented.count == 2)
        _ = a
    }

    @Test func theRingOverflowsAt128Lines() throws {
        let fake = FakeDRMDevice()
        let (dev, _) = try Self.displaying(fake)
        let cap = try CRCCapture(device: dev, crtcIndex: 0)
        let s = try dev.crtcSequence(fake.crtcs[0].id).sequence
        let lines = try Self.read(cap, dev, fake, through: s + 200)
        #expect(lines.count == 128)
        #expect(lines.first?.frame == UInt32(s + 1) && lines.last?.frame == UInt32(s + 128))
    }

    @Test func closingTheCaptureStopsIt() throws {
        let fake = FakeDRMDevice()
        let (dev, _) = try Self.displaying(fake)
        var cap: CRCCapture? = try CRCCapture(device: dev, crtcIndex: 0)
        fake.advance(by: 50_000_000)
        _ = try dev.crtcSequence(fake.crtcs[0].id)
        #expect(fake.pendingCRCLines() == 3)
        cap = nil
        #expect(fake.pendingCRCLines() == 0)
        #expect(fake.calls.last == "close(debugfs)")
        _ = cap
        // And a new capture may start.
        _ = try CRCCapture(device: dev, crtcIndex: 0)
    }
}
