import CadenceCore

// The reference model's variable refresh (VRR) half: the contracts of PacingModel.md's
// "Variable refresh" rate rule, low-framerate compensation (LFC) and "Under variable refresh a
// frame is judged in time", written from their text and not from the pacer's code, and as
// slow and plain as ReferenceModel.swift's fixed-refresh half. It predicts, for every frame of a
// display-link run (`present()`) on a VRR panel, the time it is shown at, whether it is late,
// its dropped frame intervals, its hitch and its cause.
//
// The panel (what the fake display promises, PacingModel.md and ``LowFramerateCompensation``):
// a flip starts a refresh when it is committed, but never sooner than the panel's shortest
// refresh (1 / its maximum Hz) after the refresh before; with no flip the panel refreshes on its
// own at its longest refresh (1 / its minimum Hz) after the last one, or, when the time the
// frame has left is longer than that, at k evenly spaced repeats of the frame over that time, k
// the fewest that keep each refresh no longer than the longest (0.1% of slack), or the shortest
// refresh apart when k even ones would be shorter than it (0.1% of slack). The time a frame has
// left runs from its flip until the next frame is due: the frame's commit plus its duration,
// the shorter of the last two commit intervals, both as known when the frame was flipped. A
// panel drifting by p ppm has every interval × (1 + p / 10⁶).
//
// The link (PacingModel.md, "Rates", "Presenting", "What counts as a drop"):
// - it runs at the VRR rule's rate r, each frame one frame interval F = 1/r after the one before
//   (F in whole ns); the first frame's target is where the run put it (taken from the run);
// - a frame is committed at its deadline (its target, less the commit margin), or when it was
//   handed over when its rendering ended later than that, and never while the frame before it
//   is still in flight (one flip at a time): shown when the panel takes that commit;
// - a frame shown more than ε (1 µs: timestamps without jitter) after its target is late: one
//   drop event, hitch = its lateness exactly, dropped frame intervals ⌈lateness / F⌉ (at least
//   1); cause render-late when its rendering ended after its deadline, else flip-late (committed
//   in time, latched late: the panel refreshed on its own meanwhile);
// - the frame after a late one keeps the link's cadence from it: aimed one frame interval after
//   the later of its predecessor's target and the time its predecessor was handed over, and no
//   sooner than the panel's shortest refresh after its predecessor was shown ("the next frame is
//   aimed no sooner than that"), at every latency; when that pushes it later than its cadence
//   and the rate is inside the panel's range it is committed as soon as its predecessor is shown
//   (the panel holds it until then).
// `injectLate` K: the frame's rendering ends K − ½ of the panel's shortest refreshes (nominal)
// after its deadline (RunConfiguration.injectLate).
//
// Timed frames (PacingModel.md, "Presenting": a content rate, `present(at:nearest: false)`, or
// `present(afterMinimumDuration: d)`):
// - the link's callbacks keep its cadence, each one frame interval after the later of the frame
//   before's own target (a minimum-duration frame's, "the frame after a late one keeps the
//   link's cadence from it"; a content frame's, its content time or the later time it was
//   aimed at: the link catches up with the content clock, "each display-link callback shows the
//   newest content frame due at or before its target") and the time the frame before was handed
//   over (frames are rendered one after another), and no sooner than the panel's shortest
//   refresh after the frame before was shown; content frame n (t0 + n / rate, t0 the first
//   frame's target) is drawn in the first callback whose target is at least its time less half
//   a frame interval (the callbacks before it, one frame interval apart, draw nothing);
// - a frame's time: its content time, or the previous frame's actual presentation (for the
//   first frame the panel's last refresh before the run) plus d less ε ("never shown before ...
//   plus the duration minus ε": the earliest it may show) and never before its callback's target; its target is that time, no sooner than the panel's shortest
//   refresh after the frame before was shown ("the next frame is aimed no sooner than that");
//   its deadline its target (or its callback's, the later) less the commit margin;
// - it is committed at the latest of: its target less the commit margin, its "not before" time
//   (content time or minimum duration, less ε) less the panel's response, its handover, and the
//   frame before being shown; the panel takes the commit as any other (LFC repeats included);
// - it is judged in time against its target, as every VRR frame.
//
// Not modelled: content faster than the link (its times fall behind the callbacks); content
// frames discarded behind a late one (a newer one due before it was shown); timestamp jitter
// (ε is not measured under VRR); drift where a refresh sits within 0.2 % of the range's edge (a
// link at the panel's maximum on a panel running slow cannot be shown at its rate, one at its
// minimum on a panel running fast cannot be held: the pacer aims by the nominal range); KMS.
// Ambiguities the model settles (PacingModel.md, "What counts as a drop", now says them): the
// frame after a late one keeps the cadence from it, not the old grid; the first frame of a run
// can meet the panel's own refresh (at latency 2–3, or below its minimum) and is late then; a
// minimum-duration frame is shown the duration less ε after the frame before (the first one:
// after the panel's last refresh before the run) and keeps the link's cadence from the frame
// before's own target; a timed frame the panel cannot show at its time behind a late frame is
// aimed at the panel's shortest refresh after it (PacingModel.md, "Presenting"); the link's
// callbacks follow the content frame before, so after a late one they catch up with the content
// clock (PacingModel.md, "Content ahead of the panel").

