/// The accounting of `cadence observe`: another program's page flips, judged as Cadence judges
/// its own frames. Pure arithmetic; the flips come from the kernel's trace events.
///
/// A client's flips carry no intent, so each interval between consecutive flips (in
/// refreshes, from the vblank sequences) is judged against the client's rate: the expected
/// interval is the one of the expected rate when one is given (refresh / rate, rounded, at least 1), else the
/// client's dominant interval so far (the most frequent one, the shorter on a tie). Until
/// ``establishingIntervals`` equal intervals in a row the client's flips are held, then judged
/// against that interval (the end of the observation judges what is still held). A flip `k` refreshes after the previous one, with `e` expected, dropped
/// `k − e` refreshes (one drop event); its hitch is its timestamp minus the time the expected
/// vblank had (previous timestamp + e periods). The cause is known when the client's commit
/// time is: committed after that expected vblank → render-late (the client was late), before
/// it → flip-late (the flip did not latch in time). The totals are a ``FrameAccounting``, so
/// the summary is a ``RunSummary`` like `run`'s.
public struct ObservedCadence {
    /// Equal intervals in a row after which the client's cadence counts as known (without a
    /// fixed interval): flips before that are held and judged against that interval, so a
    /// client's first intervals are judged against the cadence it settles into, never against
    /// themselves (an app whose first frame stayed 3 refreshes at 60 Hz dropped 2; judged by
    /// itself it would have set the expected interval to 3). In a row, not in all: a start that
    /// alternates 2 and 1 refreshes under load is not a 30 Hz client; and 8, not 4: a 60 Hz app
    /// started on a loaded host ran 4 intervals of 2 in a row before it kept 1 (seen in the VM).
    public static let establishingIntervals = 8
    /// Flips held at most while the cadence is not known; then the dominant interval so far rules.
    public static let maximumHeldFlips = 240
    /// The expected interval in refreshes, when fixed by the user.
    public let fixedInterval: Int?
    public private(set) var accounting = FrameAccounting()
    /// Interval counts by refreshes (index = refreshes; the last bucket: that many or more).
    public private(set) var intervalCounts = [Int](repeating: 0, count: 33)
    /// The last flip judged (the chain the intervals are measured along).
    private var previous: (sequence: UInt64, timestamp: Int64)?
    /// The last flip added (interval counts are taken as flips arrive).
    private var lastArrived: UInt64?
    private var known: Bool
    private var held: [Flip] = []
    /// The latest run of equal intervals: its length in refreshes and how many in a row.
    private var steady: (interval: Int, count: Int) = (0, 0)

    private struct Flip {
        var sequence: UInt64
        var timestamp: Int64
        var committedAt: Int64?
        var periodNs: Double
        var crtc: UInt32
    }

    /// `fixedInterval`: the expected interval in refreshes (nil: the dominant one).
    public init(fixedInterval: Int? = nil) {
        self.fixedInterval = fixedInterval.map { Swift.max(1, $0) }
        known = fixedInterval != nil
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

    /// The client's cadence is known (fixed, or ``establishingIntervals`` equal intervals in a row):
    /// flips are judged as they come. Before, they are held (see ``flush()``).
    public var isCadenceKnown: Bool { known }

    /// Flips added but not judged yet (the cadence is not known).
    public var heldFlips: Int { held.count }

    /// Adds one flip (sequence unwrapped, kernel timestamp ns, commit time when known) on a
    /// display of `periodNs` per refresh; returns the reports of the flips judged now, in flip
    /// order (also added to ``accounting``): this one once the cadence is known, with every flip
    /// held before it; none while it is not. Each report's `cadenceRefreshes` is the interval it
    /// was judged against.
    public mutating func add(
        sequence: UInt64, timestamp: Int64, committedAt: Int64?, periodNs: Double, crtc: UInt32 = 0
    ) -> [FrameReport] {
        if let last = lastArrived, sequence > last {
            let k = Int(Swift.min(sequence - last, UInt64(Int32.max)))
            intervalCounts[Swift.min(k, intervalCounts.count - 1)] += 1
            steady = steady.interval == k ? (k, steady.count + 1) : (k, 1)
        }
        if lastArrived == nil || sequence > lastArrived! { lastArrived = sequence }
        let flip = Flip(
            sequence: sequence, timestamp: timestamp, committedAt: committedAt, periodNs: periodNs, crtc: crtc)
        if !known {
            held.append(flip)
            let settled = steady.count >= Self.establishingIntervals
            guard settled || held.count >= Self.maximumHeldFlips else { return [] }
            known = true
            return judgeHeld(against: settled ? steady.interval : expectedInterval)
        }
        return [judge(flip, against: expectedInterval)]
    }

    /// Judges every held flip and returns their reports in flip order: against the steady
    /// interval when the cadence just became known, else (the end of the observation, or too
    /// many flips held) against the dominant interval so far.
    public mutating func flush() -> [FrameReport] {
        judgeHeld(against: expectedInterval)
    }

    private mutating func judgeHeld(against e: Int) -> [FrameReport] {
        let out = held.map { judge($0, against: e) }
        held.removeAll()
        return out
    }

    /// Judges `f` against an expected interval of `e` refreshes.
    private mutating func judge(_ f: Flip, against e: Int) -> FrameReport {
        var r = FrameReport()
        r.frameIndex = accounting.frames
        r.id = FrameID(accounting.frames)
        r.sequence = f.sequence
        r.presentedTime = f.timestamp
        r.commitTime = f.committedAt ?? 0
        r.crtc = f.crtc
        r.outcome = .onTime
        r.cadenceRefreshes = e
        guard let prev = previous, f.sequence > prev.sequence else {
            // The first flip (or a repeated or older sequence: nothing to judge it by).
            if previous == nil { previous = (f.sequence, f.timestamp) }
            r.targetSequence = f.sequence
            r.targetTime = f.timestamp
            accounting.add(r)
            return r
        }
        let k = Int(Swift.min(f.sequence - prev.sequence, UInt64(Int32.max)))
        r.interval = f.timestamp &- prev.timestamp
        r.intervalRefreshes = k
        r.targetSequence = prev.sequence + UInt64(e)
        let expectedTime = prev.timestamp &+ Int64((Double(e) * f.periodNs).rounded())
        r.targetTime = expectedTime
        if k > e {
            r.outcome = .late
            r.lateRefreshes = k - e
            r.droppedRefreshes = k - e
            r.hitch = Swift.max(0, f.timestamp &- expectedTime)
            if let c = f.committedAt {
                // Committed after the vblank it should have latched at (minus 1 ms of margin for
                // the commit's own work): the client was late.
                r.cause = c >= expectedTime &- 1_000_000 ? .renderLate : .flipLate
            }
        }
        previous = (f.sequence, f.timestamp)
        accounting.add(r)
        return r
    }
}
