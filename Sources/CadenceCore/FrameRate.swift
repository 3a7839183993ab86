/// The frame rates a display link may run at, as `CAFrameRateRange`: `minimum`, `maximum` and
/// `preferred` in Hz. Zero means "unconstrained": `maximum` 0 is the display's highest rate,
/// `preferred` 0 the highest rate the range allows.
public struct FrameRateRange: Equatable, Hashable, Sendable, Codable {
    public var minimum: Double
    public var maximum: Double
    public var preferred: Double

    /// The display's native rate (all zero).
    public static let `default` = FrameRateRange(minimum: 0, maximum: 0, preferred: 0)

    public init(minimum: Double, maximum: Double, preferred: Double) {
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred
    }

    /// Why a range is unusable.
    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        public var description: String {
            switch self { case .malformed(let s): return s }
        }
    }

    /// Parses `MIN:MAX:PREFERRED` (or `MIN:MAX`, preferred 0) and validates it.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else {
            throw Invalid.malformed("rate range '\(text)' must be MIN:MAX:PREFERRED")
        }
        var values: [Double] = []
        for p in parts {
            guard let v = Double(p), v.isFinite else {
                throw Invalid.malformed("rate range '\(text)': '\(p)' is not a number")
            }
            values.append(v)
        }
        self.init(minimum: values[0], maximum: values[1], preferred: values.count == 3 ? values[2] : 0)
        try validate()
    }

    /// "30" for 30.0, else as Double prints it ("59.94", "2e+20": no Int conversion, which
    /// traps for huge values — found by the `rate` fuzz target).
    private static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
    }

    /// Throws unless 0 ≤ minimum ≤ maximum (maximum 0: unbounded) and preferred is 0 or inside.
    public func validate() throws {
        if minimum < 0 || maximum < 0 || preferred < 0 {
            throw Invalid.malformed("rate range \(minimum):\(maximum):\(preferred) has a negative rate")
        }
        if maximum > 0 && minimum > maximum {
            throw Invalid.malformed("rate range \(minimum):\(maximum):\(preferred): minimum is above maximum")
        }
        if preferred > 0 && (preferred < minimum || (maximum > 0 && preferred > maximum)) {
            // A common slip: the panel's VRR range given as the content's range.
            let hint = preferred < minimum
                ? " (the range is the rates the content accepts, not the panel's VRR range: for \(Self.format(preferred)) Hz give \(Self.format(preferred)):\(Self.format(maximum)):\(Self.format(preferred)) or 0:\(Self.format(maximum)):\(Self.format(preferred)); below a VRR panel's minimum each frame is repeated, LFC)"
                : ""
            throw Invalid.malformed("rate range \(minimum):\(maximum):\(preferred): preferred is outside minimum…maximum" + hint)
        }
    }
}

/// The rate a display link actually runs at on a given display.
public struct EffectiveRate: Equatable, Sendable {
    /// Frames per second delivered to the link.
    public var hz: Double
    /// Fixed refresh: refreshes per frame (the divisor n of refresh/n). VRR: how many times the
    /// panel shows each frame (1, or k > 1 under low-framerate compensation).
    public var refreshesPerFrame: Int
    /// True when the rate comes from a VRR range rather than a divisor of a fixed refresh.
    public var isVariable: Bool
    /// VRR: the rate the range asked for when the panel cannot show it evenly (below its
    /// minimum with no whole number of repeats inside its range) and ``hz`` is the nearest rate
    /// it can show evenly instead; nil otherwise. See ``unevenRateNote``.
    public var requestedHz: Double?
    /// Nanoseconds between frames.
    public var frameInterval: Double { 1e9 / hz }

    public init(hz: Double, refreshesPerFrame: Int, isVariable: Bool, requestedHz: Double? = nil) {
        self.hz = hz
        self.refreshesPerFrame = refreshesPerFrame
        self.isVariable = isVariable
        self.requestedHz = requestedHz
    }

    /// The effective rate for `range` on a display refreshing at `refreshHz`, or inside
    /// `vrr` when the display runs variable refresh.
    ///
    /// Fixed refresh: the candidates are refresh/n (n = 1, 2, …); among those inside
    /// [minimum, maximum] the one nearest to `preferred` wins, ties to the higher rate, preferred
    /// 0 picks the highest; when none is inside, the lowest candidate at or above the minimum
    /// (never a rate below the minimum when one at or above it exists: 80:120 on 144 Hz runs at
    /// 144), else the refresh itself (a range above the display's rate). VRR: the preferred rate (or the highest allowed), clamped to the range and
    /// to the panel's maximum, exactly, and not below 1 Hz; below the panel's minimum each frame
    /// is shown k times (the fewest that reach the minimum). A rate below the minimum for which
    /// no k fits the panel's range (35 Hz on 40–60) is never run as judder: the nearest rate the
    /// panel can show evenly runs instead (inside the range when one is, ties to the higher;
    /// 35 on 40–60 → 40), with ``requestedHz`` set.
    public static func select(for range: FrameRateRange, refreshHz: Double, vrr: ClosedRange<Double>? = nil) -> EffectiveRate {
        if let vrr = vrr { return selectVariable(range, vrr) }
        return selectFixed(range, refreshHz)
    }