/// One display-link run on a VRR panel to predict.
struct VRRScenario: Equatable, Sendable, CustomStringConvertible {
    var vrr: ClosedRange<Double> = 48...144
    var range: FrameRateRange = .default
    var latency: Int = 1
    var frames: Int = 120
    /// Frame → K: that frame's rendering ends K − ½ shortest refreshes after its deadline.
    var injectLate: [Int: Int] = [:]
    /// Every interval of the panel is the nominal one × (1 + ppm / 10⁶).
    var driftPPM: Double = 0
    /// Content frame n presented `at` t0 + n / rate, not before (``RunConfiguration/contentRate``).
    var contentRate: Double? = nil
    /// Every frame presented after this minimum duration (``RunConfiguration/minimumDuration``).
    var minimumDuration: Nanoseconds? = nil

    func runConfiguration() -> RunConfiguration {
        var c = RunConfiguration()
        c.frames = frames
        c.latency = latency
        c.range = range
        c.injectLate = injectLate
        c.contentRate = contentRate
        c.minimumDuration = minimumDuration
        return c
    }

    var fakeDisplay: FakeDisplayConfiguration {
        var f = FakeDisplayConfiguration(refreshHz: vrr.upperBound)
        f.vrrRange = vrr
        f.driftPPM = driftPPM
        return f
    }

    var description: String {
        var s = "VRR \(vrr.lowerBound)–\(vrr.upperBound) Hz, range \(range.minimum):\(range.maximum):\(range.preferred)"
        s += ", latency \(latency), \(frames) frames"
        if !injectLate.isEmpty {
            let late = injectLate.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
            s += ", late " + late.joined(separator: ",")
        }
        if driftPPM != 0 { s += ", drift \(driftPPM) ppm" }
        if let c = contentRate { s += ", content \(c) fps" }
        if let d = minimumDuration { s += ", minimum duration \(d) ns" }
        return s
    }
}

extension ReferenceModel {
    // MARK: The rate rule (VRR)

