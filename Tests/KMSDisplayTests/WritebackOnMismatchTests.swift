import CadenceCore
import DRM
import Testing

@testable import KMSDisplay

/// Writeback on a CRC mismatch on the fake DRM device (virtual time): every flip carries a job
/// into the ring, only the frames the CRC's early verdict flags are read, and a flag that comes
/// too late is counted, not hidden.
@Suite struct WritebackOnMismatchTests {
    struct Outcome {
        var captures: [WritebackCapture]
        var stats: WritebackStatistics
        var scanout: ScanoutSummary
        var summary: RunSummary
    }

    /// Runs `frames` frames (each filled with a colour of its index) capturing on a mismatch,
    /// with the CRC check started after the writeback, as a run does.
    static func run(_ fake: FakeDRMDevice, frames: Int = 200) throws -> Outcome {
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "160x120@60")
        var next: Int?
        var captures: [WritebackCapture] = []
        try display.startWriteback(
            onMismatch: true,
            request: {
                defer { next = nil }
                return next
            }, deliver: { captures.append($0) })
        try display.verifyScanout()
        var c = RunConfiguration()
        c.frames = frames
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c) { surface, ctx in
            next = ctx.frameIndex
            surface.fill(Self.colour(ctx.frameIndex))
        }
        let s = try run.run()
        let scanout = try #require(display.finishScanoutVerification())
        let stats = try #require(display.finishWriteback())
        try display.close()
        return Outcome(captures: captures, stats: stats, scanout: scanout, summary: s)
    }

    static func colour(_ index: Int) -> UInt32 { 0x0001_0203 &* UInt32(index + 1) }

    /// The 101st flip latches what is on screen (frame 100 stale): its buffer alone is read, and
    /// it shows frame 99; the 199 other jobs are recycled unread, the judged ones first. The
    /// capture comes with the render kept for its job: frame 100's own (Cadence drew it; the
    /// device kept frame 99's buffer), which it differs from, while it matches frame 99's.
    @Test func onlyTheStaleFrameIsRead() throws {
        let fake = WritebackCaptureTests.device()
        fake.staleFlips = [101]
        let r = try Self.run(fake)
        #expect(r.summary.droppedRefreshes == 0 && r.scanout.staleFrames.count == 1)
        #expect(r.captures.count == 1 && r.stats.captures == 1)
        let c = try #require(r.captures.first)
        #expect(c.label == 100 && c.reason == .stale && c.changeVBlank == nil)
        #expect(c.captured.count == 160 * 120 && c.captured.allSatisfy { $0 & 0x00ff_ffff == Self.colour(99) })
        #expect(c.rendered.count == 160 * 120 && c.rendered.allSatisfy { $0 & 0x00ff_ffff == Self.colour(100) })
        #expect(Self.colour(100) != Self.colour(99))
        let m = try #require(r.stats.onMismatch)
        #expect(m.ring == KMSDisplay.mismatchRing && m.jobs == 200 && m.withoutJob == 0)
        #expect(m.recycledUnread == 199 && m.recycledUnjudged == 0)
        #expect(r.stats.earlyStaleFlags == 1 && r.stats.skipped == 0 && r.stats.timedOut == 0)
        // One job per flip, each fence closed.
        #expect(fake.writebackCompletions.count == 200 && fake.openWritebackFences == 0)
    }

    /// Without a fault no buffer is read at all.
    @Test func nothingFlaggedNothingRead() throws {
        let fake = WritebackCaptureTests.device()
        let r = try Self.run(fake)
        #expect(r.scanout.mismatches == 0 && r.scanout.verified == 200)
        #expect(r.captures.isEmpty && r.stats.captures == 0 && r.stats.readMicroseconds == 0)
        #expect(r.stats.onMismatch?.jobs == 200 && r.stats.onMismatch?.recycledUnread == 200)
        #expect(r.stats.earlyStaleFlags == 0 && r.stats.skipped == 0)
    }

    /// CRC lines 10 refreshes late: the early verdict (2 vblanks open) cannot judge any frame,
    /// so nothing is flagged or read; the full verdict still finds the stale frame, which a run
    /// then counts as skipped (its stale frames less the early flags).
    @Test func linesTooLateForTheEarlyVerdictFlagNothing() throws {
        let fake = WritebackCaptureTests.device()
        fake.staleFlips = [101]
        fake.crcLatencyNs = 10 * 16_666_667
        let r = try Self.run(fake)
        #expect(r.scanout.stale == 1 && r.scanout.staleFrames.count == 1)
        #expect(r.captures.isEmpty && r.stats.captures == 0 && r.stats.earlyStaleFlags == 0)
        #expect(r.stats.onMismatch?.jobs == 200 && r.stats.onMismatch?.recycledUnread == 200)
    }

    /// Flip events readable 2.5 refreshes after their vblank, the CRC lines 0.5 ms after theirs
    /// (a pacing thread preempted between reading the events and the lines: on vkms under TCG,
    /// 1–3 refreshes): the lines of the vblank a flip latched at and of the next two are read
    /// before its event. The early verdicts wait for the flip in flight, so a clean run flags
    /// and reads nothing (they took each such vblank for a change without a flip and read the
    /// previous frame's buffer), and the stale frame 100 alone is read, showing frame 99.
    @Test(arguments: [nil, 100])
    func flipEventsReadAfterTheirLinesFlagOnlyTheStaleFrame(stale: Int?) throws {
        let fake = WritebackCaptureTests.device()
        fake.receiptLatencyNs = 5 * 16_666_667 / 2
        if let f = stale { fake.staleFlips = [f + 1] }
        let r = try Self.run(fake)
        #expect(r.scanout.changesWithoutFlip == 0 && r.scanout.stale == (stale == nil ? 0 : 1))
        #expect(r.captures.map(\.label) == (stale.map { [$0] } ?? []))
        let showsFrame99 = { (c: WritebackCapture) in c.captured.allSatisfy { $0 & 0x00ff_ffff == Self.colour(99) } }
        #expect(r.captures.allSatisfy { $0.reason == .stale && showsFrame99($0) })
        let m = try #require(r.stats.onMismatch)
        #expect(m.jobs == 200 && m.recycledUnread == 200 - r.captures.count)
        #expect(r.stats.skipped == 0)
    }

    /// Fences 8 refreshes late (0.5 ms after the 8th vblank, after that vblank's flip event): a
    /// buffer cannot be recycled before its fence, so the 6 buffers take the jobs of 6 frames in
    /// every 9 (frame k has one when k mod 9 < 6: 134 of 200). A stale frame with a job is read
    /// (100); one without (96) is counted as flagged too late, never lost.
    @Test(arguments: [(100, 1), (96, 0)])
    func slowFencesLeaveFlipsWithoutAJobAndCountTheFlag(stale: Int, read: Int) throws {
        let fake = WritebackCaptureTests.device()
        fake.staleFlips = [stale + 1]
        fake.writebackLatencyNs = 8 * 16_666_667
        let r = try Self.run(fake)
        let m = try #require(r.stats.onMismatch)
        #expect(m.jobs == 134 && m.withoutJob == 66 && m.recycledUnread == 134 - read)
        #expect(r.stats.earlyStaleFlags == 1 && r.stats.captures == read && r.stats.skipped == 1 - read)
        #expect(r.captures.map(\.label) == (read == 1 ? [stale] : []))
        // The render copies (9, allocated once) go back with every recycled job and every flip
        // left without one: after 100 frames under that pressure the stale frame still has its own.
        if let c = r.captures.first {
            #expect(c.rendered.count == 160 * 120 && c.rendered.allSatisfy { $0 & 0x00ff_ffff == Self.colour(stale) })
        }
    }
}
