import Foundation
import Testing
@testable import DRMTrace

/// The flip tracker with the send probe (each delivered event's own type, sequence and time),
/// on traces captured in the VM beside `cadence run` and on the patterns they contain.
@Suite struct SendProbeTests {
    func fixture(_ name: String) throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name).trace")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    func run(_ lines: [String], sendProbe: Bool? = nil) -> (flips: [FlipTracker.Flip], vblanks: [UInt64: Int64], stream: TraceStream) {
        var s = TraceStream(sendProbe: sendProbe)
        var out: [FlipTracker.Event] = []
        Array(lines.joined(separator: "\n").utf8).withUnsafeBytes { s.feed($0, into: &out) }
        s.finish(into: &out)
        var flips: [FlipTracker.Flip] = [], vblanks: [UInt64: Int64] = [:]
        for e in out {
            switch e {
            case .flip(let f): flips.append(f)
            case let .vblank(_, seq, t): vblanks[seq] = t
            }
        }
        return (flips, vblanks, s)
    }

    @Test func requestMovedToTheNextVBlankInTheVM() throws {
        // The app waits for 593 and has a commit outstanding; its request ioctl ran after vblank
        // 593, so the kernel answers it at 594 and 593's only delivery is the flip. Inferred
        // from requests and commits alone this is the same pattern as a flip that misses 593
        // (see FlipTrackerTests.requestForTheVBlankBeforeAnOutstandingCommitIsARequest); the
        // event's type tells them apart.
        let (f, v, s) = run(try fixture("vkms-request-moved"))
        #expect(f.map(\.sequence) == [587, 589, 591, 593, 595])   // the app's own log
        #expect(f.allSatisfy { $0.exact && v[$0.sequence] == $0.timestamp })
        #expect(f.allSatisfy { $0.committedAt != nil && $0.committedAt! < $0.deliveredAt })
        #expect(s.tracker.typedDeliveries == s.tracker.requestDeliveries + 5)
        #expect(s.tracker.requestDeliveries == 5)
    }

    @Test func sendProbeSkippedInsideTheRequestProbeInTheVM() throws {
        // At 1505 and 1516 the vblank interrupted the app's cadence_seq kprobe handler: the one
        // delivery has no `sent` record, and the request (not queued yet) is answered at the
        // next vblank. The delivery is the flip.
        let lines = try fixture("vkms-send-probe-missed")
        let (f, v, s) = run(lines)
        #expect(f.map(\.sequence) == [1504, 1505, 1506, 1507, 1508, 1510, 1511, 1512, 1513, 1515, 1516, 1517, 1518])
        #expect(f.allSatisfy { $0.exact && v[$0.sequence] == $0.timestamp })
        // Every `sent` record classified; the two deliveries without one inferred.
        #expect(s.tracker.typedDeliveries == lines.filter { $0.contains("cadence_send:") }.count)
        #expect(s.tracker.typedDeliveries + 2 == lines.filter { $0.contains("drm_vblank_event_delivered:") }.count)
    }

    @Test func deliveryWithoutItsSendAfterTheClientsRequestProbeIsNotThatRequest() {
        let base = [
            Lines.vblank(0, 9, 900), Lines.delivered("a", 0, 9), Lines.sent("a", 0, 9, type: 3, time: 900),
            Lines.vblank(0, 10, 1_000), Lines.commit("a", at: "0.000001"), Lines.sequence("a", 11),
            Lines.delivered("a", 0, 11), Lines.vblank(0, 11, 1_100),
        ]
        // The flip is 11's delivery; the request is answered at 12.
        let (f, _, s) = run(base + [Lines.delivered("a", 0, 12), Lines.sent("a", 0, 12, type: 3, time: 1_200), Lines.vblank(0, 12, 1_200)])
        #expect(f.map(\.sequence) == [11])
        #expect(f.first?.committedAt == 1_000)
        #expect(s.tracker.requestDeliveries == 2)
        // Another client's probe in between: nothing says the request was not queued; the
        // request for exactly 11 is answered first, and the commit stays outstanding.
        var other = base
        other.insert(Lines.commit("b", at: "0.000002"), at: 6)
        let (g, _, _) = run(other + [Lines.delivered("a", 0, 12), Lines.vblank(0, 12, 1_200)])
        #expect(g.map(\.sequence) == [12])
        // Without the send probe in the trace (no `sent` at all): inferred as before.
        let (h, _, _) = run(Array(base[3...]) + [Lines.delivered("a", 0, 12), Lines.vblank(0, 12, 1_200)])
        #expect(h.map(\.sequence) == [12])
    }

    @Test func deliveryWithoutItsSendAfterTheClientsCommitProbeIsNotThatCommit() {
        // The vblank interrupts the app's commit kprobe: that commit has not armed its event,
        // so the delivery answers the passed request, and the commit's flip comes later.
        let (f, _, s) = run([
            Lines.vblank(0, 9, 900), Lines.delivered("a", 0, 9), Lines.sent("a", 0, 9, type: 3, time: 900),
            Lines.sequence("a", 10), Lines.vblank(0, 10, 1_000), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 11), Lines.vblank(0, 11, 1_100),
            Lines.delivered("a", 0, 12), Lines.sent("a", 0, 12, type: 2, time: 1_200), Lines.vblank(0, 12, 1_200),
        ])
        #expect(f.map(\.sequence) == [12])
        #expect(f.first?.committedAt == 1_000)
        #expect(s.tracker.requestDeliveries == 2)
    }

    @Test func flipTakesTheEventsOwnSequenceAndTimeAndItsOwnCommit() {
        // The app's next commit is traced between the flip's delivery and its `sent` record:
        // the flip keeps the earlier commit, the next flip gets the later one. A vblank event
        // that was lost does not make the flip inexact: the event carries its time.
        let (f, _, s) = run([
            Lines.vblank(0, 1, 100), Lines.commit("a", at: "1.000001"),
            Lines.delivered("a", 0, 2, at: "1.000010"), Lines.commit("a", at: "1.000011"), Lines.sent("a", 0, 2, type: 2, time: 200),
            // vblank 2's own event is lost
            Lines.delivered("a", 0, 3, at: "1.000020"), Lines.sent("a", 0, 3, type: 2, time: 300), Lines.vblank(0, 3, 300),
        ], sendProbe: true)
        #expect(f.map(\.sequence) == [2, 3])
        #expect(f.map(\.timestamp) == [200, 300])
        #expect(f.map(\.committedAt) == [1_000_001_000, 1_000_011_000])
        #expect(f.map(\.deliveredAt) == [1_000_010_000, 1_000_020_000])
        #expect(f.allSatisfy { $0.exact })
        #expect(s.tracker.inexactFlips == 0)
    }

    @Test func typedRequestAnswersAreNotFlipsEvenWithACommitOutstanding() {
        // DRM_EVENT_VBLANK (1) and DRM_EVENT_CRTC_SEQUENCE (3) answer requests; other types
        // (a driver's own events) are not vblank events and change nothing.
        let (f, _, s) = run([
            Lines.vblank(0, 1, 100), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 2), Lines.sent("a", 0, 2, type: 1, time: 200),
            Lines.delivered("a", 0, 2), Lines.sent("a", 0, 2, type: 3, time: 200), Lines.vblank(0, 2, 200),
            Lines.sent("a", 0, 3, type: 0x8000_0000, time: 300),
            Lines.delivered("a", 0, 3), Lines.sent("a", 0, 3, type: 2, time: 300), Lines.vblank(0, 3, 300),
        ])
        #expect(f.map(\.sequence) == [3])
        #expect(s.tracker.requestDeliveries == 2)
        #expect(s.tracker.typedDeliveries == 3)
    }

    @Test func aSendProbeThatDisagreesWithTheDeliveryIsIgnored() {
        // Another kernel's struct layout: the probe reads a sequence that is not the
        // delivery's. From then on deliveries are inferred (11 answers the request for 11,
        // 12 is the commit's flip), and later `sent` records change nothing.
        let (f, _, s) = run([
            Lines.vblank(0, 10, 1_000), Lines.sequence("a", 11), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 11), Lines.sent("a", 0, 77, type: 2, time: 5),
            Lines.vblank(0, 11, 1_100),
            Lines.delivered("a", 0, 12), Lines.sent("a", 0, 12, type: 3, time: 1_200), Lines.vblank(0, 12, 1_200),
        ], sendProbe: true)
        #expect(s.tracker.sendProbeMismatch)
        #expect(f.map(\.sequence) == [12])
        #expect(f.first?.timestamp == 1_200)
        #expect(s.tracker.typedDeliveries == 0)
        #expect(s.tracker.requestDeliveries == 1)
        // The same trace with the probe agreeing: typed, the 11 delivery is the flip.
        let (g, _, t) = run([
            Lines.vblank(0, 10, 1_000), Lines.sequence("a", 11), Lines.commit("a", at: "0.000001"),
            Lines.delivered("a", 0, 11), Lines.sent("a", 0, 11, type: 2, time: 1_100), Lines.vblank(0, 11, 1_100),
            Lines.delivered("a", 0, 12), Lines.sent("a", 0, 12, type: 3, time: 1_200), Lines.vblank(0, 12, 1_200),
        ], sendProbe: true)
        #expect(!t.tracker.sendProbeMismatch)
        #expect(g.map(\.sequence) == [11])
        // The helpers' own event for a kernel commit (file 0, type 0, sequence never filled
        // in, as traced in the VM): not a disagreement; the kernel's commit is its own client.
        let (k, _, u) = run([
            Lines.vblank(0, 468, 1_000), Lines.delivered("0000000000000000", 0, 469),
            "          <idle>-0       [000] d.h3.    12.711243: cadence_send: (drm_send_event_timestamp_locked+0x0/0x10 [drm]) file=0x0 crtc=0 seq=0 type=0 time=12710655545",
            Lines.vblank(0, 469, 1_100),
        ], sendProbe: true)
        #expect(!u.tracker.sendProbeMismatch)
        #expect(k.map(\.file) == [0])
        #expect(k.map(\.sequence) == [469])
    }
}
