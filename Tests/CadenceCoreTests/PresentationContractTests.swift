import Testing
@testable import CadenceCore

/// The minimum-duration table, computed by hand from the ε rule (ε = 1 µs on a display whose
/// timestamps have no jitter): n = the smallest whole number ≥ 1 with n·T ≥ d − ε.
///
///     d (ms)   60 Hz (T = 16.667 ms)       144 Hz (T = 6.944 ms)
///     16.0     15.999/16.667 = 0.96 → 1    15.999/6.944 = 2.30 → 3
///     16.7     16.699/16.667 = 1.002 → 2   2.40 → 3
///     17       1.02 → 2                    2.45 → 3
///     18       1.08 → 2                    2.59 → 3
///     33.4     33.399/16.667 = 2.004 → 3   4.81 → 5
///     34       2.04 → 3                    4.90 → 5
let minimumDurationTable: [(ms: Double, at60: Int, at144: Int)] = [
    (16.0, 1, 3), (16.7, 2, 3), (17, 2, 3), (18, 2, 3), (33.4, 3, 5), (34, 3, 5),
]

/// Runs `frames` frames presented with `present(afterMinimumDuration: d)` from a display link.
func minimumDurationRun(_ fake: FakeDisplayConfiguration, d: Nanoseconds, frames: Int = 30, latency: Int = 1,
                        commitMargin: Nanoseconds = 0) throws -> (RunSummary, [FrameReport], FramePacer) {
    var c = RunConfiguration()
    c.frames = frames
    c.minimumDuration = d
    c.latency = latency
    c.commitMargin = commitMargin
    let run = try PacingRun(backend: FakeDisplay(fake), configuration: c)
    var out: [FrameReport] = []
    run.onFrame = { out.append($0) }
    return (try run.run(), out, run.pacer)
}

@Suite struct MinimumDurationTests {
    @Test(arguments: [60.0, 144.0])
    func theTableHoldsExactly(hz: Double) throws {
        for row in minimumDurationTable {
            let d = Nanoseconds((row.ms * 1e6).rounded())
            let (s, out, pacer) = try minimumDurationRun(.init(refreshHz: hz), d: d)
            let n = hz == 60 ? row.at60 : row.at144
            #expect(pacer.timestampUncertainty == 1_000, "\(row.ms) ms at \(hz) Hz")
            #expect(s.presented == 30 && s.droppedRefreshes == 0, "\(row.ms) ms at \(hz) Hz")
            #expect(s.intervalRefreshes == ["\(n)": 29], "\(row.ms) ms at \(hz) Hz")
            // Never shown before the previous frame's actual presentation + d − ε.
            #expect(out.dropFirst().allSatisfy { $0.interval >= d - 1_000 }, "\(row.ms) ms at \(hz) Hz")
            #expect(abs(s.effectiveRateHz - hz / Double(n)) < 1e-9)
        }
    }

    /// The submit path: all frames queued at once outside any link, so each one's vblank is
    /// recomputed from its predecessor's actual presentation when it is submitted; the
    /// predecessor of every other frame is shown a refresh late (its flip event arrives late).
    @Test(arguments: [60.0, 144.0])
    func theSubmitPathCountsFromTheActualPresentation(hz: Double) throws {
        for row in minimumDurationTable {
            let d = Nanoseconds((row.ms * 1e6).rounded())
            var f = FakeDisplayConfiguration(refreshHz: hz)
            f.queueCapacity = 4
            let p = try FramePacer(backend: FakeDisplay(f))
            var out: [FrameReport] = []
            p.onFrameCompleted = { out.append($0) }
            try p.present(intent: .nextOpportunity, frameIndex: 0, renderStart: 0, renderEnd: 0)
            for i in 1...4 { try p.present(intent: .afterMinimumDuration(d), frameIndex: i, renderStart: 0, renderEnd: 0) }
            try p.drain(until: p.now() + 2_000_000_000)
            let n = hz == 60 ? row.at60 : row.at144
            #expect(out.count == 5 && out.allSatisfy { $0.outcome == .onTime }, "\(row.ms) ms at \(hz) Hz")
            #expect(out.dropFirst().map(\.intervalRefreshes) == [n, n, n, n], "\(row.ms) ms at \(hz) Hz")
        }
    }

