import Foundation
import Testing

@testable import CadenceCore

/// The scanout rules on hand-made CRC lines and flips (16 ms vblanks from t = 0, lines read
/// 1 ms after their vblank unless a test says otherwise).
@Suite struct ScanoutVerifierTests {
    static let period: Nanoseconds = 16_000_000

    /// Flips at `flips` (frame k at the k-th sequence) and one line per vblank `lines`, the
    /// content being the frame on screen (0 before the first flip).
    static func verifier(
        flips: [UInt64], lines: ClosedRange<UInt64>, content: ((UInt64) -> UInt64)? = nil,
        received: ((UInt64) -> Nanoseconds)? = nil, skip: Set<UInt64> = []
    ) -> ScanoutVerifier {
        var v = ScanoutVerifier()
        let shown = content ?? { seq in UInt64(flips.lastIndex { $0 <= seq }.map { $0 + 1 } ?? 0) }
        for (k, s) in flips.enumerated() {
            v.add(ScanoutVerifier.Flip(frame: FrameID(k + 1), sequence: s, timestamp: Nanoseconds(s) * period))
        }
        for s in lines where !skip.contains(s) {
            v.add(
                ScanoutVerifier.Sample(
                    sequence: s, crc: 0xC0DE_0000 + shown(s),
                    receivedAt: received?(s) ?? Nanoseconds(s) * period + 1_000_000))
        }
        return v
    }

    @Test func everyChangeAtItsFlipIsVerified() {
        // 6 frames, one per vblank from 11, then frame 6 held 3 vblanks, frame 7 at 19.
        let s = Self.verifier(flips: [11, 12, 13, 14, 15, 16, 19], lines: 10...22).finish()
        #expect(s.frames == 7 && s.verified == 7 && s.mismatches == 0 && s.inexact == 0)
        #expect(s.lines == 13 && s.missingLines == 0)
        // Frame 6 stayed 3 vblanks: 17 and 18 repeat it (after 19, the last flip, nothing counts).
        #expect(s.repeatedRefreshes == 2 && s.unjudgedVBlanks == 0)
    }

    @Test func aFlipThatChangesNothingIsStale() {
        // Frame 3 (flipped at 13) shows frame 2's content.
        let flips: [UInt64] = [11, 12, 13, 14, 15]
        let s = Self.verifier(
            flips: flips, lines: 10...16,
            content: { seq in
                let k = UInt64(flips.lastIndex { $0 <= seq }.map { $0 + 1 } ?? 0)
                return k == 3 ? 2 : k
            }
        ).finish()
        #expect(s.stale == 1 && s.staleFrames == [3] && s.mismatches == 1)
        #expect(s.changesWithoutFlip == 0 && s.verified == 4 && s.inexact == 0)
        // The stale flip's vblank shows frame 2 again: one repeated refresh the flips do not see.
        #expect(s.repeatedRefreshes == 1)
    }

    @Test func aChangeWithoutAFlipIsAMismatch() {
        // The content changes at 14 with no flip there (a buffer drawn while on screen).
        let s = Self.verifier(
            flips: [11, 16], lines: 10...18, content: { seq in seq >= 16 ? 2 : seq >= 14 ? 9 : seq >= 11 ? 1 : 0 }
        ).finish()
        #expect(s.changesWithoutFlip == 1 && s.changeWithoutFlipVBlanks == [14] && s.mismatches == 1)
        #expect(s.stale == 0 && s.verified == 2)
    }

    @Test func aMissingLineIsInexactNeverAMismatch() {
        // No line for 13, where frame 3 flipped: frame 3 is not judged; 14 is judged against nothing.
        let s = Self.verifier(flips: [11, 12, 13, 14, 15], lines: 10...16, skip: [13]).finish()
        #expect(s.missingLines == 1 && s.mismatches == 0)
        #expect(s.inexact == 2 && s.verified == 3)
        // 13 and 14 cannot be told (no line at 13).
        #expect(s.unjudgedVBlanks == 2 && s.repeatedRefreshes == 0)
    }

