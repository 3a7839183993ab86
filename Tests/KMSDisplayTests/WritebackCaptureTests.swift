import CadenceCore
import DRM
import Testing

@testable import KMSDisplay

/// Writeback capture on the fake DRM device (virtual time): the chosen frames' flips carry
/// WRITEBACK_FB_ID, each capture is delivered with the frame's own render once its fence
/// signals, and the faults show as captures that differ.
@Suite struct WritebackCaptureTests {
    static func device(writeback: Bool = true) -> FakeDRMDevice {
        let fake = ScanoutTests.device()
        if writeback {
            // Virtual-1's encoder (34) and the writeback one clone each other (as vkms2 in tools/vm).
            fake.encoders[0].possibleClones = 0x3
            fake.encoders.append(Encoder(id: EncoderID(41), type: 5, possibleCRTCs: 1, possibleClones: 0x3))
            fake.writebackConnectors = [FakeWritebackConnector(id: ConnectorID(40), encoders: [EncoderID(41)])]
        }
        return fake
    }

    /// Runs `frames` frames capturing those `chosen` says; each frame fills the picture with
    /// a colour of its index.
    static func run(
        _ fake: FakeDRMDevice, frames: Int = 300, injectLate: [Int: Int] = [:], chosen: @escaping (Int) -> Bool
    ) throws -> (captures: [WritebackCapture], stats: WritebackStatistics, summary: RunSummary) {
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        var next: Int?
        var captures: [WritebackCapture] = []
        try display.startWriteback(
            request: {
                defer { next = nil }
                return next
            }, deliver: { captures.append($0) })
        #expect(display.isCapturingWriteback)
        var c = RunConfiguration()
        c.frames = frames
        c.injectLate = injectLate
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c) { surface, ctx in
            next = chosen(ctx.frameIndex) ? ctx.frameIndex : nil
            surface.fill(0x0001_0203 &* UInt32(ctx.frameIndex + 1))
        }
        let s = try run.run()
        let stats = try #require(display.finishWriteback())
        #expect(!display.isCapturingWriteback && display.finishWriteback() == nil)
        try display.close()
        return (captures, stats, s)
    }

    /// Encoders that cannot clone (each only itself, as stock vkms on 6.1): refused in one line
    /// from the encoders' `possible_clones`, before any attach commit.
    @Test func encodersThatCannotCloneAreRefusedBeforeTheAttach() throws {
        let fake = Self.device()
        fake.encoders[0].possibleClones = 0
        fake.encoders[1].possibleClones = 0
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        let commits = fake.calls.filter { $0.hasPrefix("drmModeAtomicCommit") }.count
        do {
            try display.startWriteback(request: { nil }, deliver: { _ in })
            Issue.record("writeback started on encoders that cannot clone")
        } catch {
            #expect(
                error.description
                    == "Writeback-1 cannot share a CRTC with Virtual-1: their encoders do not clone each other (possible_clones: Virtual-1's 0x1, Writeback-1's 0x2; both need 0x3)"
            )
        }
        #expect(fake.calls.filter { $0.hasPrefix("drmModeAtomicCommit") }.count == commits)
        #expect(!display.isCapturingWriteback)
        try display.close()
    }

    @Test func everyChosenFrameIsCapturedAsRendered() throws {
        let fake = Self.device()
        let r = try Self.run(fake, injectLate: [100: 1, 175: 2], chosen: { $0 % 25 == 0 })
        #expect(r.summary.droppedRefreshes == 3)
        #expect(r.captures.map(\.label) == Array(stride(from: 0, to: 300, by: 25)))
        #expect(r.stats.captures == 12 && r.stats.skipped == 0 && r.stats.timedOut == 0)
        for c in r.captures {
            #expect(c.width == 160 && c.height == 120 && c.captured.count == 160 * 120)
            #expect(c.captured == c.rendered, "frame \(c.label)")
            #expect(c.rendered.first == 0x0001_0203 &* UInt32(c.label + 1))
        }
        // One job per capture, each at its flip's vblank; the connector is detached at the end.
        #expect(fake.writebackCompletions.count == 12 && fake.openWritebackFences == 0)
        let dev = try DRMDevice.open(fake: fake)
        try dev.enableWriteback()
        #expect(try dev.writebackConnectors().first?.crtc == CRTCID(0))
    }

    @Test func aDroppedJobOrAStaleFlipIsACaptureThatDiffers() throws {
        let fake = Self.device()
        // Jobs count from 1: the 2nd capture's job writes nothing; the 100th flip is stale.
        fake.writebackDroppedJobs = [2]
        fake.staleFlips = [101]
        let r = try Self.run(fake, chosen: { $0 == 50 || $0 == 75 || $0 == 100 })
        #expect(r.captures.map(\.label) == [50, 75, 100])
        #expect(r.captures[0].captured == r.captures[0].rendered)
        // Dropped: the capture buffer keeps what it held (frame 50's capture: the buffers are reused), not frame 75.
        #expect(r.captures[1].captured != r.captures[1].rendered && r.captures[1].captured == r.captures[0].rendered)
        // Stale: the screen kept frame 99's content.
        #expect(
            r.captures[2].captured.first == 0x0001_0203 &* 100 && r.captures[2].rendered.first == 0x0001_0203 &* 101)
    }

    @Test func consecutiveFramesShareTwoCaptureBuffers() throws {
        let r = try Self.run(Self.device(), frames: 60, chosen: { (10..<20).contains($0) })
        // A capture is read back at the next flip event: two buffers keep up with every frame.
        #expect(r.stats.captures + r.stats.skipped == 10)
        #expect(r.captures.allSatisfy { $0.captured == $0.rendered })
        #expect(r.stats.captures >= 5)
    }

    @Test func aDriverWithoutWritebackIsRefusedInOneLine() throws {
        let fake = Self.device(writeback: false)
        fake.driver.name = "bochs-drm"
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        let e = #expect(throws: WritebackUnavailable.self) {
            try display.startWriteback(request: { nil }, deliver: { _ in })
        }
        #expect(e == .noConnector(driver: "bochs-drm"))
        #expect(e?.description == "bochs-drm has no writeback connector")
        #expect(!display.isCapturingWriteback)
        try display.close()
    }
}
