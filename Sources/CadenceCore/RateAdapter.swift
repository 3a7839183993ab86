/// The thresholds of rate adaptation (``RunConfiguration/adapt``; Swappy's automatic swap interval, the ProMotion
/// guide's "drop to a rate you can sustain").
///
/// Only frames made at the current rate count (frames in flight at a switch were made at the old
/// one), and every switch starts the counting afresh:
///
/// - **down** one step when ``downMisses`` of the last ``downWindow`` counted frames followed
///   dropped refreshes (drop events, whatever their cause: a rate the system cannot hold is
///   not sustainable, whoever is late);
/// - **up** one step when ``upFrames`` counted frames in a row were shown without dropped
///   refreshes and the work of each (render start to the end of the copy into the scanout
///   buffer) took at most ``upHeadroom`` of the higher rate's frame time minus the commit margin.
public struct RateAdaptation: Equatable, Sendable {
    public var downMisses = 3
    public var downWindow = 30
    public var upFrames = 60
    public var upHeadroom = 0.75
    public init() {}
}

/// One switch of the display link's rate by rate adaptation (``RunConfiguration/adapt``); a
/// `{"record":"rate-switch",…}` line in the run log.
public struct RateSwitch: Codable, Equatable, Sendable {
    /// Always "rate-switch".
    public var record: String = "rate-switch"
    public var version: Int = 1
    /// The first frame made at the new rate.
    public var frame: Int
    /// The frame whose completion decided the switch.
    public var afterFrame: Int
    /// When it was decided (display clock, ns).
    public var timeNs: Int64
    public var fromHz: Double
    public var toHz: Double
    /// "down" or "up".
    public var direction: String
    /// Why, in one line.
    public var reason: String

    /// A rate as it is shown in labels: "60", "59.94", "72.5".
    public static func format(_ hz: Double) -> String { RateAdapter.hz(hz) }

    public init(frame: Int, afterFrame: Int, timeNs: Int64, fromHz: Double, toHz: Double, direction: String, reason: String) {
        self.frame = frame
        self.afterFrame = afterFrame
        self.timeNs = timeNs
        self.fromHz = fromHz
        self.toHz = toHz
        self.direction = direction
        self.reason = reason
    }
}

/// Decides the switches of rate adaptation from completed frames. The rates it moves between (its
/// ladder) are the configured range's rate and, below it, every rate top/n (top = the refresh,
/// or the VRR maximum) not below the range's minimum: the rates ``EffectiveRate`` selects
/// exactly on that display, as a fixed-refresh divisor or a VRR rate.
final class RateAdapter {
    let thresholds: RateAdaptation
    let range: FrameRateRange
    /// Allowed rates, highest first; ``index`` is the current one.
    let ladder: [Double]
    private(set) var index = 0
    private var misses: [Bool]
    private var counted = 0
    private var goodRun = 0

    init(range: FrameRateRange, refreshHz: Double, vrr: ClosedRange<Double>?, thresholds: RateAdaptation = .init()) {
        self.thresholds = thresholds
        self.range = range
        let start = EffectiveRate.select(for: range, refreshHz: refreshHz, vrr: vrr).hz
        let top = vrr?.upperBound ?? refreshHz
        var rates = [start]
        var n = 1
        while n <= 1000 {
            let r = top / Double(n)
            if r < range.minimum || r < 1 { break }
            if r < start * (1 - 1e-9) { rates.append(r) }
            n += 1
        }
        ladder = rates
        misses = Array(repeating: false, count: Swift.max(1, thresholds.downWindow))
    }

    var currentHz: Double { ladder[index] }

    /// The range that makes the link run at the current rate.
    var currentRange: FrameRateRange {
        let hz = currentHz
        return FrameRateRange(minimum: Swift.min(range.minimum, hz), maximum: hz, preferred: hz)
    }

    /// Counts a completed frame; returns (new rate, direction, reason) when the rate should change.
    func frameCompleted(_ r: FrameReport, commitMargin: Nanoseconds) -> (hz: Double, direction: String, reason: String)? {
        guard abs(r.effectiveRateHz - currentHz) <= currentHz * 1e-9 else { return nil }
        let miss = r.wasPresented && r.droppedRefreshes > 0
        misses[counted % misses.count] = miss
        counted += 1
        let window = Swift.min(counted, misses.count)
        var missed = 0
        for i in 0..<window where misses[i] { missed += 1 }
        if missed >= thresholds.downMisses && index + 1 < ladder.count {
            let from = currentHz
            index += 1
            restart()
            return (currentHz, "down", "\(missed) of the last \(window) frames at \(Self.hz(from)) Hz followed dropped refreshes")
        }
        guard index > 0 else { return nil }
        let budget = (1e9 / ladder[index - 1] - Double(commitMargin)) * thresholds.upHeadroom
        let end = r.copyEnd > 0 ? r.copyEnd : r.renderEnd
        let work = Double(end &- r.renderStart)
        if r.wasPresented && !miss && work <= budget { goodRun += 1 } else { goodRun = 0 }
        if goodRun >= thresholds.upFrames {
            let from = currentHz
            index -= 1
            restart()
            return (currentHz, "up", "\(thresholds.upFrames) frames at \(Self.hz(from)) Hz on time, each done within \(Self.ms(budget)) ms (\(Int(thresholds.upHeadroom * 100))% of a \(Self.hz(currentHz)) Hz frame less the commit margin)")
        }
        return nil
    }

    private func restart() {
        for i in misses.indices { misses[i] = false }
        counted = 0
        goodRun = 0
    }

    static func hz(_ v: Double) -> String {
        let r = (v * 1000).rounded() / 1000
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    static func ms(_ ns: Double) -> String {
        String((ns / 1e3).rounded() / 1e3)
    }
}