    @Test func catchUpRepeatsAreInexact() {
        // The CRC worker fell behind over 13...15: all three lines carry 15's content (frame 5)
        // and were read together after vblank 15.
        let flips: [UInt64] = [11, 12, 13, 14, 15, 16]
        let s = Self.verifier(
            flips: flips, lines: 10...17,
            content: { seq in
                let real = { (q: UInt64) in UInt64(flips.lastIndex { $0 <= q }.map { $0 + 1 } ?? 0) }
                return (13...15).contains(seq) ? real(15) : real(seq)
            },
            received: { seq in
                (13...15).contains(seq) ? 15 * Self.period + 2_000_000 : Nanoseconds(seq) * Self.period + 1_000_000
            }
        ).finish()
        #expect(s.mismatches == 0 && s.stale == 0 && s.changesWithoutFlip == 0)
        #expect(s.catchUpLines == 2)
        // Frames 3 (its change is 5's), 4 and 5 are not judged.
        #expect(s.inexact == 3 && s.verified == 3)
        // 14 and 15 repeat 13's line only because of the catch-up: not counted as repeats.
        #expect(s.repeatedRefreshes == 0 && s.unjudgedVBlanks == 2)
    }

    @Test func theSameLinesReadBeforeTheFlipAreStaleNotCatchUp() {
        // As above, but the line at 13 was read before 14's flip: it cannot carry 14's or 15's
        // content, so 14 and 15 are stale.
        let flips: [UInt64] = [11, 12, 13, 14, 15, 16]
        let s = Self.verifier(
            flips: flips, lines: 10...17,
            content: { seq in
                let real = { (q: UInt64) in UInt64(flips.lastIndex { $0 <= q }.map { $0 + 1 } ?? 0) }
                return (13...15).contains(seq) ? real(15) : real(seq)
            }
        ).finish()
        #expect(s.stale == 2 && s.staleFrames == [4, 5] && s.catchUpLines == 0)
    }

    @Test func linesReadTogetherButBeforeTheNextFlipsLineAreStale() {
        // Frame 3 (flipped at 13) is stale; line 12 was read late, after 13's timestamp, but
        // line 13 came in a later read: the lines were not written together, no catch-up.
        let flips: [UInt64] = [11, 12, 13, 14, 15]
        let s = Self.verifier(
            flips: flips, lines: 10...16,
            content: { seq in
                let k = UInt64(flips.lastIndex { $0 <= seq }.map { $0 + 1 } ?? 0)
                return k == 3 ? 2 : k
            }, received: { seq in seq == 12 ? 13 * Self.period + 100_000 : Nanoseconds(seq) * Self.period + 1_000_000 }
        ).finish()
        #expect(s.stale == 1 && s.staleFrames == [3] && s.catchUpLines == 0 && s.inexact == 0)
    }

    @Test func aRepeatedLineIsIgnoredAndCounted() {
        var v = Self.verifier(flips: [11, 12], lines: 10...13)
        v.add(ScanoutVerifier.Sample(sequence: 12, crc: 77, receivedAt: 0))
        let s = v.finish()
        #expect(s.repeatedLines == 1 && s.lines == 4 && s.mismatches == 0 && s.verified == 2)
    }

    @Test func noLinesJudgesNothing() {
        var v = ScanoutVerifier()
        v.add(ScanoutVerifier.Flip(frame: 1, sequence: 11, timestamp: 11 * Self.period))
        v.add(ScanoutVerifier.Flip(frame: 2, sequence: 12, timestamp: 12 * Self.period))
        let s = v.finish()
        #expect(s.frames == 2 && s.inexact == 2 && s.verified == 0 && s.lines == 0)
    }

    @Test func foldKeepsOneAndTwoWordsExact() {
        #expect(ScanoutVerifier.fold([0xdead_beef]) == 0xdead_beef)
        #expect(ScanoutVerifier.fold([1, 2]) == 0x2_0000_0001)
        #expect(ScanoutVerifier.fold([1, 2, 3]) != ScanoutVerifier.fold([1, 2, 4]))
    }

