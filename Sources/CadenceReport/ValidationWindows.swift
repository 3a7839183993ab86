import CadenceCore
import Foundation

/// What `cadence validate` judges: the run's frames after the warm-up (`--warmup`), as a whole
/// and, with `--window`, in consecutive windows of fixed length.
///
/// A frame belongs to the moment it reached the screen (its kernel flip timestamp), or, when it
/// never did, to its target vblank. Time 0 is the run's first display-link callback (the
/// vblank the first frame was made at). Frames before `warmup` are ignored entirely. Windows
/// start at `warmup` and are `window` long; the last part of the run that does not fill a
/// whole window is judged only overall (``remainderSeconds``).
///
/// Overall, the rate is shown frames per second of presentation, as the run's summary has it:
/// the intervals between judged shown frames over the time from the first judged shown frame to
/// the last, (N − 1) / span for N frames. The first judged frame's own interval reaches back into
/// the warm-up and is not one of them (it still counts for the interval statistics and jitter).
/// A run with seat-session gaps (``RunInfo/sessionGaps``) takes 1 / the mean of those intervals,
/// as the run does (no interval spans a gap).
/// Inside a window the rate is shown frames per second of their intervals (1 / mean interval)
/// and a window in which nothing was shown has rate 0; the refresh is fitted to the window's own
/// kernel timestamps and sequences.
public struct ValidationWindows {
    /// One window: seconds since the run's start, and what was measured in it.
    public struct Window {
        public var start: Double
        public var end: Double
        public var summary: RunSummary
        public var measuredRefreshHz: Double?
        public var largestDropEvent: Int
    }

    /// Everything after the warm-up.
    public var overall: RunSummary
    public var overallRefreshHz: Double?
    public var overallLargestDropEvent: Int
    /// Frames judged (after the warm-up) and frames ignored (in it).
    public var judgedFrames: Int
    public var warmupFrames: Int
    public var windows: [Window]
    /// Seconds at the end judged only overall (shorter than one window).
    public var remainderSeconds: Double
    /// The window length in seconds (nil without `--window`).
    public var windowSeconds: Double?

    /// What the summaries need besides the frames: the run's display and configuration.
    public struct RunInfo {
        public var backend: String
        public var refreshHz: Double
        public var vrr: ClosedRange<Double>?
        public var effectiveRateHz: Double
        public var latency: Int
        public var end: RunEnd
        /// False on drivers without a vblank interrupt (synthetic sequences): no refresh fit.
        public var hardwareVBlank: Bool
        /// True when the run had seat-session gaps: the overall rate is then 1 / mean interval.
        public var sessionGaps: Bool
        public init(backend: String, refreshHz: Double, vrr: ClosedRange<Double>?, effectiveRateHz: Double, latency: Int,
                    end: RunEnd, hardwareVBlank: Bool, sessionGaps: Bool = false) {
            self.backend = backend
            self.refreshHz = refreshHz
            self.vrr = vrr
            self.effectiveRateHz = effectiveRateHz
            self.latency = latency
            self.end = end
            self.hardwareVBlank = hardwareVBlank
            self.sessionGaps = sessionGaps
        }

        /// The run's own description of itself, from its summary.
        public init(_ s: RunSummary, hardwareVBlank: Bool) {
            self.init(backend: s.backend, refreshHz: s.refreshHz,
                      vrr: s.vrrRangeHz.flatMap { $0.count == 2 ? $0[0]...$0[1] : nil },
                      effectiveRateHz: s.effectiveRateHz, latency: s.latency, end: s.end,
                      hardwareVBlank: hardwareVBlank, sessionGaps: (s.sessionGaps ?? 0) > 0)
        }
    }

