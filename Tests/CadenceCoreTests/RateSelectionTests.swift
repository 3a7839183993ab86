import Testing
@testable import CadenceCore

@Suite struct RateSelectionTests {
    func fixed(_ refresh: Double, _ lo: Double, _ hi: Double, _ pref: Double) -> EffectiveRate {
        EffectiveRate.select(for: FrameRateRange(minimum: lo, maximum: hi, preferred: pref), refreshHz: refresh)
    }

    @Test func issueExamplesAt60() {
        #expect(fixed(60, 10, 60, 26).hz == 30)
        #expect(fixed(60, 10, 60, 35).hz == 30)
        #expect(fixed(60, 40, 60, 0).hz == 60)
        #expect(fixed(60, 0, 0, 0).hz == 60)
        #expect(fixed(60, 10, 60, 26).refreshesPerFrame == 2)
    }

    @Test func tiesGoToTheHigherRate() {
        // 45 is 15 from both 30 and 60.
        #expect(fixed(60, 0, 60, 45).hz == 60)
        // 25 is 5 from both 20 and 30.
        #expect(fixed(60, 0, 60, 25).hz == 30)
    }

    @Test func noDivisorInsideNeverGoesBelowTheMinimum() {
        // 60 Hz: divisors 60, 30, 20…; 35…50 holds none: 30 is nearer (5 below) but below the
        // minimum the content accepts; 60 is at or above it.
        #expect(fixed(60, 35, 50, 40).hz == 60)
        // 42…50: 30 is 12 below, 60 is 10 above.
        #expect(fixed(60, 42, 50, 0).hz == 60)
        // Above the refresh: the refresh itself.
        #expect(fixed(60, 90, 120, 100).hz == 60)
    }

    @Test func at5994() {
        let r = 60_000.0 / 1001
        #expect(fixed(r, 0, 0, 0).hz == r)
        #expect(fixed(r, 10, 60, 30).hz == r / 2)
        #expect(fixed(r, 10, 60, 30).refreshesPerFrame == 2)
        // 60 exactly is not a divisor of 59.94; the range 60…60 holds none, the nearest is 59.94.
        #expect(fixed(r, 60, 60, 60).hz == r)
        #expect(fixed(r, 0, 30, 24).hz == r / 3)  // 19.98 is 4.02 away, 29.97 is 5.97
    }

    @Test func at144() {
        #expect(fixed(144, 0, 0, 0).hz == 144)
        #expect(fixed(144, 10, 60, 26).hz == 24)      // 24 (2) beats 28.8 (2.8)
        #expect(fixed(144, 30, 80, 60).hz == 72)      // 72 and 48 are both 12 away: the higher wins
        #expect(fixed(144, 30, 80, 50).hz == 48)
        #expect(fixed(144, 100, 144, 120).hz == 144)
    }

    /// The rule of CadenceCore.docc/PacingModel.md, row by row: inside the range the divisor nearest to the
    /// preferred rate (ties to the higher); no divisor inside: never below the minimum when a
    /// divisor at or above it exists.
    @Test(arguments: [
        // refresh, min, max, preferred, expected Hz
        (144.0, 80.0, 120.0, 120.0, 144.0),  // no divisor in 80…120: 144, not 72 (below 80)
        (144, 90, 100, 95, 144),             // none in 90…100: 144
        (144, 0, 0, 120, 144),               // 144 (24 away) beats 72 (48)
        (144, 0, 0, 100, 72),                // 72 (28 away) beats 144 (44)
        (60, 0, 0, 26, 30),                  // 30 (4) beats 20 (6)
        (60, 0, 0, 35, 30),                  // 30 (5) beats 60 (25)
        (60, 0, 0, 45, 60),                  // 60 and 30 both 15 away: the higher
        (60, 26, 26, 26, 30),                // none in 26…26: the lowest at or above 26 is 30
        (60, 35, 35, 35, 60),                // none in 35…35: 60
        (60, 45, 45, 45, 60),
        (60, 90, 120, 100, 60),              // the range above the display: the refresh itself
        (60, 200, 240, 240, 60),
        (60, 0.2, 0.5, 0.5, 1),              // below 1 Hz: the lowest divisor, 1 Hz
        (60, 13, 14, 13.5, 15),              // none in 13…14: 15, not 12
    ])
    func ruleTable(_ row: (Double, Double, Double, Double, Double)) {
        let (refresh, lo, hi, p, want) = row
        #expect(fixed(refresh, lo, hi, p).hz == want, "\(lo):\(hi):\(p) on \(refresh) Hz")
    }

