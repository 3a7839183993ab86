/// Descriptive statistics used by every report (measure, run, validate, replay).
///
/// Percentiles use linear interpolation between closest ranks (NumPy's default), the
/// standard deviation is the population one (divide by n).
public struct SummaryStatistics: Equatable, Sendable, Codable {
    public var count: Int
    public var mean: Double
    public var stddev: Double
    public var min: Double
    public var p50: Double
    public var p99: Double
    public var max: Double

    /// Statistics of `values`; all fields are 0 for an empty input.
    public init<C: Collection>(_ values: C) where C.Element == Double {
        let sorted = values.sorted()
        count = sorted.count
        guard let first = sorted.first, let last = sorted.last else {
            mean = 0; stddev = 0; min = 0; p50 = 0; p99 = 0; max = 0
            return
        }
        var sum = 0.0
        for v in sorted { sum += v }
        let m = sum / Double(sorted.count)
        var sq = 0.0
        for v in sorted { sq += (v - m) * (v - m) }
        mean = m
        stddev = (sq / Double(sorted.count)).squareRoot()
        min = first
        max = last
        p50 = Self.percentile(sorted: sorted, 50)
        p99 = Self.percentile(sorted: sorted, 99)
    }

    /// The `p`-th percentile (0...100) of an ascending array, interpolating linearly.
    public static func percentile(sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = p / 100 * Double(sorted.count - 1)
        let lo = Int(rank.rounded(.down))
        let hi = Swift.min(lo + 1, sorted.count - 1)
        let frac = rank - Double(lo)
        return sorted[lo] + (sorted[hi] - sorted[lo]) * frac
    }
}

/// Least-squares fit of y = intercept + slope·x.
public struct LinearFit: Equatable, Sendable {
    public var slope: Double
    public var intercept: Double

    /// Fits `points`; nil when fewer than two distinct x values.
    /// Coordinates are centred before summing so that large kernel timestamps keep precision.
    public init?(_ points: [(x: Double, y: Double)]) {
        guard points.count >= 2 else { return nil }
        var mx = 0.0, my = 0.0
        for p in points { mx += p.x; my += p.y }
        mx /= Double(points.count); my /= Double(points.count)
        var sxy = 0.0, sxx = 0.0
        for p in points {
            let dx = p.x - mx
            sxy += dx * (p.y - my)
            sxx += dx * dx
        }
        guard sxx > 0 else { return nil }
        slope = sxy / sxx
        intercept = my - slope * mx
    }
}
