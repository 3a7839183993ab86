import CadenceCore

// A reference model of the pacing contracts (CadenceCore.docc/PacingModel.md), written from
// their text and table and not from the pacer's code: small, slow and obviously correct. Given
// a scenario it says, for every frame, the vblank (relative to the first frame's) it must be
// shown at, its dropped refreshes and its cause. Fixed refresh here; variable refresh (VRR, LFC)
// in ReferenceModelVRR.swift (CadenceCoreTests).
//
// This file is shared, as a symbolic link, by CadenceCoreTests, KMSDisplayTests and
// CadenceReportTests: it imports CadenceCore only.

/// One run to predict: a fixed-refresh display, a display link and how it presents.
struct PacingScenario: Equatable, Sendable, CustomStringConvertible {
    /// How every frame is presented.
    enum Mode: Equatable, Sendable {
        /// `present()`: at the link's target.
        case link
        /// `present(afterMinimumDuration:)`.
        case minimumDuration(Nanoseconds)
        /// `present(at: t0 + k / rate, nearest: false)` (``RunConfiguration/contentRate``).
        case content(Double)
    }

    var refreshHz: Double = 60
    var range: FrameRateRange = .default
    var latency: Int = 1
    var frames: Int = 120
    var mode: Mode = .link
    /// Frame → K: that frame misses exactly K vblanks.
    var injectLate: [Int: Int] = [:]
    /// The display's real period is the nominal one times (1 + ppm / 10⁶).
    var driftPPM: Double = 0
    /// Kernel timestamps are off the true vblank by up to ± this (ns).
    var jitter: Nanoseconds = 0
    var seed: UInt64 = 0

    /// Drift or jitter: the model allows a tolerance of jitter + 0.5 % of a refresh.
    var isNoisy: Bool { driftPPM != 0 || jitter != 0 }

    func runConfiguration(commitMargin: Nanoseconds = 0) -> RunConfiguration {
        var c = RunConfiguration()
        c.frames = frames
        c.latency = latency
        c.range = range
        c.injectLate = injectLate
        c.commitMargin = commitMargin
        switch mode {
        case .link: break
        case .minimumDuration(let d): c.minimumDuration = d
        case .content(let r): c.contentRate = r
        }
        return c
    }

    var fakeDisplay: FakeDisplayConfiguration {
        var f = FakeDisplayConfiguration(refreshHz: refreshHz, seed: seed)
        f.driftPPM = driftPPM
        f.jitter = jitter
        return f
    }

    var description: String {
        var s = "\(refreshHz) Hz, range \(range.minimum):\(range.maximum):\(range.preferred), latency \(latency), \(frames) frames"
        switch mode {
        case .link: break
        case .minimumDuration(let d): s += ", minimum duration \(d) ns"
        case .content(let r): s += ", content \(r) Hz"
        }
        if !injectLate.isEmpty { s += ", late " + injectLate.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",") }
        if driftPPM != 0 { s += ", drift \(driftPPM) ppm" }
        if jitter != 0 { s += ", jitter \(jitter) ns (seed \(seed))" }
        return s
    }
}

enum ReferenceModel {
    /// ε on a display whose timestamps have no jitter: the 1 µs resolution of a page-flip event.
    static let epsilonFloor: Double = 1_000

    // MARK: The rate rule (fixed refresh)

    /// The refreshes per frame n of the rate refresh/n a link with `range` runs at, from
    /// PacingModel.md: among the divisors inside [minimum, maximum] (maximum 0: no upper bound)
    /// the one nearest to `preferred`, ties to the higher rate (`preferred` 0: the highest);
    /// none inside: the lowest divisor at or above the minimum; none at or above it: the refresh.
    /// Modelled for rates of at least 1 Hz (below that the contract says nothing).
    static func refreshesPerFrame(for range: FrameRateRange, refreshHz: Double) -> Int {
        // Every divisor of at least ~0.5 Hz: enough for any range whose rates are ≥ 1 Hz.
        let divisors = (1...Int((2 * refreshHz).rounded(.up))).map { (n: $0, hz: refreshHz / Double($0)) }
        let upper = range.maximum == 0 ? Double.infinity : range.maximum
        let inside = divisors.filter { range.minimum <= $0.hz && $0.hz <= upper }
        if !inside.isEmpty {
            if range.preferred == 0 { return inside.max { $0.hz < $1.hz }!.n }
            // Nearest to preferred; on a tie the higher rate (the smaller n).
            var best = inside[0]
            for d in inside {
                let dd = abs(d.hz - range.preferred), bd = abs(best.hz - range.preferred)
                if dd < bd || (dd == bd && d.hz > best.hz) { best = d }
            }
            return best.n
        }
        let atOrAbove = divisors.filter { $0.hz >= range.minimum }
        if let lowest = atOrAbove.min(by: { $0.hz < $1.hz }) { return lowest.n }
        return 1
    }

