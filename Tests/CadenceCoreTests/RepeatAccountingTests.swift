import Testing
@testable import CadenceCore

/// Every refresh the panel repeats is a dropped refresh: for a link presenting every callback at
/// 60 on 60 Hz, the dropped refreshes of a run equal the repeats the flips' own vblank sequences
/// show (interval in refreshes − 1, summed), whatever delayed the loop. `cadence observe` found
/// frames on vkms whose callback had aimed one refresh past the previous flip + 1 and were
/// logged on time with no drop; these runs reproduce that on the fake display.
@Suite struct RepeatAccountingTests {
    struct Outcome {
        var dropped = 0
        var repeats = 0
        var uncharged: [Int] = []
        var causes: Set<DropCause> = []
    }

    func run(latency: Int, faults: [FakeFault], jitter: Nanoseconds = 0, eventLatency: Nanoseconds = 0,
             kmsLike: Bool = false, frames: Int = 240, injectLate: [Int: Int] = [:]) throws -> Outcome {
        var f = FakeDisplayConfiguration(refreshHz: kmsLike ? 60.0038 : 60, seed: kmsLike ? 3 : 11)
        f.faults = faults
        f.jitter = jitter
        f.eventLatency = eventLatency
        var c = RunConfiguration()
        c.frames = frames
        c.latency = latency
        c.injectLate = injectLate
        if kmsLike {
            f.flipLatency = 500_000
            f.driftPPM = 20
            c.commitMargin = 1_000_000
        }
        let r = try PacingRun(backend: FakeDisplay(f), configuration: c)
        var o = Outcome()
        r.onFrame = { rep in
            guard rep.wasPresented else { return }
            o.dropped += rep.droppedRefreshes
            if rep.intervalRefreshes > 1 { o.repeats += rep.intervalRefreshes - 1 }
            if rep.intervalRefreshes - 1 > rep.droppedRefreshes { o.uncharged.append(rep.frameIndex) }
            if let c = rep.cause { o.causes.insert(c) }
        }
        let s = try r.run()
        #expect(s.discarded == 0)
        return o
    }

    /// A stall of the process (events held back) at every phase of a refresh, 0.3 to 2.7
    /// refreshes long, at frame latency 1, 2 and 3.
    @Test(arguments: [1, 2, 3])
    func stallsAreChargedInFull(latency: Int) throws {
        let refresh: Nanoseconds = 16_666_667
        for start in stride(from: 60, to: 64, by: 1) {
            for tenths in [3, 8, 12, 17, 27] {
                let o = try run(latency: latency, faults: [.stall(atVBlank: start, by: refresh * Nanoseconds(tenths) / 10)],
                                jitter: 50_000, eventLatency: 300_000)
                #expect(o.uncharged.isEmpty, "stall at \(start) for \(tenths)/10: frames \(o.uncharged) repeated a refresh without a drop")
                #expect(o.dropped == o.repeats, "stall at \(start) for \(tenths)/10: \(o.dropped) dropped, \(o.repeats) repeats")
            }
        }
    }

    /// Late completion events hold a latency-1 link back past the next vblank.
    @Test func lateEventsAreChargedInFull() throws {
        for by in [Nanoseconds(5_000_000), 17_000_000, 20_000_000, 34_000_000] {
            let o = try run(latency: 1, faults: [.lateEvent(submission: 50, by: by), .lateEvent(submission: 120, by: by)])
            #expect(o.uncharged.isEmpty, "late event by \(by) ns: frames \(o.uncharged) repeated a refresh without a drop")
            #expect(o.dropped == o.repeats)
        }
    }

    /// A KMS-like display (completion events 0.2 ms after the vblank, flips that need 0.5 ms to
    /// arm, jitter, drift, 1 ms commit margin). Found: at latency 3, the loop woke for its
    /// once-a-second status between a vblank and the flip's completion event, counted the flip
    /// as latching a refresh later, aimed the next frame one refresh late and charged nothing
    /// (after an injected late frame had shortened the pipeline).
    @Test(arguments: [1, 2, 3])
    func kmsLikeRunsChargeEveryRepeat(latency: Int) throws {
        let o = try run(latency: latency, faults: [], jitter: 100_000, eventLatency: 200_000, kmsLike: true,
                        frames: 600, injectLate: [100: 1, 250: 3])
        #expect(o.uncharged.isEmpty, "frames \(o.uncharged) repeated a refresh without a drop")
        #expect(o.dropped == o.repeats)
        #expect(o.repeats == 4, "beyond the 4 injected, the pacer itself repeated \(o.repeats - 4) refreshes")
    }
}