    /// Just above one refresh: within ε it is one refresh, beyond ε two.
    @Test(arguments: [60.0, 144.0])
    func justAboveOneRefresh(hz: Double) throws {
        let period = 1e9 / hz
        for (extra, n) in [(Nanoseconds(500), 1), (Nanoseconds(999), 1), (Nanoseconds(1_500), 2), (Nanoseconds(5_000), 2)] {
            let d = Nanoseconds(period.rounded(.up)) + extra
            let (s, _, _) = try minimumDurationRun(.init(refreshHz: hz), d: d)
            #expect(s.intervalRefreshes == ["\(n)": 29], "T + \(extra) ns at \(hz) Hz")
        }
        // Exactly two refreshes (rounded to the ns either way) is two refreshes, never three.
        for d in [Nanoseconds((2 * period).rounded(.down)), Nanoseconds((2 * period).rounded(.up))] {
            let (s, _, _) = try minimumDurationRun(.init(refreshHz: hz), d: d)
            #expect(s.intervalRefreshes == ["2": 29])
        }
    }

    /// ε is the measured jitter: ±10 µs timestamps give residuals of up to 20 µs, well under the
    /// cap; a minimum duration T + 5 µs is then within ε (one refresh), T + 30 µs is not.
    @Test func epsilonIsTheMeasuredJitter() throws {
        var f = FakeDisplayConfiguration(refreshHz: 60, seed: 5)
        f.jitter = 10_000
        let t = Nanoseconds((1e9 / 60).rounded(.up))
        let (a, out, pacer) = try minimumDurationRun(f, d: t + 5_000, frames: 200)
        #expect(pacer.measuredJitter > 5_000 && pacer.measuredJitter <= 20_000)
        #expect(pacer.timestampUncertainty == pacer.measuredJitter)
        // The first frames come before much is measured (ε starts at its 1 µs floor).
        let late = out.dropFirst(20)
        #expect(late.allSatisfy { $0.intervalRefreshes == 1 })
        #expect(a.droppedRefreshes == 0)
        let (b, _, _) = try minimumDurationRun(f, d: t + 30_000, frames: 200)
        #expect(b.intervalRefreshes == ["2": 199])
    }

    /// ε never exceeds 0.5% of a refresh (83.3 µs at 60 Hz) however noisy the timestamps.
    @Test func epsilonIsCappedAtHalfAPercentOfARefresh() throws {
        var f = FakeDisplayConfiguration(refreshHz: 60, seed: 2)
        f.jitter = 300_000
        let t = Nanoseconds((1e9 / 60).rounded(.up))
        let (_, inside, pacer) = try minimumDurationRun(f, d: t + 80_000, frames: 200)
        #expect(pacer.measuredJitter > 83_333)
        #expect(pacer.timestampUncertainty == 83_333)
        #expect(inside.dropFirst(20).allSatisfy { $0.intervalRefreshes == 1 })
        let (s, _, _) = try minimumDurationRun(f, d: t + 90_000, frames: 200)
        #expect(s.intervalRefreshes == ["2": 199])
    }

    @Test func theUncertaintyRule() {
        var u = TimestampUncertainty()
        #expect(u.epsilon(refreshInterval: 1e9 / 60) == 1_000)
        u.record(-400)
        #expect(u.measuredJitter == 400 && u.epsilon(refreshInterval: 1e9 / 60) == 1_000)
        u.record(50_000)
        #expect(u.epsilon(refreshInterval: 1e9 / 60) == 50_000)
        #expect(u.epsilon(refreshInterval: 1e9 / 144) == 34_722)
        // The window forgets: 64 small residuals later the 50 µs one is gone.
        for _ in 0..<TimestampUncertainty.window { u.record(2_000) }
        #expect(u.measuredJitter == 2_000)
        u.reset()
        #expect(u.measuredJitter == 0 && u.observations == 0)
        #expect(TimestampUncertainty.refreshes(forMinimumDuration: 0, refreshInterval: 1e9 / 60, epsilon: 1_000) == 1)
    }

