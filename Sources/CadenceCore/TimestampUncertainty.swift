/// ε, the uncertainty of vblank timestamps, as the presentation contracts use it
/// (``PresentIntent``): how far a timestamp the pacer sees may be from where the nominal vblank
/// grid puts it.
///
/// Measured, not assumed: every time the pacer learns a newer vblank (a query, a vblank event,
/// a flip completion) at most ``maxStep`` refreshes after the one it knew, the *residual* is the
/// new timestamp minus its prediction (the known vblank plus whole nominal refreshes). The
/// measured jitter is the largest |residual| of the last ``window`` such observations: it covers
/// timestamp noise (of both ends of an interval), microsecond truncation of flip events, and
/// drift against the nominal refresh. Then
///
///     ε = min(max(measured jitter, 1 µs), 0.5% of a refresh)
///
/// 1 µs is the resolution of the kernel's page-flip events (`tv_usec`), so a minimum duration
/// that is a whole number of refreshes rounded to the microsecond is not pushed a refresh later.
/// The 0.5% cap (the vblank-spacing limit `measure` checks) keeps a noisy clock from letting
/// frames show noticeably early: at 60 Hz ε ≤ 83.3 µs, at 144 Hz ≤ 34.7 µs. Before anything is
/// measured, and under VRR (no grid to measure against), ε is the 1 µs floor.
///
/// Fixed storage, no allocation after `init`.
public struct TimestampUncertainty: Codable, Equatable, Sendable {
    /// The floor of ε: the kernel's page-flip timestamps carry microseconds.
    public static let resolution: Nanoseconds = 1_000
    /// The cap of ε as a fraction of the refresh interval (0.5%).
    public static let capFraction = 0.005
    /// How many recent residuals the measured jitter is the maximum of.
    public static let window = 64
    /// Observations more than this many refreshes after the known vblank are not used (drift
    /// against the nominal refresh would accumulate into them).
    public static let maxStep: UInt64 = 8
    /// Residuals after which the measured jitter is trusted: before that, ``FramePacer``'s
    /// "not before" answers come from a jitter not yet known and may be revised.
    public static let settledObservations = 8

    private var residuals: [Nanoseconds]
    private var next = 0
    /// The largest |residual| in the window (0 before the first observation).
    public private(set) var measuredJitter: Nanoseconds = 0
    /// Residuals recorded since the start or the last ``reset()``.
    public private(set) var observations = 0

    public init() {
        residuals = Array(repeating: 0, count: Self.window)
    }

    /// Adds one residual (observed − predicted timestamp, ns).
    public mutating func record(_ residual: Nanoseconds) {
        residuals[next] = residual < 0 ? 0 &- residual : residual
        next = (next + 1) % Self.window
        observations += 1
        var m: Nanoseconds = 0
        for r in residuals where r > m { m = r }
        measuredJitter = m
    }

    /// Forgets every residual (the mode changed: the grid is a new one).
    public mutating func reset() {
        for i in residuals.indices { residuals[i] = 0 }
        next = 0
        observations = 0
        measuredJitter = 0
    }

    /// ε for a display refreshing every `refreshInterval` ns.
    public func epsilon(refreshInterval: Double) -> Nanoseconds {
        let cap = Self.cap(refreshInterval: refreshInterval)
        return Swift.min(Swift.max(measuredJitter, Self.resolution), Swift.max(cap, Self.resolution))
    }

    /// The cap of ε on a display refreshing every `refreshInterval` ns: ``capFraction`` of it.
    public static func cap(refreshInterval: Double) -> Nanoseconds {
        Nanoseconds((refreshInterval * capFraction).rounded(.down))
    }

    /// Fixed refresh: the refreshes a frame presented with a minimum duration `d` waits after the
    /// previous shown frame: the smallest n ≥ 1 with n × `refreshInterval` ≥ d − `epsilon`.
    public static func refreshes(
        forMinimumDuration d: Nanoseconds, refreshInterval: Double, epsilon: Nanoseconds
    ) -> UInt64 {
        let n = (Double(d &- epsilon) / refreshInterval).rounded(.up)
        return n > 1 ? UInt64(n) : 1
    }
}