    /// Splits `frames` (any order). `warmupNs` ≥ 0; `windowNs` nil or > 0.
    public init(frames: [FrameReport], info: RunInfo, warmupNs: Int64, windowNs: Int64?) {
        var origin: Int64 = .max
        for r in frames where r.callbackTimestamp > 0 { origin = Swift.min(origin, r.callbackTimestamp) }
        if origin == .max {
            for r in frames where Self.time(r) > 0 { origin = Swift.min(origin, Self.time(r)) }
        }
        if origin == .max { origin = 0 }
        let judgedFrom: Int64 = origin + warmupNs
        let judged = frames.filter { Self.time($0) >= judgedFrom }.sorted { Self.time($0) < Self.time($1) }
        warmupFrames = frames.count - judged.count
        judgedFrames = judged.count
        let whole = Self.measure(judged, info: info, rateFromIntervals: false)
        overall = whole.summary
        overallRefreshHz = whole.refresh
        overallLargestDropEvent = whole.largest
        windowSeconds = windowNs.map { Double($0) / 1e9 }
        windows = []
        remainderSeconds = 0
        guard let w = windowNs, w > 0, let last = judged.last else { return }
        let lastTime: Int64 = Self.time(last)
        let count = Int((lastTime - judgedFrom) / w)
        var i = 0
        for k in 0..<count {
            let lo = judgedFrom + Int64(k) * w, hi = lo + w
            var members: [FrameReport] = []
            while i < judged.count && Self.time(judged[i]) < hi {
                if Self.time(judged[i]) >= lo { members.append(judged[i]) }
                i += 1
            }
            let m = Self.measure(members, info: info, rateFromIntervals: true)
            windows.append(Window(start: Double(lo - origin) / 1e9, end: Double(hi - origin) / 1e9,
                                  summary: m.summary, measuredRefreshHz: m.refresh, largestDropEvent: m.largest))
        }
        remainderSeconds = Double(lastTime - (judgedFrom + Int64(count) * w)) / 1e9
    }

    /// When a frame happened: its flip timestamp, else its target vblank.
    static func time(_ r: FrameReport) -> Int64 { r.presentedTime > 0 ? r.presentedTime : r.targetTime }

    private static func measure(_ frames: [FrameReport], info: RunInfo, rateFromIntervals: Bool)
        -> (summary: RunSummary, refresh: Double?, largest: Int) {
        var acc = FrameAccounting(expectedFrames: frames.count + 16)
        var largest = 0
        var fit = RefreshFit()
        // The intervals inside the span of these frames: every shown frame's but the first's.
        var inside = 0
        var insideNs: Int64 = 0
        var firstShown = true
        for r in frames {
            acc.add(r)
            if r.wasPresented {
                largest = max(largest, r.droppedRefreshes)
                if r.sequence > 0 { fit.add(sequence: r.sequence, timestamp: r.presentedTime) }
                if !firstShown && r.interval > 0 {
                    inside += 1
                    insideNs &+= r.interval
                }
                firstShown = false
            }
        }
        var s = RunSummary(accounting: acc, backend: info.backend, refreshHz: info.refreshHz, vrr: info.vrr,
                           effectiveRateHz: info.effectiveRateHz, latency: info.latency, end: info.end)
        if rateFromIntervals {
            s.measuredRateHz = s.intervalMs.count > 0 && s.intervalMs.mean > 0 ? 1000 / s.intervalMs.mean : 0
        } else if inside != s.intervalMs.count {
            // The first judged frame's interval reached into the warm-up: (N − 1) / span, not N / span.
            if info.sessionGaps {
                s.measuredRateHz = inside > 0 && insideNs > 0 ? Double(inside) * 1e9 / Double(insideNs) : 0
            } else {
                s.measuredRateHz = s.durationSeconds > 0 ? Double(inside) / s.durationSeconds : 0
            }
        } else if info.sessionGaps && s.intervalMs.mean > 0 {
            // As the run's summary: with gaps, 1 / the mean interval between shown frames.
            s.measuredRateHz = 1e3 / s.intervalMs.mean
        }
        return (s, info.hardwareVBlank ? fit.hz : nil, largest)
    }

    /// Judges `criteria` overall and in every window: a criterion passes only when it holds
    /// overall and in each window. With windows, the detail adds the worst window.
    public func judge(_ criteria: ValidationCriteria) -> [CriterionResult] {
        var results = criteria.evaluate(overall, measuredRefreshHz: overallRefreshHz, largestDropEvent: overallLargestDropEvent)
        guard let ws = windowSeconds, !windows.isEmpty else { return results }
        let perWindow = windows.map { criteria.evaluate($0.summary, measuredRefreshHz: $0.measuredRefreshHz, largestDropEvent: $0.largestDropEvent) }
        let len = String(format: "%g", ws)
        for i in results.indices {
            var worst = 0
            for k in 1..<perWindow.count where perWindow[k][i].isWorse(than: perWindow[worst][i]) { worst = k }
            let r = perWindow[worst][i]
            let w = windows[worst]
            let failing = perWindow.filter { !$0[i].passed }.count
            let span = String(format: "%.1f–%.1f s", w.start, w.end)
            var detail = results[i].detail + "; worst \(len) s window \(span): " + r.detail
            if failing > 0 { detail += " (\(failing) of \(windows.count) windows fail)" }
            results[i].detail = detail
            results[i].passed = results[i].passed && failing == 0
        }
        return results
    }
}