    /// The rate a link with `range` runs at on a VRR panel `panel`, from PacingModel.md: the
    /// preferred rate exactly (0: the highest allowed), clamped to the range and to the panel's
    /// maximum, not below 1 Hz. A rate the panel shows evenly (inside its range, or below its
    /// minimum with some k repeats inside it) runs as it is; else the nearest rate it shows
    /// evenly, inside the content's range when one is, ties to the higher, and `requested` is
    /// the rate asked for. `repeats`: the fewest k with k × rate at or above the minimum.
    static func vrrRate(
        for range: FrameRateRange, panel: ClosedRange<Double>
    ) -> (
        hz: Double, repeats: Int, requested: Double?
    ) {
        let (lo, hi) = (panel.lowerBound, panel.upperBound)
        let upper = range.maximum > 0 ? min(range.maximum, hi) : hi
        var want = range.preferred > 0 ? range.preferred : upper
        want = min(max(want, range.minimum), upper)
        if want <= 0 { want = hi }
        want = max(want, min(1, hi))
        // The fewest repeats that reach the minimum (a hair of float slack: 40/3 × 3 is 40).
        func fewest(_ x: Double) -> Int {
            var k = 1
            while Double(k) * x < lo * (1 - 1e-12) { k += 1 }
            return k
        }
        func even(_ x: Double) -> Bool { Double(fewest(x)) * x <= hi * (1 + 1e-12) }
        if even(want) { return (want, fewest(want), nil) }
        // The rates shown evenly are the union of [lo/j, hi/j]: the nearest ones on either side.
        var below = 0.0
        var above = Double.infinity
        for j in 1...10_000 {
            let a = lo / Double(j)
            let b = hi / Double(j)
            if b < want { below = max(below, b) }
            if a > want { above = min(above, a) }
        }
        let inside = [above, below].filter { $0 >= max(range.minimum, min(1, hi)) && $0 <= upper && $0 > 0 }
        let pool = inside.isEmpty ? [above, below].filter { $0 > 0 && $0.isFinite } : inside
        var best = pool[0]
        for c in pool where abs(c - want) < abs(best - want) { best = c }
        return (best, fewest(best), want)
    }

    // MARK: The panel

    /// A VRR panel's refreshes, driven by commits (see the top of this file).
    struct VRRPanel {
        let shortest: Double
        let longest: Double
        /// The shortest refresh as the range says it (LFC spaces its repeats by it).
        let shortestExact: Double
        /// The longest refresh as the range says it (LFC's k is chosen from the range in Hz).
        let longestExact: Double
        var lastRefresh: Double
        var lastFlip: Double? = nil
        /// When the next frame is due after the frame on screen (0: no duration known), as known
        /// when it was flipped: its repeats are planned then (a later commit cannot put one back
        /// before itself).
        var flipEnd: Double = 0
        var repeatsSinceFlip = 0
        var commits: [Double] = []

        init(range: ClosedRange<Double>, driftPPM: Double, firstRefresh: Double) {
            // In whole ns (the clock's), the longest rounded up: it holds a frame up to then.
            shortestExact = 1e9 / range.upperBound * (1 + driftPPM / 1e6)
            shortest = shortestExact.rounded()
            longestExact = 1e9 / range.lowerBound * (1 + driftPPM / 1e6)
            longest = longestExact.rounded(.up)
            lastRefresh = firstRefresh
        }

        /// The shorter of the last two commit intervals (the only one after the second commit).
        var frameDuration: Double {
            let n = commits.count
            guard n >= 2 else { return 0 }
            let last = commits[n - 1] - commits[n - 2]
            return n == 2 ? last : min(last, commits[n - 2] - commits[n - 3])
        }

        /// How many refreshes `d` ns of a frame are shown for (LFC): 1 up to the longest refresh
        /// (0.1% over it too), else the fewest with none longer than the longest.
        func refreshes(forFrameDuration d: Double) -> Int {
            guard d > longestExact * 1.001 else { return 1 }
            var k = 1
            while d / Double(k) > longestExact { k += 1 }
            return k
        }

        /// When the panel refreshes next on its own.
        var nextRepeat: Double {
            var t = lastRefresh + longest
            if let flip = lastFlip, flipEnd > 0 {
                // The time the frame has left, in k even refreshes; the shortest apart when
                // those would be shorter.
                let left = flipEnd - flip
                let k = refreshes(forFrameDuration: left)
                let j = Double(repeatsSinceFlip + 1)
                let even = left / Double(k) >= shortestExact * 0.999
                // In whole ns (the clock's), rounded up: a flip committed then wins.
                let at = flip + (even ? j * left / Double(k) : j * shortestExact).rounded(.up)
                if Int(j) < k && at > lastRefresh { t = at }
            }
            return t
        }

