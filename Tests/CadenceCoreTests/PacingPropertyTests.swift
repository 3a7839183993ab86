import PropertyBased
import Testing
@testable import CadenceCore

/// Runs `s` with the real ``PacingRun`` over a ``FakeDisplay`` on virtual time.
func runOnFakeDisplay(_ s: PacingScenario) throws -> (RunSummary, [FrameReport]) {
    let run = try PacingRun(backend: FakeDisplay(s.fakeDisplay), configuration: s.runConfiguration())
    var reports: [FrameReport] = []
    reports.reserveCapacity(s.frames)
    run.onFrame = { reports.append($0) }
    return (try run.run(), reports)
}

/// The true time of a fake display's vblank `sequence` (its grid: the first vblank at
/// `startTime` with `startSequence`, then one every nominal period × (1 + drift)).
func fakeVBlankTime(_ f: FakeDisplayConfiguration) -> (UInt64) -> Double {
    let period = 1e9 / f.refreshHz * (1 + f.driftPPM / 1e6)
    return { seq in Double(f.startTime) + Double(Int64(bitPattern: seq &- f.startSequence)) * period }
}

/// Runs `s` on the fake display and expects the model's answer.
func expectTheModel(_ s: PacingScenario, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let (summary, reports) = try runOnFakeDisplay(s)
    let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary, trueVBlankTime: fakeVBlankTime(s.fakeDisplay))
    #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))", sourceLocation: sourceLocation)
}

/// Property-based tests of the pacing contracts: the real pacer against ``ReferenceModel`` on
/// random scenarios (fixed refresh; VRR: `VRRPacingPropertyTests`).
@Suite struct PacingPropertyTests {
    /// Every frame's vblank, dropped refreshes and cause, and the summary's totals, on a
    /// jitter-free fake display: rates and ranges, latency 1–3, injected lateness, minimum
    /// durations, content rates.
    @Test func thePacerFollowsTheModelOnACleanDisplay() async {
        await propertyCheck(count: 2_500, input: PacingGen.knobs(frames: 60...200)) { k in
            let s = PacingGen.scenario(k, noisy: false)
            let (summary, reports) = try runOnFakeDisplay(s)
            let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary)
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }

    /// Drift (±500 ppm) and timestamp jitter (≤ 50 µs): links and content rates drop nothing,
    /// each frame at the first vblank at or after its time within jitter + 0.5 % of a refresh.
    /// Content rates run here on drifting displays without jitter; with jitter, in
    /// `contentFramesOnAJitteryDisplayAreOnTime`.
    @Test func thePacerFollowsTheModelOnADriftingJitteryDisplay() async {
        await propertyCheck(count: 1_500, input: PacingGen.knobs(frames: 60...200)) { k in
            let s = PacingGen.scenario(k, noisy: true)
            let (summary, reports) = try runOnFakeDisplay(s)
            let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary, trueVBlankTime: fakeVBlankTime(s.fakeDisplay))
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }

    /// Content frames on a jittery (and drifting) display, jitter within ε's cap. Two frames
    /// could aim at one vblank when their times sat within ε of vblanks: the first took the
    /// later vblank (a tie decided with a smaller ε, or a fit since moved), the next the earlier,
    /// the one the first was shown at; it was reported `late` by 1 with cause `flip-late` and 0
    /// dropped refreshes, or (latency 3, both queued) the first was discarded. And at the
    /// start, with ε measured from one residual, a tie tipped by 0.3 ns sent frame 1 a vblank
    /// late and content at the refresh rate stayed a vblank behind for the whole run, leaving the
    /// model's tolerance as drift added up. The shrunk counterexamples below, each as found
    /// (before the tie tolerance and the taken-tie rule of `FramePacer.plan`):
    /// - 60 Hz, latency 1, content 59.94, jitter 17 µs, seed 30949: frame 2 late 1, flip-late;
    /// - 30 Hz, latency 2, content 30, 85 ppm, jitter 5 µs, seed 325279 (56788 the same): frames
    ///   2–59 a vblank after their own, frame 59 at 60 (model 59);
    /// - 60 Hz, latency 3, content 59.94, jitter 18 µs, seed 24988: frame 1 discarded, flip-late;
    /// - 60 Hz, latency 1, content 60, 87 ppm, jitter 3 µs, seed 361370: frame 1 predicted
    ///   0.3 ns after its vblank with ε 1.0 µs, every frame a vblank late, frame 59 at 60;
    /// - 60 Hz, latency 3, content 59.94, jitter 14 µs, seed 0: frame 1 discarded.
    @Test
    func contentTiesFoundOnAJitteryDisplay() throws {
        let found: [(Double, Int, Double, Double, Nanoseconds, UInt64)] = [
            (60, 1, 59.94, 0, 17_000, 30949), (30, 2, 30, 85, 5_000, 325279), (30, 2, 30, 85, 5_000, 56788),
            (60, 3, 59.94, 0, 18_000, 24988), (60, 1, 60, 87, 3_000, 361370), (60, 3, 59.94, 0, 14_000, 0),
        ]
        for (hz, latency, rate, ppm, jitter, seed) in found {
            var shrunk = PacingScenario(refreshHz: hz, latency: latency, frames: 60, mode: .content(rate))
            shrunk.driftPPM = ppm
            shrunk.jitter = jitter
            shrunk.seed = seed
            try expectTheModel(shrunk)
        }
    }

