import CadenceCore
import DRM
import Testing

@testable import KMSDisplay

/// Scanout verification by the CRTC's CRC on the fake DRM device: every rule on virtual time.
/// Frames are 160x120 at exactly 60 Hz; each frame writes its index into its first pixel (a
/// frame identity: consecutive frames always differ).
@Suite struct ScanoutTests {
    static func device() -> FakeDRMDevice {
        let fake = FakeDRMDevice()
        // 200 × 125 total at 1 500 kHz: exactly 60 Hz.
        fake.connectors[0].modes.append(
            ModeInfo(
                clock: 1_500, hdisplay: 160, hsyncStart: 168, hsyncEnd: 184, htotal: 200,
                vdisplay: 120, vsyncStart: 121, vsyncEnd: 123, vtotal: 125,
                flags: [.nhsync, .nvsync], type: [.driver]))
        return fake
    }

    struct Outcome {
        var summary: RunSummary
        var scanout: ScanoutSummary
        var reports: [FrameReport]
    }

    /// Runs `frames` frames with the verification on; `draw` picks the index drawn for a frame
    /// (default: its own); `onFrame` sees each completed frame with the display.
    static func run(
        _ fake: FakeDRMDevice = device(), frames: Int = 600, injectLate: [Int: Int] = [:],
        rate: FrameRateRange = .default, draw: @escaping (Int) -> Int = { $0 },
        onFrame: ((FrameReport, KMSDisplay) -> Void)? = nil
    ) throws -> Outcome {
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        try display.verifyScanout()
        #expect(display.isVerifyingScanout)
        var c = RunConfiguration()
        c.frames = frames
        c.injectLate = injectLate
        c.range = rate
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c) { surface, ctx in
            surface.fill(0x0020_4060)
            surface.base.storeBytes(of: UInt32(truncatingIfNeeded: draw(ctx.frameIndex)), as: UInt32.self)
        }
        var reports: [FrameReport] = []
        run.onFrame = { r in
            reports.append(r)
            onFrame?(r, display)
        }
        let s = try run.run()
        let v = try #require(display.finishScanoutVerification())
        #expect(!display.isVerifyingScanout)
        try display.close()
        return Outcome(summary: s, scanout: v, reports: reports)
    }

    @Test func everyFrameChangesAtItsFlipAndTheRepeatsAreTheDrops() throws {
        let o = try Self.run(injectLate: [100: 1, 250: 3])
        let v = o.scanout
        #expect(o.summary.droppedRefreshes == 4 && o.summary.dropEvents == 2)
        #expect(v.frames == 600 && v.mismatches == 0 && v.missingLines == 0 && v.catchUpLines == 0)
        #expect(v.verified == 600 && v.inexact == 0, "\(v)")
        // Frame 99 stayed 2 refreshes, frame 249 stayed 4: the 4 dropped refreshes.
        #expect(v.repeatedRefreshes == o.summary.droppedRefreshes)
        #expect(v.source == "auto" && v.failure == nil && v.lines > 600)
    }

    @Test func aStaleFlipOnTheDeviceIsOneStaleFrame() throws {
        let fake = Self.device()
        // Frame 300 (id 301) is the next flip committed once frame 299 is shown (latency 1).
        let o = try Self.run(
            fake,
            onFrame: { r, _ in
                if r.frameIndex == 299 { fake.staleFlips = [fake.committedFlips + 1] }
            })
        #expect(o.summary.droppedRefreshes == 0 && o.summary.presented == 600)
        #expect(o.scanout.stale == 1 && o.scanout.staleFrames == [301] && o.scanout.mismatches == 1)
        #expect(o.scanout.changesWithoutFlip == 0 && o.scanout.verified == 599)
    }

    @Test func aFrameDrawnWithThePreviousContentIsStale() throws {
        let o = try Self.run(frames: 400, draw: { $0 == 300 ? 299 : $0 })
        #expect(o.summary.droppedRefreshes == 0)
        #expect(o.scanout.stale == 1 && o.scanout.staleFrames == [301] && o.scanout.mismatches == 1)
        #expect(o.reports.first { $0.id == 301 }?.frameIndex == 300)
    }

    /// The vblank counter (the flips' sequences and the CRC lines' 32-bit frames) wraps
    /// (0xFFFF_FFFF → 0) at frame 300 (the stale one), just before and after it, at the start and
    /// near the end: the verdicts are those far from the wrap, with the late frames and the stale
    /// one found where they are.
    @Test func verdictsSurviveThe32BitWrap() throws {
        func outcome(counterAt start: UInt64?) throws -> ScanoutSummary {
            let fake = Self.device()
            if let start { fake.setVBlankCounter(to: start) }
            var v = try Self.run(fake, frames: 400, injectLate: [100: 1, 250: 3], draw: { $0 == 300 ? 299 : $0 })
                .scanout
            // The frozen stretch names vblanks (moved with the counter); the cost of reading is not a verdict.
            let frozen = try #require(v.longestFrozen)
            #expect(frozen.flips == 1 && frozen.refreshes == 1)
            v.longestFrozen = nil
            v.readMicroseconds = nil
            return v
        }
        let far = try outcome(counterAt: nil)
        #expect(far.stale == 1 && far.staleFrames == [301] && far.repeatedRefreshes == 5 && far.verified == 399)
        for before in [UInt64(300), 301, 299, 2, 0, 395] {
            let near = try outcome(counterAt: (1 << 32) - before)
            #expect(near == far, "counter from 2³² − \(before)")
        }
    }

    @Test func aSkippedLineIsInexactNotAMismatch() throws {
        let fake = Self.device()
        // Where the vblank counter will be near frame 200 (the counter starts at the modeset).
        fake.crcSkippedFrames = [205]
        let o = try Self.run(fake, frames: 400)
        #expect(o.scanout.missingLines == 1 && o.scanout.mismatches == 0)
        // The flip at 205 and the one after it (judged against the missing line) are inexact.
        #expect(o.scanout.inexact == 2 && o.scanout.verified == 398)
        #expect(o.summary.droppedRefreshes == 0)
    }

    @Test func catchUpRepeatsAreInexactNeverDrops() throws {
        let fake = Self.device()
        fake.crcCatchUps = [300...303]
        let o = try Self.run(fake, frames: 400)
        #expect(o.scanout.catchUpLines == 3 && o.scanout.mismatches == 0, "\(o.scanout)")
        #expect(o.scanout.inexact == 4 && o.scanout.verified == 396)
        #expect(o.summary.droppedRefreshes == 0 && o.scanout.repeatedRefreshes == 0)
    }

    @Test func contentDrawnOnScreenIsAChangeWithoutAFlip() throws {
        // 30 fps on 60 Hz: every other vblank has no flip; frame 100's buffer is scribbled
        // on while it is shown, so the vblank after its flip changes without one.
        var flipOf100: UInt64 = 0
        let o = try Self.run(
            frames: 200, rate: FrameRateRange(minimum: 30, maximum: 30, preferred: 30),
            onFrame: { r, display in
                guard r.frameIndex == 100, let i = display.swapchain.states.firstIndex(of: .onScreen) else { return }
                flipOf100 = r.sequence
                display.swapchain.buffers[i].pixels.storeBytes(of: 0x00ff_ffff, toByteOffset: 4, as: UInt32.self)
            })
        #expect(o.scanout.changesWithoutFlip == 1 && o.scanout.changeWithoutFlipVBlanks == [flipOf100 + 1])
        #expect(o.scanout.stale == 0 && o.scanout.mismatches == 1)
        // Every frame stayed 2 refreshes: one beyond one each.
        #expect(o.summary.droppedRefreshes == 0)
    }

    @Test func unsupportedAndNoAccessAreRefused() throws {
        let fake = Self.device()
        fake.crcSources = []
        fake.driver.name = "virtio_gpu"
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        #expect(throws: CRCError.unsupported(driver: "virtio_gpu", path: "/sys/kernel/debug/dri/0/crtc-0/crc")) {
            try display.verifyScanout()
        }
        fake.crcSources = ["auto"]
        fake.debugfsError = .permissionDenied
        #expect(throws: CRCError.noAccess(path: "/sys/kernel/debug/dri", errno: .permissionDenied)) {
            try display.verifyScanout()
        }
        #expect(!display.isVerifyingScanout && display.finishScanoutVerification() == nil)
    }
}
