/// The analysis behind `cadence measure`: a panel's real cadence from kernel flip
/// timestamps. Pure arithmetic; the flips themselves come from the DRM layer.

/// One flip completion: vblank sequence (64-bit), kernel timestamp and receipt time.
public struct FlipTimestamp: Equatable, Sendable {
    public var sequence: UInt64
    /// Kernel timestamp, CLOCK_MONOTONIC ns.
    public var timestamp: Nanoseconds
    /// When the event was read, CLOCK_MONOTONIC ns.
    public var receivedAt: Nanoseconds
    /// When the flip was submitted, CLOCK_MONOTONIC ns (nil when unknown).
    public var submittedAt: Nanoseconds?
    public init(sequence: UInt64, timestamp: Nanoseconds, receivedAt: Nanoseconds, submittedAt: Nanoseconds? = nil) {
        self.sequence = sequence; self.timestamp = timestamp; self.receivedAt = receivedAt
        self.submittedAt = submittedAt
    }
}

/// One igt-style timestamp check.
public struct TimestampCheck: Equatable, Sendable {
    /// Stable key: "jitter", "vblankSpacing", "timestampNotAfterReceipt", "sequenceMonotonic".
    public var name: String
    /// true/false, or nil when the check does not apply (no hardware vblank, too few flips).
    public var passed: Bool?
    /// The worst observed value (a ratio for jitter and spacing, a count otherwise).
    public var value: Double
    /// The limit the value is held to.
    public var limit: Double
    /// One line explaining the result.
    public var detail: String
}

/// A panel's measured cadence.
public struct RefreshMeasurement: Equatable, Sendable {
    /// Refresh from the mode timing.
    public var nominalRefreshHz: Double
    /// 1e9 / slope of the least-squares fit of kernel timestamp against vblank sequence;
    /// nil without hardware vblank (the timestamps then carry no refresh information).
    public var measuredRefreshHz: Double?
    /// False when the driver has no vblank interrupt.
    public var hardwareVBlank: Bool
    /// Number of flip events.
    public var flips: Int
    /// Vblanks skipped between consecutive flips (sequence gaps); 0 without hardware vblank.
    public var missedVBlanks: Int
    /// Of ``missedVBlanks``: those whose flip was submitted only after the first skipped vblank
    /// had passed (the submitter was late).
    public var missedAfterLateSubmit: Int
    /// Of ``missedVBlanks``: those whose flip was submitted before the first skipped vblank yet
    /// did not latch there (the driver or the system was late). Unknown submissions count here
    /// only when their submission time is known; see ``missedUnattributed``.
    public var missedAfterTimelySubmit: Int
    /// Of ``missedVBlanks``: gaps whose flip has no submission time.
    public var missedUnattributed: Int
    /// Intervals between consecutive flip timestamps, in ms.
    public var intervalMs: SummaryStatistics
    /// Session gaps inside the measurement (``init(flips:nominalRefreshHz:hardwareVBlank:breaks:)``).
    public var sessionGaps: Int
    public var checks: [TimestampCheck]

    /// True when no applicable check failed.
    public var allChecksPassed: Bool { checks.allSatisfy { $0.passed != false } }

    /// The largest tolerated 3σ/mean of the per-vblank interval (0.5%).
    public static let jitterLimit = 0.005
    /// The largest tolerated |Δt − Δseq·T| / T (0.5%).
    public static let spacingLimit = 0.005

    /// Analyses `flips` (in arrival order) for a mode of `nominalRefreshHz`. `breaks` are the
    /// indices of flips that start a new stretch after a session gap (the VT was switched away
    /// and back): the step into such a flip is no interval, and the vblanks it skips were not
    /// missed, but the fit of timestamp against sequence spans the gap (the counter went on).
    public init(flips: [FlipTimestamp], nominalRefreshHz: Double, hardwareVBlank: Bool, breaks: Set<Int> = []) {
        self.nominalRefreshHz = nominalRefreshHz
        self.hardwareVBlank = hardwareVBlank
        self.flips = flips.count
        sessionGaps = breaks.filter { $0 > 0 && $0 < flips.count }.count
        let period = nominalRefreshHz > 0 ? 1e9 / nominalRefreshHz : 0

        var intervals: [Double] = []
        var perVBlank: [Double] = []
        var missed = 0
        var lateSubmit = 0, timelySubmit = 0, unattributed = 0
        var worstSpacing = 0.0
        var nonMonotonic = 0
        for (i, (a, b)) in zip(flips, flips.dropFirst()).enumerated() where !breaks.contains(i + 1) {
            let dt = Double(b.timestamp - a.timestamp)
            intervals.append(dt / 1e6)
            guard hardwareVBlank else { continue }
            if b.sequence <= a.sequence {
                nonMonotonic += 1
                continue
            }
            let dseq = b.sequence - a.sequence
            missed += Int(dseq - 1)
            if dseq > 1 {
                // The first vblank the flip could have latched at: one period after a's.
                let firstSkipped = Double(a.timestamp) + period
                if let sub = b.submittedAt, period > 0 {
                    if Double(sub) < firstSkipped { timelySubmit += Int(dseq - 1) } else { lateSubmit += Int(dseq - 1) }
                } else {
                    unattributed += Int(dseq - 1)
                }
            }
            perVBlank.append(dt / Double(dseq))
            if period > 0 { worstSpacing = max(worstSpacing, abs(dt - Double(dseq) * period) / period) }
        }
        intervalMs = SummaryStatistics(intervals)
        missedVBlanks = missed
        missedAfterLateSubmit = lateSubmit
        missedAfterTimelySubmit = timelySubmit
        missedUnattributed = unattributed

        measuredRefreshHz = hardwareVBlank ? RefreshFit(flips.lazy.map { ($0.sequence, $0.timestamp) }).hz : nil

        var checks: [TimestampCheck] = []
        let pv = SummaryStatistics(perVBlank)
        let jitter = pv.mean > 0 ? 3 * pv.stddev / pv.mean : 0
        checks.append(TimestampCheck(
            name: "jitter", passed: hardwareVBlank && pv.count >= 2 ? jitter < Self.jitterLimit : nil,
            value: jitter, limit: Self.jitterLimit,
            detail: hardwareVBlank ? "3σ/mean of the per-vblank interval = \(Self.percent(jitter)) (limit 0.5%)"
                : "not applicable: no hardware vblank"))
        checks.append(TimestampCheck(
            name: "vblankSpacing", passed: hardwareVBlank && perVBlank.count >= 1 ? worstSpacing <= Self.spacingLimit : nil,
            value: worstSpacing, limit: Self.spacingLimit,
            detail: hardwareVBlank ? "worst |Δt − Δseq·T|/T = \(Self.percent(worstSpacing)) (limit 0.5%)"
                : "not applicable: no hardware vblank"))
        let late = flips.filter { $0.timestamp > $0.receivedAt }.count
        checks.append(TimestampCheck(
            name: "timestampNotAfterReceipt", passed: flips.isEmpty ? nil : late == 0, value: Double(late), limit: 0,
            detail: "\(late) event timestamp(s) later than their receipt"))
        checks.append(TimestampCheck(
            name: "sequenceMonotonic", passed: hardwareVBlank && flips.count >= 2 ? nonMonotonic == 0 : nil,
            value: Double(nonMonotonic), limit: 0,
            detail: hardwareVBlank ? "\(nonMonotonic) non-increasing sequence step(s)" : "not applicable: no hardware vblank"))
        self.checks = checks
    }

    static func percent(_ ratio: Double) -> String {
        let v = (ratio * 100 * 10000).rounded() / 10000
        return "\(v)%"
    }
}
