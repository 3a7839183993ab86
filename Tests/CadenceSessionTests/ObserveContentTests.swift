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

    /// The fixture with every vblank sequence moved `offset` on, modulo 2³² (the kernel's 32-bit
    /// counters), written to a temporary file: with an offset near 2³² the counter wraps while the
    /// trace runs. (The send probe's sequence of the kernel's own events, type 0, is never filled
    /// in: it stays 0.)
    static func shiftedTrace(by offset: UInt64) throws -> String {
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let r = line.range(of: "seq="), !line.contains(" type=0 ") else {
                out += line + "\n"
                continue
            }
            let digits = line[r.upperBound...].prefix { $0.isNumber }
            let v = (UInt64(digits)! &+ offset) & 0xffff_ffff
            out += line[..<r.upperBound] + String(v) + line[digits.endIndex...] + "\n"
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cadence-observe-shifted-\(offset)-\(UInt32.random(in: 0...UInt32.max)).trace"
        ).path
        try out.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Observes the fixture moved `offset` vblanks on (``shiftedTrace(by:)``) with the CRC lines
    /// as the live reader hands them over: the kernel's 32-bit frame counter, unwidened. The lines
    /// before the first flip are read before the trace (held until its first vblank), the rest
    /// after it. `content` is the picture at each vblank of the fixture as it is.
    static func observeShifted(
        by offset: UInt64, content: (UInt64) -> UInt64, lines: ClosedRange<UInt64>, firstFlip: UInt64
    ) throws -> ScanoutSummary {
        let path = try shiftedTrace(by: offset)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let s = try ObserveSession(
            onlyCRTC: 0, expectRate: nil, displays: ObservedDisplays(devicePath: "/nonexistent"), logPath: nil,
            csvPath: nil, metricsTextfile: nil)
        s.verifyContent(crtcs: [0], source: "auto")
        func samples(_ r: [UInt64]) -> [ScanoutVerifier.Sample] {
            r.map { ScanoutVerifier.Sample(sequence: ($0 &+ offset) & 0xffff_ffff, crc: content($0), receivedAt: 0) }
        }
        s.addCRC(crtc: 0, samples(Array(lines.lowerBound..<firstFlip)))
        try s.replay(path: path)
        s.addCRC(crtc: 0, samples(Array(firstFlip...lines.upperBound)))
        let c = try #require(s.finish().crtcs.first { $0.crtc == 0 })
        return try #require(c.scanout)
    }

    /// A picture with every kind of verdict: flips 20 to 22 change nothing (stale, a frozen
    /// stretch), and the picture changes once at a vblank no flip latched.
    static func mixedContent(_ flips: [UInt64]) -> (UInt64) -> UInt64 {
        let stale = Set(flips[20...22])
        // A vblank after the stale flips that no flip latched (a late frame's), or past the last flip.
        let change = (flips[23]...flips.last!).first { !flips.contains($0) } ?? flips.last! + 1
        return { v in UInt64(flips.filter { $0 <= v && !stale.contains($0) }.count) + (v >= change ? 1_000 : 0) }
    }

    /// The verdicts over the fixture moved `offset` on are those over the fixture itself, the
    /// sequences they name moved `offset` on in 64 bits (the trace's first vblank is before 2³²).
    static func expectSameVerdicts(offset: UInt64) throws {
        let (flips, vblanks) = try flips()
        let content = mixedContent(flips)
        let base = try observeShifted(by: 0, content: content, lines: vblanks, firstFlip: flips[0])
        let moved = try observeShifted(by: offset, content: content, lines: vblanks, firstFlip: flips[0])
        var want = base
        want.changeWithoutFlipVBlanks = base.changeWithoutFlipVBlanks.map { $0 + offset }
        want.longestFrozen = base.longestFrozen.map {
            var f = $0
            f.fromSequence += offset
            f.firstFlipSequence += offset
            f.lastFlipSequence += offset
            return f
        }
        #expect(moved == want, "offset \(offset)")
    }

    /// Known answer: the mixed picture's verdicts far from the wrap.
    @Test func mixedVerdictsFarFromTheWrap() throws {
        let (flips, vblanks) = try Self.flips()
        let v = try Self.observeShifted(
            by: 0, content: Self.mixedContent(flips), lines: vblanks, firstFlip: flips[0])
        #expect(v.frames == flips.count && v.stale == 3 && v.changesWithoutFlip == 1 && v.mismatches == 4)
        #expect(v.verified == flips.count - 3 && v.inexact == 0 && v.missingLines == 0)
        #expect(v.longestFrozen?.flips == 3 && v.longestFrozen?.firstFlipSequence == flips[20])
    }

    /// The CRC frame counter and the flips' sequences wrap (0xFFFF_FFFF → 0) while the trace runs:
    /// at the first flip, in the middle, at the last flip, just after it; the verdicts are those
    /// far from the wrap.
    @Test func verdictsSurviveThe32BitWrap() throws {
        let (flips, _) = try Self.flips()
        for at in [flips[0], flips[0] + 1, flips[20], flips[21], flips[45], flips.last!, flips.last! + 3] {
            // The wrap falls just before vblank `at` of the fixture.
            try Self.expectSameVerdicts(offset: (1 << 32) - at)
        }
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