    /// The summary's JSON: every field when the CRC ran (zeros included), only `writeback` when
    /// only writeback ran; both read back equal, and an old summary without `writeback` reads.
    @Test func summaryJSONClaimsOnlyTheChecksThatRan() throws {
        var crc = ScanoutSummary()
        crc.source = "auto"
        crc.reads = 3
        crc.readMicroseconds = 12
        let crcJSON = String(decoding: try JSONEncoder().encode(crc), as: UTF8.self)
        #expect(
            crcJSON.contains("\"frames\":0") && crcJSON.contains("\"mismatches\":0") && !crcJSON.contains("writeback"))
        #expect(try JSONDecoder().decode(ScanoutSummary.self, from: Data(crcJSON.utf8)) == crc)
        var wb = ScanoutSummary()
        wb.writeback = WritebackSummary()
        wb.writeback!.captures = 12
        #expect(!wb.crcRan && crc.crcRan)
        let wbJSON = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(wb)) as? [String: Any]
        #expect(wbJSON.map { Array($0.keys) } == ["writeback"])
        #expect(try JSONDecoder().decode(ScanoutSummary.self, from: try JSONEncoder().encode(wb)) == wb)
        var both = crc
        both.writeback = wb.writeback
        #expect(try JSONDecoder().decode(ScanoutSummary.self, from: try JSONEncoder().encode(both)) == both)
    }

    /// The longest frozen stretch: stretches of flips that changed nothing, each from the change
    /// before it; the longest by the time flips kept coming (first to last unchanged flip), not
    /// by the time since the change; a single stale flip is a stretch of its own.
    @Test func longestFrozenStretch() {
        // Changes at 10, 20; stale flips at 12 (after 10), 25, 26, 30 (after 20).
        let f = ScanoutVerifier.longestFrozen(stale: [12, 25, 26, 30], changes: [10, 20], firstLine: 5)
        #expect(
            f
                == FrozenContent(
                    fromSequence: 20, firstFlipSequence: 25, lastFlipSequence: 30, flips: 3, sinceFirstLine: false))
        #expect(f?.refreshes == 10 && f?.flippingRefreshes == 5)
        // One late redundant flip 9 refreshes after a change, against two flips 2 apart.
        let g = ScanoutVerifier.longestFrozen(stale: [19, 22, 24], changes: [10, 20], firstLine: 5)
        #expect(g?.fromSequence == 20 && g?.flippingRefreshes == 2 && g?.refreshes == 4)
        let early = ScanoutVerifier.longestFrozen(stale: [8, 9], changes: [10], firstLine: 5)
        #expect(
            early
                == FrozenContent(
                    fromSequence: 5, firstFlipSequence: 8, lastFlipSequence: 9, flips: 2, sinceFirstLine: true))
        #expect(ScanoutVerifier.longestFrozen(stale: [], changes: [10], firstLine: 5) == nil)
    }

    /// A short margin gives verdicts early, as the display reads them (each vblank's flip, then
    /// its line): the stale frame 5 (flipped at 15) once vblank 17 is in, the change without a
    /// flip at 18 once the flip at 19 is judged (at 21); the full verifier's counts agree.
    @Test func earlyVerdictsComeMarginVBlanksAfterTheFlip() {
        let flips: [UInt64] = [11, 12, 13, 14, 15, 16, 19, 20]
        func shown(_ seq: UInt64) -> UInt64 {
            if seq == 18 { return 99 }
            let k = UInt64(flips.lastIndex { $0 <= seq }.map { $0 + 1 } ?? 0)
            return k == 5 ? 4 : k
        }
        var early = ScanoutVerifier(margin: 2, keepsVerdicts: true)
        var full = ScanoutVerifier()
        var staleAt: [FrameID: UInt64] = [:]
        var changesAt: [UInt64: UInt64] = [:]
        for v: UInt64 in 10...23 {
            if let k = flips.firstIndex(of: v) {
                let f = ScanoutVerifier.Flip(
                    frame: FrameID(k + 1), sequence: v, timestamp: Nanoseconds(v) * Self.period)
                early.add(f)
                full.add(f)
            }
            let line = ScanoutVerifier.Sample(
                sequence: v, crc: 0xC0DE_0000 + shown(v), receivedAt: Nanoseconds(v) * Self.period + 1_000_000)
            early.add(line)
            full.add(line)
            for x in early.takeVerdicts() where x.kind == .stale { staleAt[x.frame] = v }
            for c in early.takeChangesWithoutFlip() { changesAt[c] = v }
            #expect(full.takeVerdicts().isEmpty && full.takeChangesWithoutFlip().isEmpty)
        }
        #expect(staleAt == [5: 17] && changesAt == [18: 21])
        let s = full.finish()
        #expect(s.staleFrames == [5] && s.changeWithoutFlipVBlanks == [18] && s.mismatches == 2)
        #expect(early.finishedChangesWithoutFlip().isEmpty && early.finishedVerdicts().allSatisfy { $0.kind != .stale })
    }
}
