import Testing
@testable import DRMTrace

@Suite struct FlipTrackerTests {
    /// Runs trace text through a stream; returns the flips (file, crtc, sequence, timestamp, exact).
    func flips(_ lines: [String]) -> ([FlipTracker.Flip], TraceStream) {
        var s = TraceStream()
        var out: [FlipTracker.Event] = []
        Array(lines.joined(separator: "\n").utf8).withUnsafeBytes { s.feed($0, into: &out) }
        s.finish(into: &out)
        let f = out.compactMap { e -> FlipTracker.Flip? in if case .flip(let f) = e { return f } else { return nil } }
        return (f, s)
    }

    @Test func flipTakesItsVBlankTimestampWhicheverComesFirst() {
        // Delivery before the vblank event (drm_handle_vblank_events) and after it.
        let (f, _) = flips([
            Lines.delivered("a", 0, 10), Lines.vblank(0, 10, 1_000),
            Lines.vblank(0, 11, 2_000), Lines.delivered("a", 0, 11),
        ])
        #expect(f.map(\.sequence) == [10, 11])
        #expect(f.map(\.timestamp) == [1_000, 2_000])
        #expect(f.allSatisfy { $0.exact })
    }

    @Test func wrappedSequencesUnwrapTo64Bits() {
        let (f, _) = flips([
            Lines.vblank(0, UInt32.max - 1, 1_000), Lines.delivered("a", 0, UInt32.max - 1),
            Lines.vblank(0, UInt32.max, 2_000), Lines.delivered("a", 0, UInt32.max),
            Lines.vblank(0, 0, 3_000), Lines.delivered("a", 0, 0),
            Lines.vblank(0, 1, 4_000), Lines.delivered("a", 0, 1),
        ])
        #expect(f.map(\.sequence) == [4_294_967_294, 4_294_967_295, 4_294_967_296, 4_294_967_297])
        #expect(FlipTracker.unwrap(3, after: 0x1_FFFF_FFFE) == 0x2_0000_0003)
        #expect(FlipTracker.unwrap(0xFFFF_FFFF, after: 0x1_0000_0001) == 0xFFFF_FFFF)
    }

    @Test func missingVBlankEventIsExtrapolatedAndMarked() {
        // Vblank 12's event is lost: its flip gets 10's time + 2 periods, marked inexact.
        let (f, s) = flips([
            Lines.vblank(0, 10, 10_000), Lines.vblank(0, 11, 11_000),
            Lines.delivered("a", 0, 12), Lines.vblank(0, 13, 13_000),
        ])
        #expect(f.count == 1)
        #expect(f[0].timestamp == 12_000)
        #expect(!f[0].exact)
        #expect(s.tracker.inexactFlips == 1)
        // A flip after the last traced vblank, at the end of the trace.
        let (g, _) = flips([Lines.vblank(0, 10, 10_000), Lines.vblank(0, 11, 11_000), Lines.delivered("a", 0, 14)])
        #expect(g.map(\.timestamp) == [14_000])
    }

    @Test func multipleCRTCsKeepTheirOwnGrids() {
        let (f, _) = flips([
            Lines.vblank(0, 100, 1_000), Lines.vblank(1, 7, 1_500),
            Lines.delivered("a", 1, 7), Lines.delivered("b", 0, 100),
        ])
        #expect(f.map { [$0.crtc, Int32($0.sequence), Int32($0.timestamp)] } == [[1, 7, 1_500], [0, 100, 1_000]])
        #expect(f.map(\.file) == [0xa, 0xb])
    }

    @Test func vblankRequestsAreNotFlips() {
        // drmWaitVBlank for 11 and a flip at 11: two deliveries, one flip.
        let (f, s) = flips([
            Lines.queued("a", 0, 11), Lines.vblank(0, 10, 1_000),
            Lines.delivered("a", 0, 11), Lines.delivered("a", 0, 11), Lines.vblank(0, 11, 2_000),
            // A request for 20 still pending does not swallow the flip at 12.
            Lines.queued("a", 0, 20), Lines.delivered("a", 0, 12), Lines.vblank(0, 12, 3_000),
        ])
        #expect(f.map(\.sequence) == [11, 12])
        #expect(s.tracker.requestDeliveries == 1)
    }

    @Test func sequenceRequestMovedByNextOnMissIsStillARequest() {
        // The client asks for 494 when 494 has passed (NEXT_ON_MISS: the kernel answers at 495)
        // and commits; the flip and the request both complete at 495.
        let (f, s) = flips([
            Lines.vblank(0, 493, 1_000), Lines.vblank(0, 494, 2_000),
            Lines.sequence("a", 494), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 495), Lines.delivered("a", 0, 495), Lines.vblank(0, 495, 3_000),
        ])
        #expect(f.map(\.sequence) == [495])
        #expect(f.first?.committedAt == 1_000)
        #expect(s.tracker.requestDeliveries == 1)
        #expect(s.tracker.tasks[0xa]?.command == "cadence")   // the first line that named the client
    }

    @Test func requestForTheVBlankBeforeAnOutstandingCommitIsARequest() {
        // The app committed its next frame early and waits for vblank 1689; the flip misses
        // 1689 and lands at 1690.
        let (f, _) = flips([
            Lines.vblank(0, 1688, 1_000), Lines.sequence("a", 1689), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 1689), Lines.vblank(0, 1689, 2_000),
            Lines.delivered("a", 0, 1690), Lines.vblank(0, 1690, 3_000),
        ])
        #expect(f.map(\.sequence) == [1690])
    }

    @Test func testOnlyAndEventlessCommitsAreNotOutstanding() {
        // TEST_ONLY (0x100) and a commit without PAGE_FLIP_EVENT leave no commit outstanding:
        // the delivery answers the request.
        let (f, s) = flips([
            Lines.vblank(0, 1, 1_000), Lines.commit("a", at: "0.000001", flags: 0x101), Lines.commit("a", at: "0.000002", flags: 0x200),
            Lines.sequence("a", 2), Lines.delivered("a", 0, 2), Lines.vblank(0, 2, 2_000),
        ])
        #expect(f.isEmpty)
        #expect(s.tracker.requestDeliveries == 1)
    }

    @Test func kernelCommitsAreTheirOwnClient() {
        let (f, _) = flips([Lines.vblank(0, 1, 1_000), Lines.delivered("0000000000000000", 0, 1)])
        #expect(f.map(\.file) == [0])
    }

    @Test func requestsPerClientAreBounded() {
        var lines = [Lines.vblank(0, 1, 1_000)]
        for k in 0..<200 { lines.append(Lines.queued("a", 0, UInt32(1_000 + k))) }
        lines.append(Lines.delivered("a", 0, 2))   // no request passed yet: a flip
        let (f, _) = flips(lines)
        #expect(f.count == 1)
    }
}
