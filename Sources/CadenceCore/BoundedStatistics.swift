/// Statistics over an unbounded stream of samples in bounded memory, for runs of any length
/// (a day at 144 Hz is 12 million frames).

/// The distribution of integer samples (nanoseconds) as counts per distinct value, with a
/// bounded number of distinct values.
///
/// **Exactness.** While a stream has at most ``capacity`` distinct values, every value is kept
/// exactly: statistics computed from it (``SummaryStatistics/init(_:divisor:)``) are bit for bit
/// those of sorting every sample. When a new value would exceed ``capacity``, the resolution
/// coarsens by a factor of ten (``quantum`` 1 → 10 → 100 ns …) until the values fit: each
/// sample then counts in the bucket `[k·q, (k+1)·q)` and stands for the bucket's midpoint, so
/// percentiles, mean and standard deviation are within q/2 of exact. ``count``, ``min``,
/// ``max`` and ``sum`` stay exact whatever the resolution. Intervals on a fixed-refresh display
/// (a few multiples of the refresh, kernel timestamps in whole µs) stay exact in practice; a
/// jittery stream coarsens to about 1–10 µs.
///
/// Memory: at most ``capacity`` entries (4096: about 150 KiB); adding allocates only when the
/// table grows or coarsens, never in a steady state.
public struct SampleDistribution: Equatable, Sendable {
    /// Distinct values kept before the resolution coarsens.
    public let capacity: Int
    /// Samples added.
    public private(set) var count = 0
    /// Smallest and largest sample, exact (0 when empty).
    public private(set) var min: Int64 = 0
    public private(set) var max: Int64 = 0
    /// Sum of all samples, exact unless it leaves Int64 (then it wraps; see ``sumOverflowed``).
    public private(set) var sum: Int64 = 0
    /// True when ``sum`` wrapped (absurd inputs only: more than 292 years of nanoseconds).
    public private(set) var sumOverflowed = false
    /// Bucket width in ns: 1 while exact, then 10, 100, 1000 …
    public private(set) var quantum: Int64 = 1
    /// Bucket start (a multiple of ``quantum``) → samples in it.
    private var counts: [Int64: Int]

    /// An empty distribution keeping up to `capacity` (≥ 16) distinct values.
    public init(capacity: Int = 4096) {
        self.capacity = Swift.max(16, capacity)
        counts = [:]
        counts.reserveCapacity(Swift.min(self.capacity, 64))
    }

    /// True while every sample is kept exactly (``quantum`` is 1).
    public var isExact: Bool { quantum == 1 }

    /// Distinct buckets held.
    public var distinctValues: Int { counts.count }

    /// Adds one sample.
    public mutating func add(_ value: Int64) {
        if count == 0 {
            min = value
            max = value
        } else {
            if value < min { min = value }
            if value > max { max = value }
        }
        count += 1
        let (s, o) = sum.addingReportingOverflow(value)
        sum = s
        if o { sumOverflowed = true }
        let key = Self.bucket(value, quantum)
        if let n = counts[key] {
            counts[key] = n + 1
            return
        }
        counts[key] = 1
        while counts.count > capacity { coarsen() }
    }

    /// The samples as (value, count) in ascending order; with ``quantum`` > 1 each value is a
    /// bucket's midpoint.
    public func sortedValues() -> [(value: Double, count: Int)] {
        let half = quantum > 1 ? Double(quantum) / 2 : 0
        return counts.keys.sorted().map { (Double($0) + half, counts[$0]!) }
    }

    /// The start of `value`'s bucket: the largest multiple of `q` not above it (the smallest
    /// representable one for the few values below it near `Int64.min`).
    static func bucket(_ value: Int64, _ q: Int64) -> Int64 {
        if q == 1 { return value }
        let r = value % q
        guard r < 0 else { return value &- r }
        let (b, o) = (value &- r).subtractingReportingOverflow(q)
        return o ? value &- r : b
    }

