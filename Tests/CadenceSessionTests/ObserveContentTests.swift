import CadenceCore
import CadenceSession
import Foundation
import Testing

/// `observe --verify crc` on virtual inputs: a saved vkms trace (the app's flips) and CRC lines
/// made up per vblank; every flip changes the picture, or from a flip on it stays frozen.
@Suite struct ObserveContentTests {
    static let trace = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../DRMTraceTests/Fixtures/vkms-inject-late.trace").standardized.path

    /// The flips of the fixture's clients on CRTC 0 (their vblank sequences, in order) and the
    /// vblanks traced.
    static func flips() throws -> (flips: [UInt64], vblanks: ClosedRange<UInt64>) {
        let s = try ObserveSession(
            onlyCRTC: 0, expectRate: nil, displays: ObservedDisplays(devicePath: "/nonexistent"), logPath: nil,
            csvPath: nil, metricsTextfile: nil)
        s.keepReports = true
        try s.replay(path: trace)
        _ = s.finish()
        let seqs = s.reports.values.flatMap { $0 }.filter(\.wasPresented).map(\.sequence).sorted()
        return (seqs, (seqs.first! - 5)...(seqs.last! + 5))
    }

    /// Observes the fixture with CRC lines from `content` (the picture shown at each vblank).
    static func observe(content: (UInt64) -> UInt64, lines: ClosedRange<UInt64>) throws -> ObserveResult.CRTC {
        try #require(try observeResult(content: content, lines: lines).crtcs.first { $0.crtc == 0 })
    }

    /// The whole observation of ``observe(content:lines:)``.
    static func observeResult(content: (UInt64) -> UInt64, lines: ClosedRange<UInt64>) throws -> ObserveResult {
        let s = try ObserveSession(
            onlyCRTC: 0, expectRate: nil, displays: ObservedDisplays(devicePath: "/nonexistent"), logPath: nil,
            csvPath: nil, metricsTextfile: nil)
        s.verifyContent(crtcs: [0], source: "auto")
        try s.replay(path: trace)
        // Lines read promptly, one per vblank, well after it (no catch-up can be suspected).
        s.addCRC(
            crtc: 0, lines.map { ScanoutVerifier.Sample(sequence: $0, crc: content($0), receivedAt: 0) }, readNs: 1_000)
        return s.finish()
    }

    /// Only a CRTC whose flips changed nothing is frozen.
    @Test func frozenCRTCsAreTheOnesWithStaleFlips() throws {
        let (flips, vblanks) = try Self.flips()
        let moving = try Self.observeResult(content: { v in UInt64(flips.filter { $0 <= v }.count) }, lines: vblanks)
        #expect(moving.crtcs.count >= 1)
        #expect(moving.frozenCRTCs.isEmpty)
        let from = flips[49]
        let stuck = try Self.observeResult(
            content: { v in UInt64(flips.filter { $0 <= min(v, from) }.count) }, lines: vblanks)
        #expect(stuck.frozenCRTCs.map(\.crtc) == [0])
        #expect(stuck.frozenCRTCs.first?.scanout?.stale == flips.count - 50)
    }

    @Test func everyFlipChangesThePicture() throws {
        let (flips, vblanks) = try Self.flips()
        #expect(flips.count > 60)
        // The picture at v is the number of flips at or before v.
        let c = try Self.observe(content: { v in UInt64(flips.filter { $0 <= v }.count) }, lines: vblanks)
        let v = try #require(c.scanout)
        #expect(v.frames == flips.count && v.verified == flips.count && v.stale == 0 && v.changesWithoutFlip == 0)
        #expect(v.longestFrozen == nil && v.source == "auto" && v.reads == 1 && v.readMicroseconds == 1)
    }

    /// From the 50th flip on, every flip shows the same picture: one frozen stretch from the
    /// 50th flip's vblank to the last flip, every later flip changing nothing.
    @Test func aFrozenPictureWhileFlipsGoOn() throws {
        let (flips, vblanks) = try Self.flips()
        let from = flips[49]
        let c = try Self.observe(content: { v in UInt64(flips.filter { $0 <= min(v, from) }.count) }, lines: vblanks)
        let v = try #require(c.scanout)
        #expect(v.stale == flips.count - 50 && v.verified == 50 && v.changesWithoutFlip == 0)
        let f = try #require(v.longestFrozen)
        #expect(
            f
                == FrozenContent(
                    fromSequence: from, firstFlipSequence: flips[50], lastFlipSequence: flips.last!,
                    flips: flips.count - 50,
                    sinceFirstLine: false))
    }

    /// A picture that never changes while the trace runs: frozen since the first line read.
    @Test func frozenFromTheFirstLine() throws {
        let (flips, vblanks) = try Self.flips()
        let c = try Self.observe(content: { _ in 7 }, lines: vblanks)
        let f = try #require(c.scanout?.longestFrozen)
        #expect(f.sinceFirstLine && f.fromSequence == vblanks.lowerBound && f.flips == flips.count)
        #expect(
            f.refreshes == Int(flips.last! - vblanks.lowerBound) && f.flippingRefreshes == Int(flips.last! - flips[0]))
    }
}