    static func selectFixed(_ range: FrameRateRange, _ refreshHz: Double) -> EffectiveRate {
        let lo = range.minimum
        let hi = range.maximum > 0 ? range.maximum : Double.infinity
        // Divisors down to 1 Hz (and at least a few) are plenty for any real request.
        let maxN = Swift.max(8, Int(refreshHz.rounded(.up)))
        var bestInside: (n: Int, score: Double)? = nil
        // No divisor inside: the lowest one at or above the minimum (never below the minimum
        // when one at or above it exists), else the refresh itself (the range is above it).
        var lowestAtOrAboveMinimum: Int? = nil
        for n in 1...maxN {
            let r = refreshHz / Double(n)
            if r >= lo && r <= hi {
                // Descending rates: strict < keeps the higher rate on a tie.
                let score = range.preferred > 0 ? abs(r - range.preferred) : -r
                if bestInside == nil || score < bestInside!.score { bestInside = (n, score) }
            } else if r >= lo {
                lowestAtOrAboveMinimum = n
            }
        }
        let n = bestInside?.n ?? lowestAtOrAboveMinimum ?? 1
        return EffectiveRate(hz: refreshHz / Double(n), refreshesPerFrame: n, isVariable: false)
    }

    static func selectVariable(_ range: FrameRateRange, _ vrr: ClosedRange<Double>) -> EffectiveRate {
        let hi = range.maximum > 0 ? Swift.min(range.maximum, vrr.upperBound) : vrr.upperBound
        var r = range.preferred > 0 ? range.preferred : hi
        r = Swift.min(Swift.max(r, range.minimum), hi)
        if r <= 0 { r = vrr.upperBound }
        // Not below 1 Hz, as on a fixed refresh (found fuzzing rate ranges: 0.01 Hz is 100 s a frame).
        r = Swift.max(r, Swift.min(1, vrr.upperBound))
        guard r < vrr.lowerBound else { return EffectiveRate(hz: r, refreshesPerFrame: 1, isVariable: true) }
        // Below the panel's minimum: each frame shown k times, k the fewest that reach it.
        // A hair of float slack either way, as the rate is written, not as it is stored: a
        // minimum of 1.4 Hz plus 0.2 is 1.5999999999999999 Hz, and 48 / that rounded up to 31
        // repeats on a 48 Hz minimum instead of 30 (found by the VRR rate-rule property).
        let slack = 1e-12
        let k = LowFramerateCompensation.fewestRepeats(rate: r, minimum: vrr.lowerBound, slack: slack)
        if r * Double(k) <= vrr.upperBound * (1 + slack) {
            return EffectiveRate(hz: r, refreshesPerFrame: k, isVariable: true)
        }
        // No k fits (35 Hz on 40–60: 35 is below 40, 70 above 60): every frame would be shown
        // for a time the panel cannot hold evenly. The nearest rate that can be shown evenly
        // instead: the panel's maximum over k (k repeats) below, or its minimum over k − 1
        // above; inside the requested range when one is, ties to the higher.
        let below = EffectiveRate(hz: vrr.upperBound / Double(k), refreshesPerFrame: k, isVariable: true, requestedHz: r)
        let above = EffectiveRate(hz: vrr.lowerBound / Double(k - 1), refreshesPerFrame: k - 1, isVariable: true, requestedHz: r)
        let lo = range.minimum
        let candidates = [above, below].filter { $0.hz >= Swift.max(lo, Swift.min(1, vrr.upperBound)) && $0.hz <= hi }
        let pool = candidates.isEmpty ? [above, below] : candidates
        // `above` first: a tie keeps the higher rate.
        return pool.min { abs($0.hz - r) < abs($1.hz - r) }!
    }

    /// The one line to say when the rate differs from the one asked for because the panel cannot
    /// show it evenly (``requestedHz``), else nil.
    public var unevenRateNote: String? {
        guard let asked = requestedHz else { return nil }
        func f(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String((v * 1000).rounded() / 1000) }
        return "\(f(asked)) Hz cannot be shown evenly on this VRR panel (below its minimum, and no whole number of repeats fits its range): running at \(f(hz)) Hz"
    }
}