    /// Ten times wider buckets (merging counts).
    private mutating func coarsen() {
        let (q, o) = quantum.multipliedReportingOverflow(by: 10)
        guard !o else { return }
        quantum = q
        var merged: [Int64: Int] = [:]
        merged.reserveCapacity(counts.count)
        for (k, n) in counts { merged[Self.bucket(k, q), default: 0] += n }
        counts = merged
    }
}

extension SummaryStatistics {
    /// The statistics of a ``SampleDistribution``'s samples, each divided by `divisor`
    /// (1e6: ns → ms). While the distribution ``SampleDistribution/isExact`` the result equals
    /// `SummaryStatistics(samples.map { Double($0) / divisor })` exactly (same summation order);
    /// otherwise percentiles, mean and standard deviation are within ``SampleDistribution/quantum``/2
    /// (before division) of that, and count, min and max are exact.
    public init(_ d: SampleDistribution, divisor: Double) {
        let values = d.sortedValues()
        count = d.count
        guard d.count > 0, !values.isEmpty else {
            mean = 0; stddev = 0; min = 0; p50 = 0; p99 = 0; max = 0
            return
        }
        var sum = 0.0
        for (v, n) in values {
            let x = v / divisor
            for _ in 0..<n { sum += x }
        }
        let m = sum / Double(d.count)
        var sq = 0.0
        for (v, n) in values {
            let x = v / divisor
            for _ in 0..<n { sq += (x - m) * (x - m) }
        }
        mean = m
        stddev = (sq / Double(d.count)).squareRoot()
        min = Double(d.min) / divisor
        max = Double(d.max) / divisor
        p50 = Self.percentile(values, count: d.count, 50, divisor: divisor)
        p99 = Self.percentile(values, count: d.count, 99, divisor: divisor)
    }

    /// ``percentile(sorted:_:)`` over (value, count) pairs: the same ranks and interpolation.
    static func percentile(_ values: [(value: Double, count: Int)], count n: Int, _ p: Double, divisor: Double) -> Double {
        let rank = p / 100 * Double(n - 1)
        let lo = Int(rank.rounded(.down))
        let hi = Swift.min(lo + 1, n - 1)
        let frac = rank - Double(lo)
        func element(_ i: Int) -> Double {
            var seen = 0
            for (v, c) in values {
                seen += c
                if i < seen { return v / divisor }
            }
            return values[values.count - 1].value / divisor
        }
        let a = element(lo), b = element(hi)
        return a + (b - a) * frac
    }
}

/// Least-squares fit of y = intercept + slope·x over a stream of points in constant memory
/// (``LinearFit`` needs them all). Coordinates are taken relative to the first point and the
/// sums are updated with Welford's method, so large kernel timestamps keep their precision;
/// the result agrees with ``LinearFit`` to about 1e-12 relative (not bit for bit: the order of
/// the floating-point operations differs).
public struct RunningLinearFit: Equatable, Sendable {
    public private(set) var count = 0
    private var x0 = 0.0, y0 = 0.0
    private var mx = 0.0, my = 0.0
    private var sxx = 0.0, sxy = 0.0

    public init() {}

    /// Adds one point.
    public mutating func add(x: Double, y: Double) {
        if count == 0 { x0 = x; y0 = y }
        let u = x - x0, v = y - y0
        count += 1
        let n = Double(count)
        let du = u - mx
        mx += du / n
        my += (v - my) / n
        sxx += du * (u - mx)
        sxy += du * (v - my)
    }

    /// The fit; nil with fewer than two distinct x values.
    public var fit: LinearFit? {
        guard count >= 2, sxx > 0 else { return nil }
        let slope = sxy / sxx
        return LinearFit(slope: slope, intercept: (y0 + my) - slope * (x0 + mx))
    }
}

extension LinearFit {
    /// A fit with these coefficients.
    public init(slope: Double, intercept: Double) {
        self.slope = slope
        self.intercept = intercept
    }
}