    @Test func vrrExactInsideAndLFCBelow() {
        let vrr = 48.0...144.0
        func v(_ lo: Double, _ hi: Double, _ p: Double) -> EffectiveRate {
            EffectiveRate.select(for: FrameRateRange(minimum: lo, maximum: hi, preferred: p), refreshHz: 144, vrr: vrr)
        }
        #expect(v(0, 0, 0) == EffectiveRate(hz: 144, refreshesPerFrame: 1, isVariable: true))
        #expect(v(0, 0, 97.5) == EffectiveRate(hz: 97.5, refreshesPerFrame: 1, isVariable: true))
        #expect(v(0, 0, 59.94).hz == 59.94)
        #expect(v(0, 100, 0).hz == 100)
        #expect(v(0, 0, 30) == EffectiveRate(hz: 30, refreshesPerFrame: 2, isVariable: true))
        #expect(v(0, 0, 20) == EffectiveRate(hz: 20, refreshesPerFrame: 3, isVariable: true))
        #expect(v(0, 0, 200).hz == 144)
    }

    /// Property test over seeded random ranges on several refresh rates.
    @Test(arguments: [60.0, 60_000.0 / 1001, 120, 144, 240])
    func fixedRulesHoldForRandomRanges(refresh: Double) {
        var g = SplitMix64(seed: UInt64(refresh * 1000))
        for _ in 0..<2000 {
            let a = Double(g.next() % 3000) / 10, b = Double(g.next() % 3000) / 10
            let lo = min(a, b), hi = max(a, b)
            let pref = g.next() % 3 == 0 ? 0 : lo + (hi - lo) * Double(g.next() % 1000) / 1000
            let r = fixed(refresh, lo, hi, pref)
            let n = r.refreshesPerFrame
            #expect(abs(r.hz - refresh / Double(n)) < 1e-9)
            let divisors = (1...Int(refresh.rounded(.up))).map { refresh / Double($0) }
            let inside = divisors.filter { $0 >= lo && $0 <= hi }
            if inside.isEmpty {
                // Never below the minimum when a divisor at or above it exists: the lowest such;
                // else (the whole range above the refresh) the refresh itself.
                let above = divisors.filter { $0 >= lo }
                #expect(r.hz == (above.min() ?? refresh))
            } else {
                #expect(r.hz >= lo && r.hz <= hi)
                if pref == 0 {
                    #expect(r.hz == inside.max())
                } else {
                    let best = inside.map { abs($0 - pref) }.min()!
                    #expect(abs(abs(r.hz - pref) - best) < 1e-9)
                    // Ties to the higher rate.
                    let tied = inside.filter { abs(abs($0 - pref) - best) < 1e-9 }
                    #expect(r.hz >= tied.max()! - 1e-9)
                }
            }
        }
    }

    @Test func parsingAndValidation() throws {
        #expect(try FrameRateRange(parsing: "10:60:26") == FrameRateRange(minimum: 10, maximum: 60, preferred: 26))
        #expect(try FrameRateRange(parsing: "30:60") == FrameRateRange(minimum: 30, maximum: 60, preferred: 0))
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: "60:30:45") }
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: "10:60:70") }
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: "-1:60:0") }
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: "ten:60:0") }
        #expect(throws: FrameRateRange.Invalid.self) { try FrameRateRange(parsing: "60") }
    }
}