    /// `present(afterMinimumDuration: d)` on a fixed refresh of period `period`: the smallest
    /// n ≥ 1 with n × period ≥ d − ε.
    static func minimumDurationRefreshes(_ d: Nanoseconds, period: Double, epsilon: Double = epsilonFloor) -> Int {
        var n = 1
        while Double(n) * period < Double(d) - epsilon { n += 1 }
        return n
    }

    // MARK: Per-frame predictions

    /// What one frame must become.
    struct Expectation: Equatable, Sendable {
        /// The vblanks (relative to frame 0's) it may be shown at: one, or two where a content
        /// time sits within the tolerance of a vblank.
        var vblanks: ClosedRange<Int>
        var droppedRefreshes: Int
        var cause: DropCause?
    }

    /// Where the first frame landed, which content-rate predictions are relative to.
    struct Origin {
        /// The true time of frame 0's vblank minus t0 (its target), ns: 0 on a display whose
        /// timestamps have no error, else known from the display's own grid.
        var vblankMinusT0: Double = 0
        /// How far a computed time may be off in either direction besides the contract's
        /// tolerance (rounding to the ns; flip timestamps in whole µs on KMS).
        var slop: Double = 20
    }

    /// Frame i's expectation, for every frame of `s`.
    static func expectations(for s: PacingScenario, origin: Origin = .init()) -> [Expectation] {
        let nominal = 1e9 / s.refreshHz
        let truePeriod = nominal * (1 + s.driftPPM / 1e6)
        let m = refreshesPerFrame(for: s.range, refreshHz: s.refreshHz)
        switch s.mode {
        case .link, .minimumDuration:
            var n = m
            if case .minimumDuration(let d) = s.mode { n = max(m, minimumDurationRefreshes(d, period: nominal)) }
            // Each frame n refreshes after the previous shown one; a frame K late is shown K
            // refreshes after its target (K dropped refreshes, one event, render-late) and the
            // link keeps its cadence from it.
            var out: [Expectation] = []
            var v = 0
            for i in 0..<s.frames {
                let k = s.injectLate[i] ?? 0
                v += (i == 0 ? 0 : n) + k
                out.append(Expectation(vblanks: v...v, droppedRefreshes: k, cause: k > 0 ? .renderLate : nil))
            }
            return out
        case .content(let rate):
            // Content frame k is due at t0 + k/rate, shown at the first vblank at or after that
            // time − ε; nothing is dropped. With drift or jitter: within jitter + 0.5 % of a refresh.
            let below: Double, above: Double
            if s.isNoisy {
                let tolerance = Double(s.jitter) + 0.005 * nominal + origin.slop
                (below, above) = (tolerance, tolerance)
            } else {
                (below, above) = (epsilonFloor + origin.slop, -epsilonFloor + origin.slop)
            }
            // The first vblank j ≥ 0 whose time (relative to t0) is at or after `t`.
            func firstVBlank(atOrAfter t: Double) -> Int {
                var j = max(0, Int(((t - origin.vblankMinusT0) / truePeriod).rounded(.down)) - 1)
                while origin.vblankMinusT0 + Double(j) * truePeriod < t { j += 1 }
                return j
            }
            return (0..<s.frames).map { k in
                let due = Double(contentTime(frame: k, rate: rate))
                let lo = firstVBlank(atOrAfter: due - below), hi = firstVBlank(atOrAfter: due + above)
                return Expectation(vblanks: lo...max(lo, hi), droppedRefreshes: 0, cause: nil)
            }
        }
    }

    /// Content frame k's time relative to t0, in whole ns.
    static func contentTime(frame k: Int, rate: Double) -> Nanoseconds {
        Nanoseconds((Double(k) * 1e9 / rate).rounded())
    }

    // MARK: Comparing a run with the model

