import CadenceCore
import CadenceSession
import DRM
import KMSDisplay
import PropertyBased
import Testing

/// `present(at:)` (a content rate) and minimum-duration frames on a VRR panel, on KMS over the
/// fake `amdgpu-vrr` device against the VRR fake display (issue 21). The reference model does
/// not model these intents under VRR (ReferenceModelVRR.swift), so the two displays are held to
/// each other: the fake display's panel starts a refresh when a flip is committed, KMS's 100 µs
/// (its response) after, which the 100 µs commit margin covers. Every frame's outcome, cause,
/// dropped frame intervals and lateness must agree. Before `vrrCommitNotBefore` KMS held such
/// a frame until its time itself, so every one was shown the response late.
@Suite struct KMSVRRIntentPropertyTests {
    /// A run on a 48–144 Hz panel: a content rate or a minimum duration, a link rate, latency.
    struct Case: Sendable, CustomStringConvertible {
        var contentRate: Double?
        var minimumDuration: Nanoseconds?
        var linkHz: Double
        var latency: Int
        var frames: Int
        var injectLate: [Int: Int] = [:]

        func configuration() -> RunConfiguration {
            var c = RunConfiguration()
            c.frames = frames
            c.latency = latency
            c.range = FrameRateRange(minimum: 0, maximum: 144, preferred: linkHz)
            c.contentRate = contentRate
            c.minimumDuration = minimumDuration
            c.injectLate = injectLate
            return c
        }

        var description: String {
            var s = contentRate.map { "content \($0) fps" } ?? "min-duration \(minimumDuration ?? 0) ns"
            s += ", link \(linkHz) Hz, latency \(latency), \(frames) frames"
            if !injectLate.isEmpty {
                s +=
                    ", late "
                    + injectLate.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
            }
            return s
        }
    }

