import CadenceCore

/// One step of a ``VRRSweep``: frames committed every `1/requestedHz` seconds and what the
/// panel made of them.
public struct VRRSweepStep: Equatable, Sendable {
    /// The rate asked for, Hz.
    public var requestedHz: Double
    /// `1e3 / requestedHz`.
    public var requestedIntervalMs: Double { 1e3 / requestedHz }
    /// Intervals between the measured frames' presentation timestamps (ms).
    public var achievedMeanMs: Double
    public var achievedStddevMs: Double
    /// How many intervals were measured.
    public var count: Int
    /// Mean vblank sequences per frame: 1, or k when each frame was shown k times (LFC).
    public var refreshesPerFrame: Double
    /// The mean refresh duration the panel ran at (`achievedMeanMs / refreshesPerFrame`).
    public var refreshMs: Double { refreshesPerFrame > 0 ? achievedMeanMs / refreshesPerFrame : achievedMeanMs }
    /// True when the mean interval is within 1% of the requested one.
    public var held: Bool { count > 0 && abs(achievedMeanMs - requestedIntervalMs) <= 0.01 * requestedIntervalMs }
    /// True for the step below the panel's minimum (low-framerate compensation).
    public var belowRange: Bool

    public init(requestedHz: Double, achievedMeanMs: Double, achievedStddevMs: Double, count: Int,
                refreshesPerFrame: Double, belowRange: Bool) {
        self.requestedHz = requestedHz
        self.achievedMeanMs = achievedMeanMs
        self.achievedStddevMs = achievedStddevMs
        self.count = count
        self.refreshesPerFrame = refreshesPerFrame
        self.belowRange = belowRange
    }
}

/// Measures a variable-refresh display's real range: for each requested rate, frames are
/// committed every `1/rate` seconds (after a few warm-up frames) and the intervals between their
/// presentation timestamps are reported. The rates: `steps` from the range's minimum to its
/// maximum, evenly spaced, plus one at ¾ of the minimum, where the display shows each frame for
/// whole refreshes (low-framerate compensation).
public struct VRRSweep {
    /// The rates a sweep of `range` asks for, the one below the range first.
    public static func rates(for range: ClosedRange<Double>, steps: Int = 9) -> [Double] {
        let n = Swift.max(2, steps)
        let span = range.upperBound - range.lowerBound
        return [range.lowerBound * 0.75] + (0..<n).map { range.lowerBound + span * Double($0) / Double(n - 1) }
    }

    /// Runs the sweep on `display` (which must run VRR: its `vrrRange` is the
    /// range swept), `secondsPerStep` per rate (at least 20 measured intervals). Stops early, returning the
    /// steps done, when `shouldStop` says so. Throws what the display throws.
    public static func run(on display: any DisplayBackend, steps: Int = 9, secondsPerStep: Double = 0.5,
                           warmupFrames: Int = 3, shouldStop: () -> Bool = { false }) throws -> [VRRSweepStep] {
        guard let range = display.vrrRange else { return [] }
        var out: [VRRSweepStep] = []
        var frame: FrameID = 0
        var events: [BackendEvent] = []
        events.reserveCapacity(16)
        for hz in rates(for: range, steps: steps) {
            if shouldStop() { break }
            let interval = Int64((1e9 / hz).rounded())
            let frames = Swift.max(20, Int(hz * secondsPerStep)) + warmupFrames + 1
            var shown: [(id: FrameID, vblank: VBlank)] = []
            var next = display.now() &+ interval
            let first = frame &+ 1
            func collect() { for e in events { if case let .presented(f, vb, _) = e { shown.append((f, vb)) } } }
            for _ in 0..<frames {
                while display.now() < next && !shouldStop() {
                    events.removeAll(keepingCapacity: true)
                    try display.waitForEvents(until: next, into: &events)
                    collect()
                }
                frame &+= 1
                try display.finish(frame: frame)
                var tries = 0
                while true {
                    do { try display.submit(frame: frame); break } catch BackendFailure.busy {
                        tries += 1
                        if tries > 1000 { break }
                        events.removeAll(keepingCapacity: true)
                        try display.waitForEvents(until: display.now() &+ 1_000_000, into: &events)
                        collect()
                    }
                }
                next &+= interval
            }
            // The last frame's completion.
            let end = display.now() &+ 4 * Int64(1e9 / range.lowerBound)
            while shown.last?.id != frame && display.now() < end && !shouldStop() {
                events.removeAll(keepingCapacity: true)
                try display.waitForEvents(until: end, into: &events)
                collect()
            }
            let measured = shown.filter { $0.id >= first &+ FrameID(warmupFrames) }
            var gaps: [Double] = []
            var seqs: [Double] = []
            for (a, b) in zip(measured, measured.dropFirst()) where b.id == a.id &+ 1 {
                gaps.append(Double(b.vblank.timestamp - a.vblank.timestamp) / 1e6)
                seqs.append(Double(b.vblank.sequence &- a.vblank.sequence))
            }
            let intervals = SummaryStatistics(gaps)
            out.append(VRRSweepStep(requestedHz: hz, achievedMeanMs: intervals.mean, achievedStddevMs: intervals.stddev, count: intervals.count,
                                    refreshesPerFrame: SummaryStatistics(seqs).mean,
                                    belowRange: hz < range.lowerBound))
        }
        return out
    }
}
