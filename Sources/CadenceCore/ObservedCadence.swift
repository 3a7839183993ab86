/// The accounting of `cadence observe`: another program's page flips, judged as Cadence judges
/// its own frames. Pure arithmetic; the flips come from the kernel's trace events.
///
/// A client's flips carry no intent, so each interval between consecutive flips (in
/// refreshes, from the vblank sequences) is judged against the client's rate: the expected
/// interval is the one of the expected rate when one is given (refresh / rate, rounded, at least 1), else the
/// client's dominant interval so far (the most frequent one, the shorter on a tie; the first
/// interval sets it). A flip `k` refreshes after the previous one, with `e` expected, dropped
/// `k − e` refreshes (one drop event); its hitch is its timestamp minus the time the expected
/// vblank had (previous timestamp + e periods). The cause is known when the client's commit
/// time is: committed after that expected vblank → render-late (the client was late), before
/// it → flip-late (the flip did not latch in time). The totals are a ``FrameAccounting``, so
/// the summary is a ``RunSummary`` like `run`'s.
public struct ObservedCadence {
    /// The expected interval in refreshes, when fixed by the user.
    public let fixedInterval: Int?
    public private(set) var accounting = FrameAccounting()
    /// Interval counts by refreshes (index = refreshes; the last bucket: that many or more).
    public private(set) var intervalCounts = [Int](repeating: 0, count: 33)
    private var previous: (sequence: UInt64, timestamp: Int64)?

    /// `fixedInterval`: the expected interval in refreshes (nil: the dominant one).
    public init(fixedInterval: Int? = nil) {
        self.fixedInterval = fixedInterval.map { Swift.max(1, $0) }
    }

    /// The expected interval for a client flipping at `rateHz` on a `refreshHz` display.
    public static func interval(rateHz: Double, refreshHz: Double) -> Int {
        guard rateHz > 0, refreshHz > 0 else { return 1 }
        return Swift.max(1, Int((refreshHz / rateHz).rounded()))
    }

    /// The interval now judged normal: the fixed one, else the dominant one (1 before any).
    public var expectedInterval: Int {
        if let fixedInterval { return fixedInterval }
        var best = 0, bestCount = 0
        for k in 1..<intervalCounts.count where intervalCounts[k] > bestCount { best = k; bestCount = intervalCounts[k] }
        return best == 0 ? 1 : best
    }

    /// Adds one flip (sequence unwrapped, kernel timestamp ns, commit time when known) on a
    /// display of `periodNs` per refresh; returns its report (also added to ``accounting``).
    @discardableResult
    public mutating func add(sequence: UInt64, timestamp: Int64, committedAt: Int64?, periodNs: Double, crtc: UInt32 = 0) -> FrameReport {
        var r = FrameReport()
        r.frameIndex = accounting.frames
        r.id = FrameID(accounting.frames)
        r.sequence = sequence
        r.presentedTime = timestamp
        r.commitTime = committedAt ?? 0
        r.crtc = crtc
        r.outcome = .onTime
        guard let prev = previous, sequence > prev.sequence else {
            // The first flip (or a repeated or older sequence: nothing to judge it by).
            if previous == nil { previous = (sequence, timestamp) }
            r.targetSequence = sequence
            r.targetTime = timestamp
            accounting.add(r)
            return r
        }
        let k = Int(Swift.min(sequence - prev.sequence, UInt64(Int32.max)))
        intervalCounts[Swift.min(k, intervalCounts.count - 1)] += 1
        let e = expectedInterval
        r.interval = timestamp &- prev.timestamp
        r.intervalRefreshes = k
        r.targetSequence = prev.sequence + UInt64(e)
        let expectedTime = prev.timestamp &+ Int64((Double(e) * periodNs).rounded())
        r.targetTime = expectedTime
        if k > e {
            r.outcome = .late
            r.lateRefreshes = k - e
            r.droppedRefreshes = k - e
            r.hitch = Swift.max(0, timestamp &- expectedTime)
            if let c = committedAt {
                // Committed after the vblank it should have latched at (minus 1 ms of margin for
                // the commit's own work): the client was late.
                r.cause = c >= expectedTime &- 1_000_000 ? .renderLate : .flipLate
            }
        }
        previous = (sequence, timestamp)
        accounting.add(r)
        return r
    }
}