    /// VRR: time-based; the flip is not committed before the previous presentation + d − ε, also
    /// when the commit margin would commit earlier.
    @Test(arguments: [Nanoseconds(0), 2_000_000])
    func vrrHoldsTheCommit(margin: Nanoseconds) throws {
        for ms in [16.0, 16.7, 18.0, 34.0] {
            let d = Nanoseconds(ms * 1e6)
            let (s, out, _) = try minimumDurationRun(.init(refreshHz: 144, vrrRange: 48...144), d: d, commitMargin: margin)
            #expect(s.presented == 30)
            for r in out.dropFirst() {
                #expect(r.interval >= d - 1_000, "\(ms) ms, margin \(margin)")
                #expect(r.interval == d - 1_000, "\(ms) ms, margin \(margin): \(r.interval)")
            }
        }
    }
}

@Suite struct PresentAtContractTests {
    func present(_ intents: [PresentIntent], refresh: Double, vrr: ClosedRange<Double>? = nil, margin: Nanoseconds = 0) throws -> [FrameReport] {
        let p = try FramePacer(backend: FakeDisplay(.init(refreshHz: refresh, vrrRange: vrr)))
        p.commitMargin = margin
        var out: [FrameReport] = []
        p.onFrameCompleted = { out.append($0) }
        for (i, intent) in intents.enumerated() {
            try p.present(intent: intent, frameIndex: i, renderStart: p.now(), renderEnd: p.now())
            try p.drain(until: p.now() + 2_000_000_000)
        }
        return out
    }

    @Test func theDefaultIsNearest() {
        #expect(PresentIntent.at(5) == .at(5, nearest: true))
    }

    /// 50 Hz: vblanks every 20 ms exactly from t0 = 1 s (sequence 1000).
    @Test func notBeforeAllowsOnlyEpsilon() throws {
        let t0: Nanoseconds = 1_000_000_000
        let r = try present([.at(t0 + 60_000_500, nearest: false), .at(t0 + 100_001_500, nearest: false),
                             .at(t0 + 139_999_000, nearest: false)], refresh: 50)
        #expect(r.map(\.sequence) == [1_003, 1_006, 1_007])
        #expect(r.allSatisfy { $0.outcome == .onTime })
    }

    @Test func nearestTiesGoToTheLaterVBlank() throws {
        let t0: Nanoseconds = 1_000_000_000
        // 50 ms is exactly between 40 and 60 ms; 105 ms is nearer 100; 129 ms nearer 120.
        let r = try present([.at(t0 + 50_000_000), .at(t0 + 105_000_000), .at(t0 + 129_000_000)], refresh: 50)
        #expect(r.map(\.sequence) == [1_003, 1_005, 1_006])
        let nb = try present([.at(t0 + 50_000_000, nearest: false), .at(t0 + 105_000_000, nearest: false)], refresh: 50)
        #expect(nb.map(\.sequence) == [1_003, 1_006])
    }

    /// VRR with a 2 ms commit margin: "nearest" commits a margin early (shown then, on a panel
    /// that flips at once), "not before" is never shown before t − ε. (48–144 Hz from 1 s: the
    /// panel repeats at 1.0208 s and 1.0417 s; t − 2 ms = 1.030 s is free to flip at.)
    @Test func vrrNotBeforeHoldsTheCommit() throws {
        let t = Nanoseconds(1_032_000_000)
        let near = try present([.at(t)], refresh: 144, vrr: 48...144, margin: 2_000_000)
        let notBefore = try present([.at(t, nearest: false)], refresh: 144, vrr: 48...144, margin: 2_000_000)
        #expect(near[0].presentedTime == t - 2_000_000)
        #expect(notBefore[0].presentedTime == t - 1_000)
    }
}