    /// The random property's counterexamples, each found about once in 6,000 runs (A, B: before
    /// this test; C, D: while fixing them), pinned:
    /// - A: 60 Hz, latency 3, content 60, jitter 48 µs, seed 182849: frame 8 (due 0.3 ns
    ///   before its vblank) took the later vblank of its tie, answered while ε was 25 µs and the
    ///   prediction came from one raw timestamp (off by up to the 48 µs of jitter), and frames
    ///   9 and 10 followed it a vblank late (the taken-tie rule); then frame 11's time, 4.5 µs
    ///   more than the tie tolerance before its vblank as then predicted, no longer followed, and
    ///   frames 10 and 11 were due at one vblank: one discarded (blamed flip-late). Fixed: a
    ///   chain of ties is followed while a time is within ε's cap of the taken vblank
    ///   (`FramePacer.tieMargin`), not the tie tolerance, which moves with the jitter seen;
    /// - B: 60 Hz, latency 1, content 29.97, −500 ppm, jitter 22 µs, seed 618853: frame 2 shown
    ///   at vblank 4, 105 µs or more before its time (model: 5): while ε settles a tie allowed
    ///   4× the jitter seen up to the whole cap (83 µs), and the prediction from one raw
    ///   timestamp and the nominal period was 23 µs late (its jitter plus 8.3 µs of drift).
    ///   Fixed: while ε settles, up to half the cap;
    /// - C: 60 Hz, latency 1, content 60, jitter 12 µs, seed 990161: frame 10 took the later
    ///   vblank of its tie and had been shown by the next callback, so the catch-up of content
    ///   ahead of the panel took frame 11 for a frame behind its target and passed over it.
    ///   Fixed: the taken-tie rule looks at the last shown frame when none is queued;
    /// - D: 60 Hz, latency 1, content 60, +31 ppm, jitter 34 µs, seed 623888, 172 frames: a
    ///   chain of ties from the start, the content gaining 0.5 µs a frame on the panel, ended at
    ///   frame 170 (passed over, no cause). Content faster than the panel's real rate must drop
    ///   a frame; in a chain of ties the drop comes as the chain ends, with every frame within
    ///   the tolerance. The model accepts such a catch-up discard (ReferenceModel.mismatches).
    @Test
    func contentTiesStillFoundOnAJitteryDisplay() throws {
        let found: [(Double, Int, Double, Double, Nanoseconds, UInt64, Int)] = [
            (60, 3, 60, 0, 48_000, 182849, 60), (60, 1, 29.97, -500, 22_000, 618853, 60),
            (60, 1, 60, 0, 12_000, 990161, 60), (60, 1, 60, 31, 34_000, 623888, 172)
        ]
        for (hz, latency, rate, ppm, jitter, seed, frames) in found {
            var shrunk = PacingScenario(refreshHz: hz, latency: latency, frames: frames)
            shrunk.mode = .content(rate)
            shrunk.driftPPM = ppm
            shrunk.jitter = jitter
            shrunk.seed = seed
            try expectTheModel(shrunk)
        }
    }

