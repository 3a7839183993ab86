import Histogram

/// Running totals over completed frames: outcomes, dropped refreshes and drop events (counted as
/// KSScrollPerformanceDetector does: every shown frame that followed one or more stale refreshes
/// is one drop event and adds those refreshes), causes, hitch time (the ``FrameReport/hitch`` of
/// every shown frame with dropped refreshes, late or not), the presented-vs-target error of
/// on-time frames, and interval distributions in µs (HdrHistogram) and in refresh units. Memory
/// is bounded whatever the run's length: intervals and on-time errors are kept as
/// ``SampleDistribution``s (exact while there are at most 4096 distinct values, see there), so
/// adding a frame allocates nothing in a steady state.
public struct FrameAccounting {
    public private(set) var frames = 0
    public private(set) var presented = 0
    public private(set) var onTime = 0
    public private(set) var late = 0
    public private(set) var discarded = 0
    public private(set) var failed = 0
    public private(set) var unconfirmed = 0
    public private(set) var droppedRefreshes = 0
    public private(set) var dropEvents = 0
    /// Sum of the hitch of shown frames that followed dropped refreshes, in ns.
    public private(set) var hitchTotal: Nanoseconds = 0
    /// |kernel timestamp − target time| of every on-time frame, ns (bounded: see
    /// ``SampleDistribution``).
    public private(set) var onTimeErrors: SampleDistribution
    public private(set) var firstPresented: Nanoseconds = 0
    public private(set) var lastPresented: Nanoseconds = 0
    /// Frames per cause, indexed like `DropCause.allCases`.
    public private(set) var causeCounts: [Int]
    /// Intervals between shown frames, ns (bounded: see ``SampleDistribution``).
    public private(set) var intervals: SampleDistribution
    /// Intervals between shown frames in µs.
    public private(set) var intervalHistogram: Histogram<UInt64>
    /// Intervals in refreshes: index k counts intervals of k refreshes (last bucket: that many or more).
    public private(set) var refreshUnits: [Int]

    /// Empty totals. `expectedFrames` is no longer needed (storage is bounded) and is ignored.
    public init(expectedFrames: Int = 4096) {
        causeCounts = Array(repeating: 0, count: DropCause.allCases.count)
        intervals = SampleDistribution()
        onTimeErrors = SampleDistribution()
        intervalHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        refreshUnits = Array(repeating: 0, count: 33)
    }

    /// Adds one completed frame.
    public mutating func add(_ r: FrameReport) {
        frames += 1
        switch r.outcome {
        case .onTime: onTime += 1; presented += 1
        case .late: late += 1; presented += 1
        case .discarded: discarded += 1
        case .failed: failed += 1
        case .unconfirmed: unconfirmed += 1
        }
        if let c = r.cause { causeCounts[c.index] += 1 }
        guard r.wasPresented else { return }
        // Wrapping sums: a hostile log (report, replay) must not trap; real runs never get near.
        if r.droppedRefreshes > 0 {
            droppedRefreshes &+= r.droppedRefreshes
            dropEvents += 1
        }
        if r.droppedRefreshes > 0 && r.hitch > 0 { hitchTotal &+= r.hitch }
        if r.outcome == .onTime && r.targetTime > 0 {
            let e = r.presentedTime &- r.targetTime
            onTimeErrors.add(e < 0 ? 0 &- e : e)
        }
        if firstPresented == 0 { firstPresented = r.presentedTime }
        lastPresented = r.presentedTime
        if r.interval > 0 {
            intervals.add(r.interval)
            _ = intervalHistogram.record(UInt64(Swift.max(1, r.interval / 1000 + (r.interval % 1000 >= 500 ? 1 : 0))))
            refreshUnits[Swift.min(refreshUnits.count - 1, Swift.max(0, r.intervalRefreshes))] += 1
        }
    }

    /// Frames attributed to `cause`.
    public func count(of cause: DropCause) -> Int { causeCounts[cause.index] }

    /// Milliseconds of hitch per second of presentation (MetricKit's hitch time ratio): the sum of
    /// the hitch of every shown frame that followed dropped refreshes, over the time from the
    /// first to the last shown frame.
    public var hitchTimeRatio: Double {
        let span = Double(lastPresented &- firstPresented) / 1e9
        return span > 0 ? (Double(hitchTotal) / 1e6) / span : 0
    }
}

/// Interval statistics in milliseconds.
public typealias IntervalSummary = SummaryStatistics

/// HdrHistogram percentiles of the intervals, in µs.
public struct IntervalPercentilesMicroseconds: Codable, Equatable, Sendable {
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var max: UInt64
}

/// The presented-vs-target error of on-time frames in µs: |kernel timestamp − target time|, the
/// sub-refresh pacing error that drop counts cannot show (fixed refresh: how far the vblank came
/// from where the pacer predicted it; VRR: how far the flip came from the frame's target time).
public struct PacingErrorMicroseconds: Codable, Equatable, Sendable {
    public var p50: Double
    public var p99: Double
    public var max: Double

    /// Percentiles (linear interpolation, as ``SummaryStatistics``) of `errorsNs`, in µs.
    public init(errorsNs: [Double]) {
        self.init(SummaryStatistics(errorsNs.lazy.map { $0 / 1e3 }))
    }