    /// Every way `reports` and `summary` differ from the model's prediction for `s` (empty when
    /// they agree). `trueVBlankTime` gives a sequence's true vblank time when the display's grid
    /// is known (the fake display's); nil: frame 0's vblank is taken to be at its target.
    /// `checkOutcomes` false leaves out each frame's outcome and cause and the summary's causes
    /// (the vblank, the dropped refreshes and every other total are still checked).
    static func mismatches(_ s: PacingScenario, reports: [FrameReport], summary: RunSummary,
                           trueVBlankTime: ((UInt64) -> Double)? = nil, slop: Double = 20,
                           checkOutcomes: Bool = true) -> [String] {
        var out: [String] = []
        let byFrame = Dictionary(reports.map { ($0.frameIndex, $0) }, uniquingKeysWith: { a, _ in a })
        guard reports.count == s.frames, byFrame.count == s.frames, let first = byFrame[0] else {
            return ["\(reports.count) reports for \(s.frames) frames"]
        }
        var origin = Origin(slop: slop)
        if case .content(let rate) = s.mode {
            guard case .at(let t0, false) = first.intent else { return ["frame 0's intent is \(first.intent)"] }
            if let v = trueVBlankTime { origin.vblankMinusT0 = v(first.sequence) - Double(t0) }
            for i in 0..<s.frames {
                let want = t0 + contentTime(frame: i, rate: rate)
                if byFrame[i]?.intent != .at(want, nearest: false) {
                    out.append("frame \(i): intent \(String(describing: byFrame[i]?.intent)), want at(\(want), nearest: false)")
                }
            }
        }
        let expected = expectations(for: s, origin: origin)
        let s0 = Int64(bitPattern: first.sequence)
        // Content faster than the panel's real rate (content at the refresh on a panel running
        // slow) gains on the vblanks and must drop a frame to catch up (PacingModel.md, "Content
        // ahead of the panel"). Where the frames sit in a chain of ties (each at the later of the
        // two vblanks its time is tied to, the earlier one taken by the frame before), the
        // catch-up comes as the chain ends: a tied frame is discarded, with no cause, and the
        // frames after it are shown at their own vblanks. Each frame's vblank is within the
        // tolerance either way; which tied frame goes is the jitter's, not the contract's, to
        // say (PacingPropertyTests.contentTiesStillFoundOnAJitteryDisplay, D).
        var catchUps = 0
        var ahead = false
        if case .content(let rate) = s.mode {
            ahead = s.isNoisy && rate > s.refreshHz / (1 + s.driftPPM / 1e6)
        }
        for (i, e) in expected.enumerated() {
            guard let r = byFrame[i] else { continue }
            let catchUp = r.outcome == .discarded && r.cause == nil && r.presentedTime == 0
            if ahead && e.vblanks.count > 1 && catchUp {
                catchUps += 1
                continue
            }
            let v = Int(Int64(bitPattern: r.sequence) - s0)
            let outcome = r.outcome == (e.droppedRefreshes > 0 ? .late : .onTime) && r.cause == e.cause
            if !r.wasPresented || !e.vblanks.contains(v) || r.droppedRefreshes != e.droppedRefreshes || (checkOutcomes && !outcome) {
                let want = e.vblanks.count == 1 ? "\(e.vblanks.lowerBound)" : "\(e.vblanks)"
                out.append("frame \(i): \(r.outcome.rawValue) at vblank \(v), \(r.droppedRefreshes) dropped, cause \(r.cause?.rawValue ?? "nil"); want vblank \(want), \(e.droppedRefreshes) dropped, cause \(e.cause?.rawValue ?? "nil")")
            }
        }
        let late = s.injectLate.filter { $0.key < s.frames }
        let dropped = late.values.reduce(0, +)
        let causes = late.isEmpty ? [:] : [DropCause.renderLate.rawValue: late.count]
        let presented = s.frames - catchUps
        if summary.frames != s.frames || summary.presented != presented || summary.unconfirmed != 0
            || summary.discarded != catchUps || summary.failed != 0 || summary.droppedRefreshes != dropped
            || summary.dropEvents != late.count || (checkOutcomes && summary.causes != causes) {
            out.append("summary: \(summary.frames) frames, \(summary.presented) presented, \(summary.unconfirmed) unconfirmed, \(summary.discarded) discarded, \(summary.failed) failed, \(summary.droppedRefreshes) dropped in \(summary.dropEvents), causes \(summary.causes); want \(presented) presented (\(catchUps) discarded to catch up), \(dropped) dropped in \(late.count), causes \(causes)")
        }
        return out
    }
}