    /// E, found by the property below in a full-suite run at stop 29: 120 Hz, latency 1, 60
    /// frames, content 90 fps, −500 ppm, jitter 28 µs, seed 168417: frame 12 shown at vblank 16,
    /// 70.8 µs before its time (the contract allows the 28 µs of jitter plus 41.7 µs), where the
    /// model wants 17. ε had settled at its cap (41.7 µs) while vblank 16 was still predicted
    /// from one raw timestamp and the nominal refresh, 31.2 µs late. Fixed: the tie tolerance
    /// stays within half the cap until the fitted grid is established (`FramePacer.tieTolerance`).
    @Test
    func contentTieFoundAtStop29() throws {
        var s = PacingScenario(refreshHz: 120, latency: 1, frames: 60)
        s.mode = .content(90)
        s.driftPPM = -500
        s.jitter = 28_000
        s.seed = 168417
        try expectTheModel(s)
    }

    /// The same over random configurations (jitter within ε's cap). Was disabled, failing about
    /// once in 6,000 (the counterexamples above); with their fixes 3 runs of 12,000 passed.
    @Test
    func contentFramesOnAJitteryDisplayAreOnTime() async throws {
        await propertyCheck(count: 1_500, input: PacingGen.knobs(frames: 60...200)) { k in
            var k = k
            k.mode = 1
            let s = PacingGen.scenario(k, noisy: true, jitteryContent: true)
            let (summary, reports) = try runOnFakeDisplay(s)
            let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary, trueVBlankTime: fakeVBlankTime(s.fakeDisplay))
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }

    /// `injectLate` under `present(afterMinimumDuration:)` longer than the link's frame (60 Hz
    /// link, 16.668 ms: two refreshes a frame): the frame's deadline is its callback's (one
    /// refresh before the vblank the minimum duration puts it at), so rendering K − ½ refreshes
    /// past that deadline misses K − 1 vblanks or none, not K. Shrunk counterexample: 60 Hz,
    /// default range, latency 1, 60 frames, minimum duration 16 668 000 ns, frame 2 late by 1:
    /// frame 2 is on time at vblank 4 with 0 dropped refreshes (model: vblank 5, 1 dropped,
    /// render-late) and the summary has no drop (model: 1 in 1 event).
    @Test
    func lateFramesUnderAMinimumDurationLongerThanTheLinksFrame() async throws {
        try expectTheModel(PacingScenario(refreshHz: 60, latency: 1, frames: 60, mode: .minimumDuration(16_668_000), injectLate: [2: 1]))
        await propertyCheck(count: 300, input: PacingGen.knobs(frames: 60...200)) { k in
            var k = k
            k.mode = 1
            let s = PacingGen.scenario(k, noisy: false, lateUnderLongMinimumDuration: true)
            let (summary, reports) = try runOnFakeDisplay(s)
            let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary)
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }

    /// Several late frames at latency 3. After the first (frame 4, K 1, 60 Hz) the link is held
    /// back a refresh for the rest of the run (callbacks 2 refreshes before their targets, not
    /// 3); a callback's scheduler delay is then its wake minus its planned wake (target − 3
    /// refreshes) unless the previous handler ended after that planned wake, and the two differ
    /// only by the rounding of vblank times to the ns: frames 7, 8, 10 report a scheduler delay
    /// of 16.67 ms though each ran at its vblank (wakeTime == callbackTimestamp), frame 9 none.
    /// A later injected frame on such a frame is blamed `scheduler-late`, not `render-late`.
    /// Shrunk counterexample: 60 Hz, default range, latency 3, 60 frames, late 4:1 and 10:1:
    /// frame 10 is late by 1 at vblank 12 (right) with cause scheduler-late (model:
    /// render-late); summary causes [render-late: 1, scheduler-late: 1]. Late 4:1 with 11:1 or
    /// 14:1 the same; with 12:1 or 30:1 both render-late.
    @Test
    func severalLateFramesAtLatency3() async throws {
        try expectTheModel(PacingScenario(refreshHz: 60, latency: 3, frames: 60, injectLate: [4: 1, 10: 1]))
        await propertyCheck(count: 300, input: PacingGen.knobs(frames: 60...200)) { k in
            var k = k
            k.latency = 3
            k.mode = 0
            let s = PacingGen.scenario(k, noisy: false, severalLateAtLatency3: true)
            let (summary, reports) = try runOnFakeDisplay(s)
            let wrong = ReferenceModel.mismatches(s, reports: reports, summary: summary)
            #expect(wrong.isEmpty, "\(s): \(wrong.count) mismatches: \(wrong.prefix(4).joined(separator: "; "))")
        }
    }

