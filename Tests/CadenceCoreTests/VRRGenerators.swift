import CadenceCore
import PropertyBased

/// Generators of VRR scenarios, from small integers (so that they shrink).
enum VRRGen {
    /// Panels' VRR ranges seen in the wild.
    static let panels: [ClosedRange<Double>] = [48...144, 40...60, 30...120, 48...240, 40...165]
    /// Rates people ask for, fractional ones too.
    static let rates: [Double] = [24, 23.976, 25, 29.97, 30, 47.952, 48, 50, 59.94, 60, 72, 90, 100, 119.88, 120, 144]

    struct Knobs: Sendable {
        var panel: Int, kind: Int, a: Int, b: Int, c: Int
        var latency: Int, frames: Int
        var late: [Int], gaps: [Int]
        var drift: Int, ppm: Int
        /// Timed frames (``timedScenario(_:)``): 0–3 a content rate, 4–7 a minimum duration.
        var intent: Int = 0, intentValue: Int = 0
    }

    static func knobs(frames: ClosedRange<Int>) -> Generator<Knobs, some SendableSequenceType> {
        zip(
            zip(
                Gen.int(in: 0...9), Gen.int(in: 0...9), Gen.int(in: 0...3000), Gen.int(in: 0...3000),
                Gen.int(in: 0...3000)),
            zip(Gen.int(in: 1...3), Gen.int(in: frames)),
            Gen.int(in: 1...6).array(of: 0...3),
            Gen.int(in: 0...40).array(of: 0...3),
            zip(Gen.int(in: 0...3), Gen.int(in: 0...1000), Gen.int(in: 0...7), Gen.int(in: 0...10_000))
        ).map { t in
            Knobs(
                panel: t.0.0, kind: t.0.1, a: t.0.2, b: t.0.3, c: t.0.4, latency: t.1.0, frames: t.1.1,
                late: t.2, gaps: t.3, drift: t.4.0, ppm: t.4.1, intent: t.4.2, intentValue: t.4.3)
        }
    }

    /// A scenario: a panel, a rate inside its range, a common (maybe fractional) one, one below
    /// its minimum (LFC, or a rate it cannot show evenly), its maximum, or the fixed-refresh
    /// generator's range shapes; latency 1–3; injected lateness K 1–6 at random frames; drift.
    static func scenario(_ k: Knobs) -> VRRScenario {
        var s = VRRScenario()
        s.vrr = panels[k.panel % panels.count]
        let (lo, hi) = (s.vrr.lowerBound, s.vrr.upperBound)
        switch k.kind {
        case 0, 1:  // a rate inside the panel's range, in tenths of Hz
            let p = lo + Double(k.a % Int((hi - lo) * 10 + 1)) / 10
            s.range = FrameRateRange(minimum: 0, maximum: 0, preferred: p)
        case 2:  // a common rate, maybe with the content's range up to it
            let p = rates[k.a % rates.count]
            s.range = FrameRateRange(minimum: 0, maximum: k.b % 2 == 0 ? 0 : p, preferred: p)
        case 3, 4:  // below the panel's minimum, down to 1 Hz: LFC, or a rate it cannot show evenly
            let p = max(1, Double(k.a % Int(lo * 10)) / 10)
            s.range = FrameRateRange(minimum: 0, maximum: k.b % 3 == 0 ? p + Double(k.c % 100) / 10 : 0, preferred: p)
        case 5:
            s.range = .default
        default:
            s.range = PacingGen.range(kind: k.kind, k.a, k.b, k.c, refreshHz: hi)
        }
        s.latency = k.latency
        let rate = ReferenceModel.vrrRate(for: s.range, panel: s.vrr)
        // At most about 8 s of virtual time.
        s.frames = max(12, min(k.frames, Int(8 * rate.hz)))
        s.injectLate = PacingGen.injectLate(k.late, gaps: k.gaps, latency: s.latency, frames: s.frames)
        // Drift (±500 ppm), but only where each refresh (the frame, or its LFC repeats) is 0.2 %
        // inside the panel's range: at its edge the panel's real range no longer holds it (not
        // modelled, see ReferenceModelVRR.swift).
        let refreshes = rate.hz * Double(rate.repeats)
        if k.drift == 1 && refreshes >= lo * 1.002 && refreshes <= hi / 1.002 { s.driftPPM = Double(k.ppm - 500) }
        return s
    }

    /// A scenario of timed frames: ``scenario(_:)``'s panel, link rate (inside the panel's range or
    /// below it: LFC), latency and injected lateness, without drift, and either a content rate
    /// (`present(at:)`, not before) from 0.1 fps up to the link's rate exactly, a common one at
    /// or below it, or the link's rate itself; or a minimum duration from just above the panel's
    /// shortest refresh to 2.5 of its longest, its edges (2 µs inside either) included. Content
    /// runs have injected lateness at latency 1 only (see below).
    static func timedScenario(_ k: Knobs) -> VRRScenario {
        var s = scenario(k)
        s.driftPPM = 0
        let link = ReferenceModel.vrrRate(for: s.range, panel: s.vrr).hz
        let shortest = 1e9 / s.vrr.upperBound, longest = 1e9 / s.vrr.lowerBound
        let v = Double(k.intentValue) / 10_000
        var seconds = 0.0
        switch k.intent {
        case 0:  // anywhere from 0.1 fps to the link's rate
            s.contentRate = max(0.1, (link * v * 1000).rounded() / 1000)
        case 1:  // a common rate at or below the link's
            let common = rates.filter { $0 <= link }
            s.contentRate = common.isEmpty ? link : common[k.intentValue % common.count]
        case 2:  // the link's rate exactly
            s.contentRate = link
        case 3:  // half of it
            s.contentRate = link / 2
        case 4:  // just above the panel's shortest refresh
            s.minimumDuration = Nanoseconds(shortest.rounded(.up)) + 2_000
        case 5:  // just below its longest
            s.minimumDuration = Nanoseconds(longest.rounded(.down)) - 2_000
        default:  // anywhere from its shortest refresh to 2.5 of its longest
            s.minimumDuration = Nanoseconds((shortest + v * (2.5 * longest - shortest)).rounded())
        }
        // Content at the panel's maximum has no slack after a frame 0 that met the panel's own
        // refresh at the start (latency 2–3): each frame after it is pushed and the pacer
        // discards frames to catch up (not modelled under VRR): 5 % below it at most.
        if let c = s.contentRate { s.contentRate = min(c, s.vrr.upperBound / 1.05) }
        if let c = s.contentRate {
            seconds = 1 / c
        } else if let d = s.minimumDuration {
            seconds = max(Double(d) / 1e9, 1 / link)
        }
        // At most about 8 s of virtual time.
        s.frames = max(12, min(k.frames, Int(8 / seconds)))
        s.injectLate = PacingGen.injectLate(k.late, gaps: k.gaps, latency: s.latency, frames: s.frames)
        // Content runs have injected lateness at latency 1 only: at latency 2–3 a newer frame can
        // be due before a late one is shown, and the pacer discards the older (not modelled under
        // VRR). At latency 1 the link catches up with the content clock after the late frame
        // (`VRRPacingPropertyTests.contentAfterALateFrameCatchesUp`).
        if s.contentRate != nil && s.latency > 1 { s.injectLate = [:] }
        return s
    }
}