        /// Commits a frame at `c`: returns when it is shown.
        mutating func show(committedAt c: Double) -> Double {
            // The panel's own refreshes before the commit (one exactly at it loses to the flip).
            while nextRepeat < c {
                lastRefresh = nextRepeat
                repeatsSinceFlip += 1
            }
            commits.append(c)
            while true {
                let own = nextRepeat
                let flip = max(c, lastRefresh + shortest)
                if flip <= own {
                    lastRefresh = flip
                    lastFlip = flip
                    flipEnd = frameDuration > 0 ? c + frameDuration : 0
                    repeatsSinceFlip = 0
                    return flip
                }
                lastRefresh = own
                repeatsSinceFlip += 1
            }
        }
    }

    // MARK: Per-frame predictions (VRR)

    /// What one frame on a VRR panel must become.
    struct VRRExpectation: Equatable, Sendable {
        var target: Double
        var shown: Double
        /// Shown more than ε after its target.
        var late: Bool
        /// ⌈lateness / F⌉, at least 1, when late; else 0.
        var droppedRefreshes: Int
        /// The lateness when late; else 0.
        var hitch: Double
        var cause: DropCause?
    }

    /// A frame aimed at `target` and shown at `shown`, judged in time: late by more than ε, one
    /// drop event, its hitch the lateness, ⌈lateness / `frame`⌉ dropped frame intervals (at
    /// least 1), render-late when it was handed over after its deadline, else flip-late.
    static func judged(target: Double, shown: Double, frame: Double, renderLate: Bool) -> VRRExpectation {
        let lateness = shown - target
        let late = lateness > epsilonFloor
        return VRRExpectation(
            target: target, shown: shown, late: late,
            droppedRefreshes: late ? max(1, Int((lateness / frame).rounded(.up))) : 0,
            hitch: late ? lateness : 0,
            cause: late ? (renderLate ? .renderLate : .flipLate) : nil)
    }

    /// Frame i's expectation for every frame of `s`: the first frame's target at `firstTarget`,
    /// the panel's first refresh at `panelStart`, commits `commitMargin` before the targets, each
    /// reaching the panel `response` ns after it is committed (the fake DRM device's VRR panel).
    static func expectations(
        for s: VRRScenario, firstTarget: Double, panelStart: Double, commitMargin: Double = 0, response: Double = 0,
        handovers: [Int: Double] = [:]
    ) -> [VRRExpectation] {
        let rate = vrrRate(for: s.range, panel: s.vrr).hz
        let frame = (1e9 / rate).rounded()
        let nominalShortest = 1e9 / s.vrr.upperBound
        var panel = VRRPanel(range: s.vrr, driftPPM: s.driftPPM, firstRefresh: panelStart)
        var out: [VRRExpectation] = []
        var target = firstTarget
        var previous: (target: Double, handedOver: Double, shown: Double)? = nil
        if s.contentRate != nil || s.minimumDuration != nil {
            return timedExpectations(
                for: s, frame: frame, firstTarget: firstTarget, panel: panel, commitMargin: commitMargin,
                response: response, handovers: handovers)
        }
        for i in 0..<s.frames {
            var held = false
            if let p = previous {
                let cadence = max(p.target, p.handedOver) + frame
                let soonest = p.shown + nominalShortest.rounded()
                target = max(cadence, soonest)
                held = soonest > cadence && rate >= s.vrr.lowerBound
            }
            let deadline = target - commitMargin
            var handedOver = -Double.infinity
            if let k = s.injectLate[i] { handedOver = deadline + ((Double(k) - 0.5) * nominalShortest).rounded() }
            // A frame aimed at the panel's shortest refresh after the frame before (its cadence
            // would be sooner) is committed as soon as that one is shown, the panel holding it
            // until then; not at a rate below the panel's minimum (LFC learns from the commits).
            let commit = max(held ? -.infinity : deadline, handedOver, previous?.shown ?? -.infinity)
            let shown = panel.show(committedAt: commit + response)
            out.append(judged(target: target, shown: shown, frame: frame, renderLate: handedOver > deadline))
            previous = (target, handedOver, shown)
        }
        return out
    }