    /// Percentiles of on-time errors kept in ns, in µs.
    public init(errors: SampleDistribution) {
        self.init(SummaryStatistics(errors, divisor: 1e3))
    }

    private init(_ s: SummaryStatistics) {
        p50 = s.p50
        p99 = s.p99
        max = s.max
    }
}

/// The summary of a run (the CLI prints it as JSON).
public struct RunSummary: Codable, Equatable, Sendable {
    public var backend: String
    public var refreshHz: Double
    public var vrrRangeHz: [Double]?
    public var effectiveRateHz: Double
    public var measuredRateHz: Double
    /// Frame latency in effect (the requested one, limited by the backend's buffers).
    public var latency: Int
    public var frames: Int
    public var presented: Int
    public var onTime: Int
    public var late: Int
    public var discarded: Int
    public var failed: Int
    public var unconfirmed: Int
    public var droppedRefreshes: Int
    public var dropEvents: Int
    /// Milliseconds of hitch per second.
    public var hitchTimeRatio: Double
    /// Presented-vs-target error of on-time frames (µs). Optional so that summaries written
    /// before it existed still decode.
    public var onTimeErrorUs: PacingErrorMicroseconds?
    /// Rate switches made by rate adaptation (absent when the run did not adapt).
    public var rateSwitches: Int?
    public var intervalMs: IntervalSummary
    public var intervalUs: IntervalPercentilesMicroseconds
    /// Interval counts by length in refreshes ("2": 119).
    public var intervalRefreshes: [String: Int]
    /// Frames per drop cause.
    public var causes: [String: Int]
    public var durationSeconds: Double
    /// Why the run ended (JSON: `endReason`, its ``RunEnd/reason``).
    public var end: RunEnd
    /// Output files (a program's log, CSV or summary files) that stopped early, one line each ("log
    /// run.jsonl: 812 frames, no end line (cannot write run.jsonl: No space left on device)");
    /// absent when every output is complete (and always in a log's end line).
    public var incompleteOutputs: [String]? = nil
    /// Seat-session gaps (VT switched away and back): how many, absent when none. Nothing inside
    /// a gap counts as dropped; ``durationSeconds`` includes the gaps, ``measuredRateHz`` does not
    /// (with gaps it is 1 / the mean interval between shown frames; no interval spans a gap).
    public var sessionGaps: Int? = nil
    /// Total time of the session gaps in seconds (absent when none; a gap still open at the
    /// end counts up to the end).
    public var sessionGapSeconds: Double? = nil
    /// Scanout verification by the CRTC's CRC (absent when the run did not verify).
    public var scanout: ScanoutSummary? = nil

    /// Builds the summary from accounting totals.
    public init(accounting a: FrameAccounting, backend: String, refreshHz: Double, vrr: ClosedRange<Double>?, effectiveRateHz: Double, latency: Int, end: RunEnd) {
        self.backend = backend
        self.refreshHz = refreshHz
        vrrRangeHz = vrr.map { [$0.lowerBound, $0.upperBound] }
        self.effectiveRateHz = effectiveRateHz
        self.latency = latency
        frames = a.frames
        presented = a.presented
        onTime = a.onTime
        late = a.late
        discarded = a.discarded
        failed = a.failed
        unconfirmed = a.unconfirmed
        droppedRefreshes = a.droppedRefreshes
        dropEvents = a.dropEvents
        hitchTimeRatio = a.hitchTimeRatio
        onTimeErrorUs = PacingErrorMicroseconds(errors: a.onTimeErrors)
        let s = SummaryStatistics(a.intervals, divisor: 1e6)
        intervalMs = s
        let h = a.intervalHistogram
        if h.totalCount > 0 {
            intervalUs = IntervalPercentilesMicroseconds(
                p50: h.valueAtPercentile(50), p90: h.valueAtPercentile(90), p99: h.valueAtPercentile(99),
                p999: h.valueAtPercentile(99.9), max: h.max)
        } else {
            intervalUs = IntervalPercentilesMicroseconds(p50: 0, p90: 0, p99: 0, p999: 0, max: 0)
        }
        var units: [String: Int] = [:]
        for (k, n) in a.refreshUnits.enumerated() where n > 0 {
            units[k == a.refreshUnits.count - 1 ? "\(k)+" : "\(k)"] = n
        }
        intervalRefreshes = units
        var causes: [String: Int] = [:]
        for c in DropCause.allCases where a.count(of: c) > 0 { causes[c.rawValue] = a.count(of: c) }
        self.causes = causes
        durationSeconds = Double(a.lastPresented &- a.firstPresented) / 1e9
        measuredRateHz = durationSeconds > 0 && s.count > 0 ? Double(s.count) / durationSeconds : 0
        self.end = end
    }

    /// The JSON's names: every property's own, but ``end`` is `endReason` (its ``RunEnd/reason``).
    enum CodingKeys: String, CodingKey {
        case backend, refreshHz, vrrRangeHz, effectiveRateHz, measuredRateHz, latency, frames, presented, onTime, late
        case discarded, failed, unconfirmed, droppedRefreshes, dropEvents, hitchTimeRatio, onTimeErrorUs, rateSwitches
        case intervalMs, intervalUs, intervalRefreshes, causes, durationSeconds
        case end = "endReason"
        case incompleteOutputs, sessionGaps, sessionGapSeconds, scanout
    }
}
