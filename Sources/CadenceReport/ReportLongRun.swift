import CadenceCore
import Foundation

/// The long-run picture of a run whose log has more frames than one timeline shows
/// (``ReportChart/perFrameLimit(width:)``): what ``ReportChart`` keeps instead of a point per
/// shown frame. Built while reading, in memory that does not grow with the log: at most
/// ``maxBins`` bins of consecutive frame numbers (their width doubles, merging pairs, when the
/// run outgrows them) and the ``worstCount`` worst drop events more than ``neighbourhood``
/// frames apart (of the ``candidateCount`` worst), each with ``neighbourhood`` shown frames on
/// either side.
public struct LongRun: Equatable, Sendable {
    /// What one bin of frames (frame numbers `origin + index·binWidth ..< origin + (index+1)·binWidth`) holds.
    public struct Bin: Equatable, Sendable {
        /// Frame records.
        public var frames = 0
        /// Shown frames (on time or late).
        public var shown = 0
        /// Dropped refreshes of the shown frames (as `RunSummary.droppedRefreshes`).
        public var droppedRefreshes = 0
        /// Shown frames with dropped refreshes (as `RunSummary.dropEvents`).
        public var dropEvents = 0
        /// Shown frames with an interval (> 0).
        public var intervals = 0
        /// Smallest, largest and summed interval of those frames, ns.
        public var minIntervalNs = Int64.max
        public var maxIntervalNs = Int64.min
        public var sumIntervalNs: Int64 = 0
        /// Earliest and latest kernel timestamp of the shown frames, ns (`Int64.max`/`min`: none).
        public var minTimeNs = Int64.max
        public var maxTimeNs = Int64.min

        /// Mean interval, ns (0 without intervals).
        public var meanIntervalNs: Double { intervals > 0 ? Double(sumIntervalNs) / Double(intervals) : 0 }

        mutating func merge(_ o: Bin) {
            frames &+= o.frames
            shown &+= o.shown
            droppedRefreshes &+= o.droppedRefreshes
            dropEvents &+= o.dropEvents
            intervals &+= o.intervals
            minIntervalNs = Swift.min(minIntervalNs, o.minIntervalNs)
            maxIntervalNs = Swift.max(maxIntervalNs, o.maxIntervalNs)
            sumIntervalNs &+= o.sumIntervalNs
            minTimeNs = Swift.min(minTimeNs, o.minTimeNs)
            maxTimeNs = Swift.max(maxTimeNs, o.maxTimeNs)
        }
    }

    /// One of the worst drop events with the shown frames around it (by frame).
    public struct Event: Equatable, Sendable {
        public var drop: ReportChart.Drop
        /// The shown frames around it: up to ``LongRun/neighbourhood`` before (and the frame itself
        /// when shown), up to ``LongRun/neighbourhood`` after, in frame order.
        public var points: [ReportChart.Point]
    }

    /// Temperature and frequency of the context records that fall in one bin.
    public struct ContextBin: Equatable, Sendable {
        public var bin: Int
        public var minCelsius: Double?
        public var maxCelsius: Double?
        public var meanFrequencyMHz: Double?
    }

    /// How many worst events are kept.
    public static let worstCount = 6
    /// How many of the worst events are kept while reading, to choose ``worstCount`` apart
    /// from them: each in turn, worst first, unless it is within ``neighbourhood`` frames of one
    /// chosen (then the rest, worst first, when fewer are apart).
    public static let candidateCount = 64
    /// Shown frames kept on either side of a worst event.
    public static let neighbourhood = 60

    /// The most bins (even); the bins in use are at most this many.
    public let maxBins: Int
    /// The frame number of bin 0's first frame.
    public let origin: Int
    /// Frames per bin (a power of two).
    public let binWidth: Int
    public let bins: [Bin]
    /// Frames with a drop cause per bin and cause: `causeCounts[bin * causes + cause.index]`.
    public let causeCounts: [Int]
    /// The worst drop events, worst first (most dropped refreshes, then most late refreshes, then earliest).
    public let worst: [Event]
    /// Context records per bin (only bins with a record).
    public let context: [ContextBin]

    /// The bins with shown frames' times, in order (for ``framePosition(timeNs:)``).
    let timed: [Int]

    init(
        maxBins: Int, origin: Int, binWidth: Int, bins: [Bin], causeCounts: [Int], worst: [Event], context: [ContextBin]
    ) {
        self.maxBins = maxBins
        self.origin = origin
        self.binWidth = binWidth
        self.bins = bins
        self.causeCounts = causeCounts
        self.worst = worst
        self.context = context
        timed = bins.indices.filter { bins[$0].minTimeNs <= bins[$0].maxTimeNs }
    }

    /// The number of causes (the stride of ``causeCounts``).
    public static var causes: Int { DropCause.allCases.count }

    /// Frames with cause `c` in bin `i`.
    public func count(bin i: Int, cause c: DropCause) -> Int { causeCounts[i * Self.causes + c.index] }

    /// The first frame number of bin `i`.
    public func firstFrame(bin i: Int) -> Int { origin &+ i &* binWidth }

    /// The cause with the most frames in bin `i` (nil: none).
    public func mainCause(bin i: Int) -> DropCause? {
        var best: DropCause? = nil
        var n = 0
        for c in DropCause.allCases where count(bin: i, cause: c) > n {
            n = count(bin: i, cause: c)
            best = c
        }
        return best
    }

    /// Fractional frame position of kernel time `t` (ns), from the bins' time ranges (clamped to
    /// the first and last shown frame's time; nil without shown frames).
    public func framePosition(timeNs t: Int64) -> Double? {
        guard let first = timed.first, let last = timed.last else { return nil }
        if t <= bins[first].minTimeNs { return Double(firstFrame(bin: first)) }
        if t >= bins[last].maxTimeNs { return Double(firstFrame(bin: last) &+ binWidth) }
        var lo = 0, hi = timed.count - 1
        while hi > lo {
            let mid = (lo + hi + 1) / 2
            if bins[timed[mid]].minTimeNs <= t { lo = mid } else { hi = mid - 1 }
        }
        let b = bins[timed[lo]]
        let start = Double(firstFrame(bin: timed[lo]))
        if t >= b.maxTimeNs { return start + Double(binWidth) }
        let span = Double(b.maxTimeNs - b.minTimeNs)
        return start + (span > 0 ? Double(t - b.minTimeNs) / span : 0) * Double(binWidth)
    }

    /// Kernel time of the first shown frame, ns (nil: none).
    public var startTimeNs: Int64? { bins.lazy.map(\.minTimeNs).filter { $0 != Int64.max }.min() }
    /// Kernel time of the last shown frame, ns (nil: none).
    public var endTimeNs: Int64? { bins.lazy.map(\.maxTimeNs).filter { $0 != Int64.min }.max() }
}