    /// The expectations of a run of timed frames (a content rate or a minimum duration): see the
    /// top of this file. The callbacks are the model's own, content runs' too (they follow the
    /// frame before: the catch-up after a late one). `handovers`: frame → when a frame with
    /// injected lateness was handed over, where the run says it (its rendering ends K − ½
    /// refreshes after the deadline its callback saw, which a frame before it shown later than
    /// predicted moves later).
    static func timedExpectations(
        for s: VRRScenario, frame: Double, firstTarget: Double, panel start: VRRPanel, commitMargin: Double,
        response: Double, handovers: [Int: Double] = [:]
    ) -> [VRRExpectation] {
        var panel = start
        let shortest = (1e9 / s.vrr.upperBound).rounded()
        let lead = min(commitMargin, response)
        var out: [VRRExpectation] = []
        var callback = firstTarget
        var previous: (target: Double, handedOver: Double, shown: Double)? = nil
        for i in 0..<s.frames {
            if let p = previous {
                // The frame before's own target is the link's cadence from it (a content frame's
                // is its content time: the link catches up with the content clock), no sooner
                // than the panel's shortest refresh after it was shown.
                callback = max(max(p.target, p.handedOver) + frame, p.shown + shortest)
            }
            // Its "not before" time and its target.
            var notBefore = -Double.infinity
            var target = callback
            if let rate = s.contentRate {
                let t = firstTarget + (Double(i) * 1e9 / rate).rounded()
                // Drawn in the first callback whose target is at least t less half a frame.
                while t > callback + (frame / 2).rounded(.down) { callback += frame }
                notBefore = t
                target = t
            } else if let d = s.minimumDuration {
                // The first frame counts from the panel's last refresh before it (what was on
                // screen when the run started), as on a fixed refresh.
                notBefore = (previous?.shown ?? start.lastRefresh) + Double(d) - epsilonFloor
                target = max(callback, notBefore)
            }
            if let p = previous { target = max(target, p.shown + shortest) }
            let deadline = max(callback, target) - commitMargin
            var handedOver = previous?.handedOver ?? -Double.infinity
            if let k = s.injectLate[i] {
                let end = handovers[i] ?? deadline + ((Double(k) - 0.5) * 1e9 / s.vrr.upperBound).rounded()
                handedOver = max(handedOver, end)
            }
            let commit = max(target - commitMargin, notBefore - lead, handedOver, previous?.shown ?? -.infinity)
            let shown = panel.show(committedAt: commit + response)
            out.append(judged(target: target, shown: shown, frame: frame, renderLate: handedOver > deadline))
            previous = (target, handedOver, shown)
        }
        return out
    }

    // MARK: Comparing a run with the model (VRR)

