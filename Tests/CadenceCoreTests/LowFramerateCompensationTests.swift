import Testing

@testable import CadenceCore

/// ``LowFramerateCompensation`` by itself: known answers worked out by hand.
@Suite struct LowFramerateCompensationTests {
    /// The fewest repeats that reach the minimum, as the rate is written: the rate rule's cases
    /// (`VRRPacingPropertyTests.theFewestRepeatsAsTheRateIsWritten`) through the one helper.
    @Test func theFewestRepeatsThatReachTheMinimum() {
        let cases: [(rate: Double, minimum: Double, repeats: Int)] = [
            (1.4 + 0.2, 48, 30),
            (40.0 / 3, 40, 3),
            (47, 48, 2),
            (30, 48, 2),
            (48 - 1e-14, 48, 1),
            (48, 48, 1),
            (90, 48, 1)
        ]
        for c in cases {
            let k = LowFramerateCompensation.fewestRepeats(rate: c.rate, minimum: c.minimum, slack: 1e-12)
            #expect(k == c.repeats, "\(c.rate) Hz on a \(c.minimum) Hz minimum: \(k)")
        }
        // Without the slack, 1.5999999999999999 Hz as stored needs 31.
        #expect(LowFramerateCompensation.fewestRepeats(rate: 1.4 + 0.2, minimum: 48, slack: 0) == 31)
        // 625 ms (1.6 Hz) on 48–144 Hz: 30 refreshes of 20.83 ms, not 31.
        #expect(LowFramerateCompensation(range: 48...144).refreshes(forFrameDuration: 625_000_000) == 30)
    }

    /// Issue 21: a frame's repeats are spread over the time it has left until the next frame is
    /// due, from its refresh (late or not).
    @Test func repeatsFitTheTimeAFrameHasLeft() {
        let lfc = LowFramerateCompensation(range: 48...144)
        // 42.1 Hz (23.75 ms) on 48–144 Hz, on time: one repeat half-way, rounded up.
        #expect(lfc.repeatStart(1, frameStart: 0, frameEnd: 23_752_969) == 11_876_485)
        #expect(lfc.repeatStart(2, frameStart: 0, frameEnd: 23_752_969) == nil)
        // Shown 5.1 ms late: 18.65 ms left, which the panel holds (its longest refresh is 20.83
        // ms): no repeat. Spread over the whole frame from the late refresh, it came at 17 ms,
        // 6.7 ms before the next frame, less than the panel's shortest refresh (6.94 ms).
        #expect(lfc.repeatStart(1, frameStart: 5_100_000, frameEnd: 23_752_969) == nil)
        // 25 Hz (40 ms) shown 6 ms late: 34 ms left, two refreshes of 17 ms.
        #expect(lfc.repeatStart(1, frameStart: 0, frameEnd: 40_000_000) == 20_000_000)
        #expect(lfc.repeatStart(1, frameStart: 6_000_000, frameEnd: 40_000_000) == 23_000_000)
        // 10 Hz (100 ms, 5 refreshes of 20 ms) shown 6 ms late: 94 ms left, still 5 of 18.8 ms.
        #expect(lfc.repeatStart(4, frameStart: 6_000_000, frameEnd: 100_000_000) == 81_200_000)
        #expect(lfc.repeatStart(5, frameStart: 6_000_000, frameEnd: 100_000_000) == nil)
        // The next frame already due, or past: no repeat.
        #expect(lfc.repeatStart(1, frameStart: 40_000_000, frameEnd: 40_000_000) == nil)
        #expect(lfc.repeatStart(1, frameStart: 41_000_000, frameEnd: 40_000_000) == nil)
        // 30 Hz on 40–60 Hz: two refreshes of 16.67 ms, the panel's shortest. Shown 3 ms late,
        // 30.33 ms left: two even refreshes would be shorter than the shortest, so the repeat
        // comes at the shortest refresh (the next frame as soon as the panel allows).
        let narrow = LowFramerateCompensation(range: 40...60)
        #expect(narrow.repeatStart(1, frameStart: 0, frameEnd: 33_333_333) == 16_666_667)
        #expect(narrow.repeatStart(1, frameStart: 3_000_000, frameEnd: 33_333_333) == 19_666_667)
        #expect(narrow.repeatStart(2, frameStart: 3_000_000, frameEnd: 33_333_333) == nil)
    }
}