    /// The rate rule: the model's reading of PacingModel.md against ``EffectiveRate/select(for:refreshHz:vrr:)``.
    @Test func theRateRuleIsTheModels() async {
        let input = zip(Gen.int(in: 0...20), Gen.int(in: 0...7), Gen.int(in: 0...3000), Gen.int(in: 0...3000), Gen.int(in: 0...3000))
        await propertyCheck(count: 20_000, input: input) { t in
            let hz = PacingGen.refreshes[t.0 % PacingGen.refreshes.count]
            let range = PacingGen.range(kind: t.1, t.2, t.3, t.4, refreshHz: hz)
            let n = ReferenceModel.refreshesPerFrame(for: range, refreshHz: hz)
            let e = EffectiveRate.select(for: range, refreshHz: hz)
            #expect(e.refreshesPerFrame == n && e.hz == hz / Double(n) && !e.isVariable,
                    "\(hz) Hz, \(range.minimum):\(range.maximum):\(range.preferred): \(e.hz) Hz (n \(e.refreshesPerFrame)), model n \(n)")
        }
    }
}

/// The model itself against the hand-computed answers of PacingModel.md and the known-answer tests.
@Suite struct ReferenceModelTests {
    @Test func theRuleTable() {
        let rows: [(Double, FrameRateRange, Double)] = [
            (60, .init(minimum: 0, maximum: 0, preferred: 26), 30),
            (60, .init(minimum: 0, maximum: 0, preferred: 35), 30),
            (60, .init(minimum: 0, maximum: 0, preferred: 45), 60),
            (60, .init(minimum: 26, maximum: 26, preferred: 26), 30),
            (60, .init(minimum: 35, maximum: 50, preferred: 40), 60),
            (60, .init(minimum: 90, maximum: 120, preferred: 100), 60),
            (144, .init(minimum: 80, maximum: 120, preferred: 120), 144),
            (144, .init(minimum: 90, maximum: 100, preferred: 95), 144),
            (144, .init(minimum: 0, maximum: 0, preferred: 100), 72),
            (60, .default, 60),
            (60, .init(minimum: 10, maximum: 60, preferred: 26), 30),
        ]
        for (hz, range, rate) in rows {
            #expect(hz / Double(ReferenceModel.refreshesPerFrame(for: range, refreshHz: hz)) == rate, "\(hz) Hz \(range)")
        }
    }

    /// PresentationContractTests' minimum-duration table (ε = 1 µs).
    @Test func theMinimumDurationTable() {
        for row in minimumDurationTable {
            let d = Nanoseconds((row.ms * 1e6).rounded())
            #expect(ReferenceModel.minimumDurationRefreshes(d, period: 1e9 / 60) == row.at60)
            #expect(ReferenceModel.minimumDurationRefreshes(d, period: 1e9 / 144) == row.at144)
        }
    }

    /// KnownAnswerRegressionTests / RunEndToEndTests: a frame K late adds K to one interval, the
    /// next one is the link's own; content at 24 Hz on 60 alternates 3 and 2 refreshes.
    @Test func knownAnswers() {
        var s = PacingScenario(refreshHz: 60, range: .init(minimum: 10, maximum: 10, preferred: 10), frames: 200, injectLate: [100: 4])
        var v = ReferenceModel.expectations(for: s).map(\.vblanks.lowerBound)
        var intervals = zip(v.dropFirst(), v).map { $0 - $1 }
        #expect(Dictionary(grouping: intervals, by: { $0 }).mapValues(\.count) == [6: 198, 10: 1])
        s = PacingScenario(refreshHz: 60, frames: 600, injectLate: [100: 1, 250: 3])
        let e = ReferenceModel.expectations(for: s)
        #expect(e.filter { $0.droppedRefreshes > 0 }.map(\.droppedRefreshes) == [1, 3])
        #expect(e.compactMap(\.cause) == [.renderLate, .renderLate])
        s = PacingScenario(refreshHz: 60, frames: 240, mode: .content(24))
        v = ReferenceModel.expectations(for: s).map { e -> Int in
            #expect(e.vblanks.count == 1)
            return e.vblanks.lowerBound
        }
        intervals = zip(v.dropFirst(), v).map { $0 - $1 }
        #expect(intervals.enumerated().allSatisfy { $1 == ($0 % 2 == 0 ? 3 : 2) })
    }
}