    /// Every way `reports` and `summary` differ from the model's prediction for `s` on a panel
    /// whose first refresh was at `panelStart` (empty when they agree). Times may be off by
    /// `slop` ns (rounding); where the model's lateness is within it of ε or of a whole number of
    /// frame intervals, either answer is accepted.
    static func vrrMismatches(
        _ s: VRRScenario, reports: [FrameReport], summary: RunSummary, panelStart: Double,
        commitMargin: Double = 0, response: Double = 0, slop: Double = 20
    ) -> [String] {
        var out: [String] = []
        let byFrame = Dictionary(reports.map { ($0.frameIndex, $0) }, uniquingKeysWith: { a, _ in a })
        guard reports.count == s.frames, byFrame.count == s.frames, let first = byFrame[0] else {
            return ["\(reports.count) reports for \(s.frames) frames"]
        }
        let rate = vrrRate(for: s.range, panel: s.vrr).hz
        let frame = (1e9 / rate).rounded()
        // The summary's rate is the rate frames are intended at: the content's when slower than
        // the link, and no faster than one frame a minimum duration.
        var intended = rate
        if let c = s.contentRate { intended = min(c, rate) }
        if let d = s.minimumDuration, d > 0 { intended = min(rate, 1e9 / Double(d)) }
        if summary.effectiveRateHz != intended {
            out.append("rate \(summary.effectiveRateHz) Hz, want \(intended) Hz")
        }
        // When each late-injected timed frame was handed over (the harness's input).
        var handovers: [Int: Double] = [:]
        if s.contentRate != nil || s.minimumDuration != nil {
            for i in s.injectLate.keys { if let r = byFrame[i] { handovers[i] = Double(r.renderEnd) } }
        }
        let expected = expectations(
            for: s, firstTarget: Double(first.targetTime), panelStart: panelStart, commitMargin: commitMargin,
            response: response, handovers: handovers)
        var dropped = 0
        var events = 0
        var causes: [String: Int] = [:]
        for (i, e) in expected.enumerated() {
            guard let r = byFrame[i] else { continue }
            let lateness = e.shown - e.target
            // Near an edge, both sides.
            let lateOK: Set<Bool> = abs(lateness - epsilonFloor) <= slop ? [false, true] : [e.late]
            var droppedOK: Set<Int> = [0]
            if e.late || lateOK.contains(true) {
                droppedOK = [
                    max(1, Int(((lateness - slop) / frame).rounded(.up))),
                    max(1, Int(((lateness + slop) / frame).rounded(.up)))
                ]
                if lateOK.contains(false) { droppedOK.insert(0) }
            }
            let isLate = r.droppedRefreshes > 0
            var wrong: [String] = []
            if !r.wasPresented { wrong.append("\(r.outcome.rawValue)") }
            if Double(r.deadline) < e.target - commitMargin - slop {
                wrong.append("deadline \(Double(r.deadline) - e.target) ns from the target")
            }
            if abs(Double(r.targetTime) - e.target) > slop {
                wrong.append("target \(Double(r.targetTime) - e.target) ns off")
            }
            if abs(Double(r.presentedTime) - e.shown) > slop {
                wrong.append("shown \(Double(r.presentedTime) - e.shown) ns off")
            }
            if !droppedOK.contains(r.droppedRefreshes) {
                wrong.append("\(r.droppedRefreshes) dropped (want \(droppedOK.sorted()))")
            }
            if isLate {
                if abs(Double(r.hitch) - lateness) > slop { wrong.append("hitch \(r.hitch), want \(lateness)") }
                if r.outcome != .late { wrong.append("outcome \(r.outcome.rawValue), want late") }
                // A late render whose callback the frame before held up may be blamed on the
                // scheduler (as on a fixed refresh: PacingPropertyTests.severalLateFramesAtLatency3).
                let heldUp = e.cause == .renderLate && r.cause == .schedulerLate && r.schedulerDelay > 0
                if r.cause != e.cause && e.late && !heldUp {
                    wrong.append("cause \(r.cause?.rawValue ?? "nil"), want \(e.cause?.rawValue ?? "nil")")
                }
                dropped += r.droppedRefreshes
                events += 1
                if let c = r.cause { causes[c.rawValue, default: 0] += 1 }
            } else if r.outcome != .onTime || r.cause != nil || r.hitch != 0 {
                wrong.append(
                    "\(r.outcome.rawValue), cause \(r.cause?.rawValue ?? "nil"), hitch \(r.hitch); want on time")
            }
            if !wrong.isEmpty {
                let want = "target \(Int64(e.target)), shown \(Int64(e.shown)), late \(Int64(lateness)) ns"
                out.append("frame \(i): " + wrong.joined(separator: ", ") + " (\(want), \(e.droppedRefreshes) dropped)")
            }
        }
        if summary.frames != s.frames || summary.presented != s.frames || summary.discarded != 0
            || summary.unconfirmed != 0 || summary.failed != 0 || summary.droppedRefreshes != dropped
            || summary.dropEvents != events || summary.causes != causes
        {
            out.append(
                "summary: \(summary.presented) presented, \(summary.discarded) discarded, \(summary.unconfirmed) unconfirmed, "
                    + "\(summary.droppedRefreshes) dropped in \(summary.dropEvents), causes \(summary.causes); "
                    + "frames: \(dropped) in \(events), causes \(causes)")
        }
        return out
    }
}