    /// The frames of `c` on KMS over the fake `amdgpu-vrr` device (commit margin 100 µs, as
    /// `cadence run` uses under VRR).
    static func onKMS(_ c: Case) throws -> [FrameReport] {
        let fake = try FakeDRMProfileFile.load("amdgpu-vrr").makeDevice(wallClock: false, seed: 0)
        let config = c.configuration()
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), vrr: .on, rate: config.range)
        var k = config
        k.commitMargin = display.recommendedCommitMargin
        let run = try PacingRun(backend: display, configuration: k)
        var reports: [FrameReport] = []
        run.onFrame = { reports.append($0) }
        _ = try run.run()
        try display.close()
        return reports
    }

    /// The frames of `c` on the VRR fake display (48–144 Hz, commit margin 0).
    static func onFake(_ c: Case) throws -> [FrameReport] {
        var f = FakeDisplayConfiguration(refreshHz: 144)
        f.vrrRange = 48...144
        let run = try PacingRun(backend: FakeDisplay(f), configuration: c.configuration())
        var reports: [FrameReport] = []
        run.onFrame = { reports.append($0) }
        _ = try run.run()
        return reports
    }

    /// Where the two runs part: outcome, cause, dropped frame intervals and lateness (within
    /// 2 µs: KMS flip timestamps are whole µs, truncated), and intervals within the commit margin
    /// more (a late frame's render ends, and it is handed over, the margin sooner on KMS, whose
    /// deadline is the margin before its time, and the link's cadence goes on from that
    /// handover: a 6.95 ms minimum duration on an 82 Hz link at latency 2, frame 4 two refreshes
    /// late, put frame 6 19 µs sooner after frame 5 on KMS), from the first frame after
    /// frame `latency` whose predecessor both displays showed on time and at the same interval
    /// (within that tolerance) after its own. The first frames can meet
    /// a refresh the panel made on its own before the first commit (PacingModel.md), and the
    /// panel's phase then differs: the fake display's starts at the run's start, KMS's at its
    /// probe flip's refresh, about 40 µs (the event latency) before the first callback. A 1 Hz
    /// link at latency 2 put frame 0 exactly 48 of the fake panel's longest refreshes after its
    /// start, on time there, and 40 µs after one on KMS, held a refresh (6.90 ms late), as the
    /// model says for each phase; a frame shown late that way pushes the next ones while they
    /// come sooner than the panel's shortest refresh after it (111.2 fps content on a 92.5 Hz
    /// link at latency 2: frame 3 11 µs late on the fake display only), and a minimum duration
    /// shorter than the link's frame shows the frames after such a frame at that duration, on
    /// time, until the link's cadence catches up (7.017 ms on a 96 Hz link at latency 2: frame 0
    /// late on KMS only, frames 1 and 2 7.016 ms apart there, frame 3 10.313 ms after frame 2
    /// against 10.417 ms on the fake display).
    static func differences(_ c: Case) throws -> [String] {
        let kms = try onKMS(c), fake = try onFake(c)
        guard kms.count == fake.count else { return ["\(kms.count) frames on KMS, \(fake.count) on the fake display"] }
        var out: [String] = []
        let onTime = { (r: FrameReport) in r.outcome == .onTime && r.droppedRefreshes == 0 }
        // In phase: the predecessor was on time on both, shown at the same distance from its own
        // predecessor (a frame 0 late on one display only moves the minimum-duration frames
        // after it, which are on time at their own later times: see the doc comment).
        let inPhase = { (i: Int) in
            onTime(kms[i]) && onTime(fake[i]) && abs(kms[i].interval - fake[i].interval) <= 102_000
        }
        guard let from = (c.latency + 1..<kms.count).first(where: { inPhase($0 - 1) }) else {
            return []
        }
        var skipInterval = false
        let longest = Nanoseconds(1e9 / 48)
        for (k, f) in zip(kms[from...], fake[from...]) {
            // A frame shown longer than the panel's longest refresh after the one before (a late
            // frame's) made either panel refresh on its own or repeat the frame, planned from
            // commit intervals that part by the commit margin (see the test below): compared up
            // to there.
            if k.interval > longest || f.interval > longest { break }
            // A frame handed over less than the commit margin before its time (content faster
            // than the link: its time falls behind the callbacks) cannot be shown at that time
            // on KMS, where the panel refreshes 100 µs after a commit, and can on the fake
            // display: content 1.1 fps on a 1 Hz link, frame 11's time was its callback's.
            // Compared from the frame after it.
            if k.targetTime &- 100_000 < k.renderEnd {
                skipInterval = true
                continue
            }
            defer { skipInterval = false }
            // A discarded frame has no presentation to be late by (content faster than the link
            // discards frames on both: 108.4 fps on a 106.2 Hz link, latency 2, frame 7).
            let shown = { (r: FrameReport) in r.outcome == .onTime || r.outcome == .late }
            let lateK = shown(k) ? k.presentedTime - k.targetTime : 0
            let lateF = shown(f) ? f.presentedTime - f.targetTime : 0
            if k.outcome != f.outcome || k.cause != f.cause || k.droppedRefreshes != f.droppedRefreshes
                || abs(lateK - lateF) > 2_000 || (!skipInterval && abs(k.interval - f.interval) > 102_000)
            {
                out.append(
                    "frame \(k.frameIndex): KMS \(k.outcome) \(k.cause?.rawValue ?? "-") \(k.droppedRefreshes) late \(lateK) ns interval \(k.interval); "
                        + "fake \(f.outcome) \(f.cause?.rawValue ?? "-") \(f.droppedRefreshes) late \(lateF) ns interval \(f.interval)"
                )
            }
        }
        return out
    }

    /// Random content rates (48–144 fps) and minimum durations (6.95–20.8 ms) on links of
    /// 48–144 Hz, latency 1–2 (the fake device has 3 buffers), injected lateness at a random
    /// frame of the minimum-duration runs: every rate inside the panel's range, where no frame is
    /// repeated.
    ///
    /// Not compared: rates below the panel's 48 Hz. There each frame is repeated, planned from the
    /// last two commit intervals (``LowFramerateCompensation``, amdgpu's rule), and the two
    /// displays part where those intervals do: KMS commits a late frame when it is handed over,
    /// not the commit margin before its time, so the interval after it is 100 µs short, the
    /// frame's last repeat is planned that much early and the next frame waits a refresh for it
    /// (a 1 Hz link with a 6.95 ms minimum duration, frame 4 late: frame 6 6.85 ms late on KMS);
    /// and the fake display, whose minimum-duration frames are committed at their time, showed
    /// frames 3–5 of a 79.2 ms minimum duration on an 11.9 Hz link at latency 2 about 6 ms late
    /// where KMS showed them on time. The model (ReferenceModelVRR.swift) predicts both sides,
    /// each from its own panel phase and commit margin: the fake display's frame 2 commit
    /// interval was 83.324 ms, under four of the panel's longest refreshes, KMS's 83.364 ms; and
    /// KMS's 100 µs shorter interval after the late frame 4 made frame 6 6.85 ms late there
    /// (`VRRPacingPropertyTests` holds the fake display to the model).
    @Test func contentAndMinimumDurationFramesAgreeOnKMSAndTheFakeDisplay() async {
        let input = zip(
            Gen.int(in: 0...1), Gen.int(in: 480...1440), Gen.int(in: 6_950...20_833), Gen.int(in: 480...1440),
            Gen.int(in: 1...2), Gen.int(in: 12...90), zip(Gen.int(in: 0...3), Gen.int(in: 1...4)))
        await propertyCheck(count: 200, input: input) { kind, content, minUs, link, latency, frames, late in
            var c = Case(linkHz: Double(link) / 10, latency: latency, frames: frames)
            if kind == 0 {
                c.contentRate = Double(content) / 10
            } else {
                c.minimumDuration = Nanoseconds(minUs) * 1_000
            }
            // Lateness in content runs is left out, as in the model's property
            // (VRRPacingPropertyTests): after a late frame at latency 2–3 the frame aimed at the
            // panel's shortest refresh after it can tie with the next content frame's time (115.2
            // fps on a 115.2 Hz link, frame 4 two refreshes late: 1 ns apart), and the fake
            // display then shows the newer (frame 5 discarded) where KMS, 100 µs later, shows
            // both. The contract's catch-up under VRR is not implemented yet (PacingModel.md).
            if kind == 1 && late.0 > 0 && frames > 6 { c.injectLate = [3 + late.0: late.1] }
            let d = try Self.differences(c)
            #expect(d.isEmpty, "\(c.description): \(d.count) frames differ: \(d.prefix(3).joined(separator: "; "))")
        }
    }

    /// The two reproductions: 24 fps content at 63.36 Hz and a 30 ms minimum duration (below the
    /// panel's 48 Hz, so KMSDisplay repeats each frame) showed 60 late frames in 60 and 119 in 120
    /// on KMS. No frame is late now, as on the fake display; the intervals are exact.
    @Test(arguments: [(24.0, nil), (nil, 30_000_000)] as [(Double?, Nanoseconds?)])
    func contentAndMinimumDurationFramesAreOnTimeOnKMSVRR(content: Double?, minimum: Nanoseconds?) throws {
        let c = Case(contentRate: content, minimumDuration: minimum, linkHz: 63.36, latency: 1, frames: 120)
        let kms = try Self.onKMS(c)
        let late = kms.filter { $0.outcome != .onTime || $0.droppedRefreshes > 0 }.map(\.frameIndex)
        #expect(kms.count == 120 && late.isEmpty, "\(c): late frames \(late)")
        let want: Nanoseconds = content.map { Nanoseconds((1e9 / $0).rounded()) } ?? minimum!
        let off = kms.dropFirst().map { abs($0.interval - want) }.max() ?? 0
        // Whole-µs flip timestamps: an interval is off by at most 1 µs.
        #expect(off <= 1_000, "\(c): an interval is \(off) ns from \(want)")
        #expect(try Self.differences(c).isEmpty, "\(c)")
    }

    /// The two open observations, settled by the reference model (ReferenceModelVRR.swift): each
    /// display follows it from its own panel phase and commit margin. KMS's panel phase is read
    /// from frame 0, which met the panel's own refresh (shown its shortest refresh after it, the
    /// refreshes before it its longest apart); the model then predicts every KMS frame within
    /// the flip timestamps' whole µs. A 79.2 ms minimum duration on an 11.9 Hz link at latency 2:
    /// nothing late after frame 0 on KMS (frame 2's
    /// commit interval 83.364 ms, five of the panel's refreshes), frames 3–5 late on the fake
    /// display (83.324 ms, four; `VRRPacingPropertyTests` holds that side). A 6.95 ms minimum
    /// duration on a 1 Hz link, frame 4 late: frame 6 6.85 ms late on KMS (the late frame is
    /// committed at its handover, the commit interval after it the 100 µs margin short), on time
    /// on the fake display.
    @Test func theModelPredictsKMSInItsOwnPhase() throws {
        let cases: [(VRRScenario, Double, late: [Int])] = [
            (
                VRRScenario(
                    vrr: 48...144, range: .init(minimum: 0, maximum: 144, preferred: 11.9), latency: 2, frames: 12,
                    minimumDuration: 79_200_000), 11.9, [0]
            ),
            (
                VRRScenario(
                    vrr: 48...144, range: .init(minimum: 0, maximum: 144, preferred: 1), latency: 1, frames: 10,
                    injectLate: [4: 1], minimumDuration: 6_950_000), 1, [0, 4, 6]
            )
        ]
        for (s, hz, late) in cases {
            let c = Case(
                minimumDuration: s.minimumDuration, linkHz: hz, latency: s.latency, frames: s.frames,
                injectLate: s.injectLate)
            let kms = try Self.onKMS(c)
            try #require(kms.count == s.frames && kms[0].outcome == .late)
            // The panel's own refreshes, its longest refresh apart, back to the last one before the
            // first callback (the refresh the run starts from).
            var start = Double(kms[0].presentedTime) - (1e9 / 144).rounded()
            while start > Double(kms[0].callbackTimestamp) { start -= (1e9 / 48).rounded(.up) }
            var handovers: [Int: Double] = [:]
            for i in s.injectLate.keys { handovers[i] = Double(kms[i].renderEnd) }
            let e = ReferenceModel.expectations(
                for: s, firstTarget: Double(kms[0].targetTime), panelStart: start,
                commitMargin: 100_000, response: 100_000, handovers: handovers)
            for (r, x) in zip(kms, e) {
                #expect(
                    abs(Double(r.presentedTime) - x.shown) <= 1_000 && abs(Double(r.targetTime) - x.target) <= 1_000,
                    "\(c) frame \(r.frameIndex): KMS target \(r.targetTime) shown \(r.presentedTime), model \(x)")
            }
            let kmsLate = kms.filter { $0.outcome == .late }.map(\.frameIndex)
            #expect(
                kmsLate == late && e.enumerated().filter { $0.element.late }.map(\.offset) == late, "\(c): \(kmsLate)")
        }
    }
}
