import CadenceCore
import KMSDisplay
import Testing

/// `VRRPolicy.auto`'s rule (a rate no divisor of the fixed refresh gives) and the sweep's rates.
struct VRRPolicyTests {
    func range(_ lo: Double, _ hi: Double, _ preferred: Double) -> FrameRateRange {
        FrameRateRange(minimum: lo, maximum: hi, preferred: preferred)
    }

    @Test func autoWantsVRROnlyForARateNoDivisorGives() {
        // 144 Hz: 144, 72, 48, 36 are divisors; 90, 30 and 100 are not.
        #expect(!VRRAvailability.wantsVRR(range(0, 144, 144), refreshHz: 144))
        #expect(!VRRAvailability.wantsVRR(range(0, 144, 72), refreshHz: 144))
        #expect(!VRRAvailability.wantsVRR(range(0, 144, 48), refreshHz: 144))
        #expect(VRRAvailability.wantsVRR(range(0, 144, 90), refreshHz: 144))
        #expect(VRRAvailability.wantsVRR(range(0, 144, 30), refreshHz: 144))
        // 0.1% from a divisor is the divisor (59.94 asked on a 60.0038 Hz mode is not).
        #expect(!VRRAvailability.wantsVRR(range(0, 0, 60), refreshHz: 60.0038))
        #expect(VRRAvailability.wantsVRR(range(0, 0, 59.94), refreshHz: 60.0038))
        // No preferred rate: only when no divisor lies inside [min, max].
        #expect(!VRRAvailability.wantsVRR(.default, refreshHz: 144))
        #expect(!VRRAvailability.wantsVRR(range(60, 80, 0), refreshHz: 144))
        #expect(VRRAvailability.wantsVRR(range(90, 110, 0), refreshHz: 144))
    }

    @Test func decideFollowsThePolicy() throws {
        let vrr = VRRAvailability(range: 48...144, reason: nil)
        let none = VRRAvailability(range: nil, reason: "X-1 has no vrr_capable property")
        let r90 = range(0, 144, 90), r72 = range(0, 144, 72)
        #expect(try vrr.decide(.auto, rate: r90, modeHz: 144).range == 48...144)
        #expect(try vrr.decide(.auto, rate: r72, modeHz: 144).range == nil)
        #expect(try vrr.decide(.on, rate: r72, modeHz: 144).range == 48...144)
        #expect(try vrr.decide(.off, rate: r90, modeHz: 144).range == nil)
        let auto = try none.decide(.auto, rate: r90, modeHz: 144)
        #expect(auto.range == nil && auto.note == "VRR unavailable (X-1 has no vrr_capable property): pacing at a divisor of the fixed 144 Hz")
        #expect(try none.decide(.auto, rate: r72, modeHz: 144).note == nil)
        #expect(throws: OutputSelectionError("VRR unavailable: X-1 has no vrr_capable property")) {
            _ = try none.decide(.on, rate: r72, modeHz: 144)
        }
    }

    @Test func theSweepAsksForNineRatesAcrossTheRangeAndOneBelow() {
        #expect(VRRSweep.rates(for: 48...144) == [36, 48, 60, 72, 84, 96, 108, 120, 132, 144])
        #expect(VRRSweep.rates(for: 40...120, steps: 2) == [30, 40, 120])
    }
}
