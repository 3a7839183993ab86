import CadenceCore
import PropertyBased

// Generators of pacing scenarios for the property tests. Every scenario is built from small
// integers (zip of integer generators), so that PropertyBased's shrinker can shrink it: towards
// the first refresh in the list, latency 1, fewer frames, the default range, fewer late frames.
//
// Shared, as a symbolic link, by CadenceCoreTests, KMSDisplayTests and CadenceReportTests.

enum PacingGen {
    /// The fixed refreshes scenarios run on.
    static let refreshes: [Double] = [60, 30, 48, 59.94, 75, 120, 144]
    /// Rates people ask for (content and preferred rates).
    static let commonRates: [Double] = [24, 25, 30, 23.976, 29.97, 48, 50, 59.94, 60, 72, 90, 100, 120, 144]

    /// A valid range (rates ≥ 1 Hz) on `refreshHz` from integer knobs: `kind` picks the shape,
    /// `a`, `b`, `c` the values (tenths of Hz, or divisor indices).
    static func range(kind: Int, _ a: Int, _ b: Int, _ c: Int, refreshHz: Double) -> FrameRateRange {
        let x = Double(a) / 10, y = Double(b) / 10, z = Double(c) / 10
        switch kind {
        case 1:   // preferred only
            return FrameRateRange(minimum: 0, maximum: 0, preferred: max(1, x))
        case 2:   // min:max:preferred from three values
            let v = [max(1, x), max(1, y), max(1, z)].sorted()
            return FrameRateRange(minimum: v[0], maximum: v[2], preferred: c % 3 == 0 ? 0 : v[1])
        case 3:   // one exact rate, as `p:p:p`
            let p = max(1, x)
            return FrameRateRange(minimum: p, maximum: p, preferred: p)
        case 4:   // a divisor asked for exactly, maybe with a range around it
            let p = refreshHz / Double(1 + a % 12)
            return FrameRateRange(minimum: b % 2 == 0 ? 0 : p * 0.9, maximum: 0, preferred: p)
        case 5:   // exactly between two divisors: a tie, the higher rate wins
            let n = Double(1 + a % 8)
            return FrameRateRange(minimum: 0, maximum: 0, preferred: (refreshHz / n + refreshHz / (n + 1)) / 2)
        case 6:   // a range with no divisor inside, or above the display
            let lo = max(1, x)
            return FrameRateRange(minimum: lo, maximum: lo + Double(b % 40) / 10, preferred: 0)
        case 7:   // a common rate
            let p = commonRates[a % commonRates.count]
            return FrameRateRange(minimum: 0, maximum: 0, preferred: p)
        default:
            return .default
        }
    }

    /// Places the lateness `ks` after frame `latency`, each far enough after the previous one
    /// that the late frames do not overlap (latency + K + 2 frames and `gaps` more), within
    /// `frames` (the last frame is never late); what does not fit is left out.
    static func injectLate(_ ks: [Int], gaps: [Int], latency: Int, frames: Int) -> [Int: Int] {
        var out: [Int: Int] = [:]
        var next = latency + 1
        for (i, k) in ks.enumerated() {
            let f = next + (i < gaps.count ? gaps[i] : 0)
            guard f < frames - 1 else { break }
            out[f] = k
            next = f + latency + k + 2
        }
        return out
    }

    /// A minimum duration (ns) from µs and extra ns, moved 5 µs off a whole number of refreshes
    /// + ε (where the contract's rounding is within `guardNs` of either answer).
    static func minimumDuration(us: Int, ns: Int, refreshHz: Double, guardNs: Double) -> Nanoseconds {
        var d = Double(us) * 1_000 + Double(ns)
        let period = 1e9 / refreshHz
        let x = (d - ReferenceModel.epsilonFloor) / period
        if abs(x - x.rounded()) * period < guardNs { d += 5_000 }
        return Nanoseconds(d)
    }

    /// The knobs of one scenario.
    struct Knobs: Sendable {
        var refresh: Int, latency: Int, frames: Int, mode: Int
        var range: (Int, Int, Int, Int)
        var param: (Int, Int)
        var late: [Int], gaps: [Int]
        var noise: (Int, Int, Int, Int)
    }

