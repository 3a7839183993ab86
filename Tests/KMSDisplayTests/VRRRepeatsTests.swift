import CadenceCore
import Testing

@testable import KMSDisplay

/// KMSDisplay's software LFC plan (`VRRRepeats`), known answers worked out by hand on a 48–144 Hz
/// panel whose response (commit to refresh) is 100 µs.
struct VRRRepeatsTests {
    let panel: ClosedRange<Double> = 48...144

    /// 42.1 Hz (23.75 ms a frame): on time, one repeat half-way, committed at its commit time
    /// plus half the frame. Shown 5.1 ms late (the panel was still in a refresh), the 18.65 ms
    /// the frame has left until the next is due is one refresh: no repeat. Taking the lateness
    /// for the panel's response, as it did, committed one 6.78 ms after the late refresh.
    @Test func aLateFrameGetsTheRepeatsThatFitTheTimeItHasLeft() {
        var r = VRRRepeats()
        r.frameCommitted(at: 0)
        r.framePresented(at: 100_000, range: panel)
        // No duration known yet: no repeat.
        #expect(r.nextCommitTime == nil)
        r.frameCommitted(at: 23_752_969)
        r.framePresented(at: 23_852_969, range: panel)
        #expect(r.response == 100_000)
        #expect(r.nextCommitTime == 35_629_454)
        r.repeatCommit = 35_629_454
        r.repeatCompleted(at: 35_729_454)
        #expect(r.done == 1 && !r.inFlight && r.nextCommitTime == nil)
        r.frameCommitted(at: 47_505_938)
        r.framePresented(at: 52_705_938, range: panel)
        #expect(r.response == 100_000)
        #expect(r.nextCommitTime == nil)
    }

    /// 25 Hz (40 ms, two refreshes of 20 ms): shown 6 ms late, the 34 ms left are two refreshes
    /// of 17 ms, the repeat committed 17 ms after the late refresh's commit time.
    @Test func aLateFramesRepeatIsSpreadOverWhatIsLeft() {
        var r = VRRRepeats()
        r.frameCommitted(at: 0)
        r.framePresented(at: 100_000, range: panel)
        r.frameCommitted(at: 40_000_000)
        r.framePresented(at: 40_100_000, range: panel)
        #expect(r.nextCommitTime == 60_000_000)
        // A new frame cancels the repeats left.
        r.frameCommitted(at: 80_000_000)
        #expect(r.nextCommitTime == nil)
        r.framePresented(at: 86_100_000, range: panel)
        #expect(r.nextCommitTime == 103_000_000)
    }

    /// Flip timestamps are whole µs: a frame whose commit-to-refresh time is less than 1 µs over
    /// the shortest seen is on time, its repeats planned from its commit exactly.
    @Test func lessThanAMicrosecondOverTheResponseIsOnTime() {
        var r = VRRRepeats()
        r.frameCommitted(at: 0)
        r.framePresented(at: 99_400, range: panel)
        #expect(r.response == 99_400)
        r.frameCommitted(at: 40_000_000)
        r.framePresented(at: 40_100_000, range: panel)
        #expect(r.response == 99_400)
        #expect(r.nextCommitTime == 60_000_000)
    }
}