    /// Builds a scenario from knobs. `refreshes` are the rates to pick from; `noisy` allows drift
    /// and jitter (on link and content modes without lateness); `guardNs` keeps minimum durations
    /// that far from the rounding edge.
    ///
    /// Injected lateness under a minimum duration longer than the link's frame is left out unless
    /// `lateUnderLongMinimumDuration` (the pacer does not make such a frame miss K vblanks: see
    /// `PacingPropertyTests.lateFramesUnderAMinimumDurationLongerThanTheLinksFrame`), and at
    /// latency 3 only the first late frame is kept unless `severalLateAtLatency3` (a later one
    /// can be blamed on the scheduler: `PacingPropertyTests.severalLateFramesAtLatency3`). Content
    /// rates get drift without jitter unless `jitteryContent`
    /// (`PacingPropertyTests.contentFramesOnAJitteryDisplayAreOnTime`), and never more jitter
    /// than ε's cap.
    static func scenario(_ k: Knobs, refreshes: [Double] = refreshes, noisy: Bool, guardNs: Double = 20,
                         maxRefreshes: Int = 1_200, lateUnderLongMinimumDuration: Bool = false,
                         severalLateAtLatency3: Bool = false, jitteryContent: Bool = false) -> PacingScenario {
        var s = PacingScenario()
        s.refreshHz = refreshes[k.refresh % refreshes.count]
        s.latency = k.latency
        let mode = noisy ? (k.mode % 2 == 0 ? 0 : 2) : k.mode % 3
        switch mode {
        case 1:
            let d = minimumDuration(us: k.param.0 % 60_000, ns: k.param.1 % 1_000, refreshHz: s.refreshHz, guardNs: guardNs)
            s.mode = .minimumDuration(d)
            s.range = range(kind: k.range.0, k.range.1, k.range.2, k.range.3, refreshHz: s.refreshHz)
            // A link slower than the minimum duration asks for, or a link at the refresh.
            let m = ReferenceModel.refreshesPerFrame(for: s.range, refreshHz: s.refreshHz)
            if m > 1 && ReferenceModel.minimumDurationRefreshes(d, period: 1e9 / s.refreshHz) > m { s.range = .default }
        case 2:
            // Up to the refresh, and not below an eighth of it.
            let raw = k.param.0 % 2 == 0 ? commonRates[k.param.1 % commonRates.count] : Double(k.param.1 % 1_440 + 10) / 10
            s.mode = .content(min(s.refreshHz, max(s.refreshHz / 8, raw)))
        default:
            s.range = range(kind: k.range.0, k.range.1, k.range.2, k.range.3, refreshHz: s.refreshHz)
        }
        // Short runs: at most about `maxRefreshes` refreshes.
        let perFrame: Int
        switch s.mode {
        case .link: perFrame = ReferenceModel.refreshesPerFrame(for: s.range, refreshHz: s.refreshHz)
        case .minimumDuration(let d):
            perFrame = max(ReferenceModel.refreshesPerFrame(for: s.range, refreshHz: s.refreshHz),
                           ReferenceModel.minimumDurationRefreshes(d, period: 1e9 / s.refreshHz))
        case .content(let r): perFrame = Int((s.refreshHz / r).rounded(.up))
        }
        s.frames = max(20, min(k.frames, maxRefreshes / perFrame))
        if noisy && k.noise.0 % 4 != 0 {
            s.driftPPM = k.noise.0 % 2 == 1 ? Double(k.noise.1 % 1_001 - 500) : 0
            s.jitter = k.noise.0 % 4 >= 2 ? Nanoseconds(k.noise.2 % 51) * 1_000 : 0
            s.seed = UInt64(k.noise.3)
        }
        if s.isNoisy, !jitteryContent, s.mode.isContent { s.jitter = 0 }
        // Content ties are promised within ε's cap (0.5% of a refresh): a timestamp jitter above
        // it (50 µs at 120 or 144 Hz) can resolve neighbouring ties on either side.
        if s.mode.isContent {
            let cap = Nanoseconds(1e9 / s.refreshHz * TimestampUncertainty.capFraction) / 1_000 * 1_000
            s.jitter = min(s.jitter, cap)
        }
        if !s.isNoisy, s.mode.isLateCapable, lateUnderLongMinimumDuration || !s.minimumDurationOutrunsTheLink {
            let ks = s.latency == 3 && !severalLateAtLatency3 ? Array(k.late.prefix(1)) : k.late
            s.injectLate = injectLate(ks, gaps: k.gaps, latency: s.latency, frames: s.frames)
        }
        return s
    }

    /// Knobs for scenarios of `frames` frames.
    static func knobs(frames: ClosedRange<Int>) -> Generator<Knobs, some SendableSequenceType> {
        zip(
            zip(Gen.int(in: 0...20), Gen.int(in: 1...3), Gen.int(in: frames), Gen.int(in: 0...5)),
            zip(Gen.int(in: 0...7), Gen.int(in: 0...3000), Gen.int(in: 0...3000), Gen.int(in: 0...3000)),
            zip(Gen.int(in: 0...100_000), Gen.int(in: 0...100_000)),
            Gen.int(in: 1...6).array(of: 0...3),
            Gen.int(in: 0...40).array(of: 0...3),
            zip(Gen.int(in: 0...7), Gen.int(in: 0...100_000), Gen.int(in: 0...100_000), Gen.int(in: 0...1_000_000))
        ).map { t in
            Knobs(refresh: t.0.0, latency: t.0.1, frames: t.0.2, mode: t.0.3, range: t.1, param: t.2, late: t.3, gaps: t.4, noise: t.5)
        }
    }
}

extension PacingScenario {
    /// `present(afterMinimumDuration:)` holds frames longer than the link's frame: the frame's
    /// vblank is later than its callback's target.
    var minimumDurationOutrunsTheLink: Bool {
        guard case .minimumDuration(let d) = mode else { return false }
        return ReferenceModel.minimumDurationRefreshes(d, period: 1e9 / refreshHz)
            > ReferenceModel.refreshesPerFrame(for: range, refreshHz: refreshHz)
    }
}

extension PacingScenario.Mode {
    var isContent: Bool {
        if case .content = self { return true }
        return false
    }

    /// Modes the model predicts injected lateness for (content frames keep their own times).
    var isLateCapable: Bool {
        if case .content = self { return false }
        return true
    }
}
