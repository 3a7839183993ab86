import CadenceCore
import Foundation

extension FrameReport {
    /// The frame a log line describes (the inverse of `FrameRecord.init(_:)` for every field the
    /// log keeps; `waitedOnLateFlip` is not logged and stays false, `schedulerDelay` is 0 in
    /// logs written before it was recorded).
    public init(record r: FrameRecord) {
        self.init()
        id = r.id
        frameIndex = r.frame
        switch r.intent.kind {
        case .at: intent = .at(r.intent.requestedTimeNs ?? r.intent.targetTimeNs, nearest: false)
        case .atNearest: intent = .at(r.intent.requestedTimeNs ?? r.intent.targetTimeNs, nearest: true)
        case .afterMinimumDuration: intent = .afterMinimumDuration(r.intent.minDurationNs ?? 0)
        case .next: intent = .nextOpportunity
        }
        range = r.intent.range
        effectiveRateHz = r.effectiveRateHz
        latency = r.latency
        callbackTimestamp = r.callbackNs
        wakeTime = r.wakeNs
        schedulerDelay = r.schedulerDelayNs ?? 0
        deadline = r.deadlineNs
        targetTime = r.intent.targetTimeNs
        targetSequence = r.intent.targetSequence
        renderStart = r.renderStartNs
        renderEnd = r.renderEndNs
        copyEnd = r.copyEndNs ?? 0
        commitTime = r.commitNs
        busyRetries = r.busyRetries
        presentedTime = r.flipNs
        sequence = r.sequence
        receivedTime = r.receivedNs
        outcome = r.outcome
        lateRefreshes = r.lateRefreshes
        droppedRefreshes = r.droppedRefreshes
        hitch = r.hitchNs
        interval = r.intervalNs
        intervalRefreshes = r.intervalRefreshes
        crtc = r.crtc
        cause = r.cause
        if let late = r.lateVBlankEvents {
            lateVBlankEvents = late.compactMap {
                $0.count == 2 && $0[0] >= 0 ? VBlankReceipt(sequence: UInt64($0[0]), receivedAt: $0[1]) : nil
            }
        }
        if let seen = r.vblanks {
            vblanks = seen.compactMap {
                $0.count == 2 && $0[0] >= 0 ? VBlank(sequence: UInt64($0[0]), timestamp: $0[1]) : nil
            }
        }
    }
}

/// Summaries computed from logged frames, exactly as the run computed them.
public enum LogAnalysis {
    /// The summary of `log` from its frame records: the same accounting the run used, so for a
    /// complete log it equals the summary in the log's end line (apart from `endReason`), field for
    /// field: with `--adapt` its `rateSwitches`, with seat-session gaps its `sessionGaps`,
    /// `sessionGapSeconds` and `measuredRateHz` (1 / the mean interval between shown frames, as
    /// the run computes it when it had gaps).
    /// Without a header (a log from elsewhere) the refresh is estimated from the kernel timestamps.
    public static func summary(of log: RunLog) -> RunSummary {
        var b = LogSummaryBuilder(estimatesRefresh: log.header == nil)
        for r in log.records { b.add(r) }
        return b.summary(of: log)
    }

    /// The seat-session gaps of `log` as the run counted them (nil when none): every resume
    /// with its `gapNs`, and a pause still open at the end (a run that ended while its VT was
    /// away) up to the end — the end line's own figures when the log has one, else the last
    /// time the file knows of. A later file of a rotated log counts its own session lines, not
    /// those repeated from the file before.
    static func sessionGaps(of log: RunLog, lastTime: Int64?) -> (count: Int, seconds: Double)? {
        var gaps = 0
        var total: Int64 = 0
        var open: Int64? = nil
        for c in log.sessions.dropFirst(log.carriedSessions) {
            switch c.event {
            case .paused:
                open = c.timeNs
            case .resumed:
                gaps += 1
                total &+= c.gapNs ?? 0
                open = nil
            }
        }
        if let since = open {
            if log.continuation == nil, let e = log.end?.summary, let n = e.sessionGaps, let t = e.sessionGapSeconds {
                return (n, t)
            }
            let last = lastTime ?? since
            gaps += 1
            total &+= Swift.max(0, last &- since)
        }
        return gaps > 0 ? (gaps, Double(total) / 1e9) : nil
    }

    /// The rate frames were intended at when the log has no end line (a killed run, a file of a
    /// rotated log), as the run computes it: the link's rate of the last frame, limited by
    /// `--content-rate` or by what `--min-duration` allows (with ε at its 1 µs floor).
    static func intendedRateHz(_ log: RunLog, lastRateHz: Double?, refreshHz: Double) -> Double {
        let link = lastRateHz ?? refreshHz
        guard let h = log.header else { return link }
        if let c = h.contentRateHz { return Swift.min(c, link) }
        if let d = h.minDurationNs, d > 0 {
            if h.vrrRangeHz != nil { return Swift.min(link, 1e9 / Double(d)) }
            let n = TimestampUncertainty.refreshes(forMinimumDuration: d, refreshInterval: h.refreshIntervalNs,
                                                   epsilon: TimestampUncertainty.resolution)
            return Swift.min(link, h.refreshHz / Double(n))
        }
        return link
    }

    /// Refresh estimated by a least-squares fit of kernel timestamp against vblank sequence.
    public static func estimatedRefreshHz(_ records: [FrameRecord]) -> Double {
        var e = RefreshEstimate()
        for r in records { e.add(r) }
        return e.refreshHz
    }

    /// What ``estimatedRefreshHz(_:)`` needs of each record: kernel timestamp against vblank
    /// sequence, and the interval per refresh (only logs without a header need it).
    struct RefreshEstimate {
        var fit = RefreshFit()
        var perRefresh: [Double] = []
        mutating func add(_ r: FrameRecord) {
            if r.flipNs > 0 && r.sequence > 0 { fit.add(sequence: r.sequence, timestamp: r.flipNs) }
            if r.intervalRefreshes > 0 { perRefresh.append(Double(r.intervalNs) / Double(r.intervalRefreshes)) }
        }
        var refreshHz: Double {
            if let hz = fit.hz { return hz }
            let m = SummaryStatistics(perRefresh).p50
            return m > 0 ? 1e9 / m : 0
        }
    }

    /// Refresh interval in ns of a log (header, else estimated).
    public static func refreshIntervalNs(_ log: RunLog) -> Double {
        refreshIntervalNs(log, estimatedHz: { estimatedRefreshHz(log.records) })
    }

    static func refreshIntervalNs(_ log: RunLog, estimatedHz: () -> Double) -> Double {
        if let h = log.header { return h.refreshIntervalNs }
        let hz = estimatedHz()
        return hz > 0 ? 1e9 / hz : 16_666_666.667
    }

    /// Summary fields that differ between `a` and `b`, ignoring `backend` and `endReason`
    /// (a replay or a re-analysis runs on another backend and ends on its own), and fields one
    /// side does not have (a summary written before they existed). Empty = equal.
    public static func differences(_ a: RunSummary, _ b: RunSummary) -> [String] {
        differences(a, b, tolerance: [:])
    }

    /// ``differences(_:_:)``, a field named in `tolerance` counting as equal when every number
    /// in it is within (absolute, relative) of the other side's.
    static func differences(_ a: RunSummary, _ b: RunSummary, tolerance: [String: (Double, Double)]) -> [String] {
        var x = a, y = b
        x.backend = ""; y.backend = ""
        x.end = .completed; y.end = .completed
        if x == y { return [] }
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        guard let dx = try? enc.encode(x), let dy = try? enc.encode(y),
              let ox = try? JSONSerialization.jsonObject(with: dx) as? [String: Any],
              let oy = try? JSONSerialization.jsonObject(with: dy) as? [String: Any]
        else { return ["(summary)"] }
        func text(_ v: Any?) -> String {
            guard let v = v else { return "nil" }
            if let d = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .fragmentsAllowed]) {
                return String(decoding: d, as: UTF8.self)
            }
            return "\(v)"
        }
        var out: [String] = []
        var skipped = false
        var tolerated = false
        for k in Set(ox.keys).union(oy.keys).sorted() {
            guard let a = ox[k], let b = oy[k] else {
                skipped = true
                continue
            }
            let vx = text(a)
            let vy = text(b)
            if vx == vy { continue }
            if let t = tolerance[k], withinTolerance(a, b, t) {
                tolerated = true
            } else {
                out.append("\(k): \(vx) vs \(vy)")
            }
        }
        return out.isEmpty && !skipped && !tolerated ? ["(rounding)"] : out
    }
}

/// The summary of a run log whose frame records are added one at a time, in log order, in
/// bounded memory (``LogAnalysis/summary(of:)`` is this with every record of the log): the
/// run's accounting, and what the summary needs of the first and last records.
public struct LogSummaryBuilder {
    var accounting = FrameAccounting()
    var firstLatency: Int? = nil
    var lastRateHz: Double? = nil
    /// The latest time any record knows of (a seat session still paused at the end counts to it).
    var lastTime: Int64? = nil
    /// Only for a log without a header (its refresh is estimated from the records).
    var estimate: LogAnalysis.RefreshEstimate? = nil

    /// An empty summary; `estimatesRefresh` for a log without a header (it keeps each record's
    /// vblank and timestamp, 24 bytes per record, to estimate the refresh).
    public init(estimatesRefresh: Bool = false) {
        if estimatesRefresh { estimate = .init() }
    }

    /// Adds the next frame record of the log.
    public mutating func add(_ r: FrameRecord) {
        accounting.add(FrameReport(record: r))
        if firstLatency == nil { firstLatency = r.latency }
        lastRateHz = r.effectiveRateHz
        let t = Swift.max(r.flipNs, r.receivedNs, r.commitNs, r.intent.targetTimeNs)
        lastTime = Swift.max(lastTime ?? t, t)
        estimate?.add(r)
    }

    /// The refresh of `log` in Hz: its header's, else estimated from the records added.
    func refreshHz(_ log: RunLog) -> Double { log.header?.refreshHz ?? estimate?.refreshHz ?? 0 }

    /// The summary of `log` (header, end line, rate switches, sessions) with the records added.
    public func summary(of log: RunLog) -> RunSummary {
        let refreshHz = refreshHz(log)
        let vrr = log.header?.vrrRangeHz.flatMap { $0.count == 2 ? $0[0]...$0[1] : nil }
        let effective = log.end?.summary.effectiveRateHz ?? LogAnalysis.intendedRateHz(log, lastRateHz: lastRateHz, refreshHz: refreshHz)
        let end = log.end?.summary.end ?? (log.rotated != nil ? .rotated : .unfinished)
        // The latency in effect, as the run's summary has it and each frame record carries: the
        // one asked for (the header's) limited by the finished frames the display could hold (3
        // asked of a display holding 1 ran at 2).
        let latency = firstLatency ?? log.header?.latency ?? 1
        var s = RunSummary(accounting: accounting, backend: log.header?.backend ?? "unknown", refreshHz: refreshHz, vrr: vrr,
                           effectiveRateHz: effective, latency: latency, end: end)
        if log.header?.adapt == true { s.rateSwitches = log.rateSwitches.count }
        s.scanout = LogScanout.judge(log)
        if let (gaps, seconds) = LogAnalysis.sessionGaps(of: log, lastTime: lastTime) {
            s.sessionGaps = gaps
            s.sessionGapSeconds = seconds
            // As the run: the rate over the intervals between shown frames (none spans a gap).
            if s.intervalMs.mean > 0 { s.measuredRateHz = 1e3 / s.intervalMs.mean }
        }
        return s
    }
}

/// PresentMon-style CSV of a run's frames, one row per frame (``csv(_:)``: in frame order;
/// ``Writer``, during a run: in completion order, as the log).
///
/// Columns: `Frame, Sequence, TargetSequence, TimeInSeconds, MsBetweenPresents,
/// MsBetweenDisplayChange, MsUntilRenderComplete, MsUntilDisplayed, MsHitch, Dropped, Outcome,
/// LateRefreshes, DroppedRefreshes, IntervalRefreshes, Cause, CRTC, MsCopy`; `MsCopy` is the time
/// from render end to the end of the copy into the scanout buffer (NA in logs without it).
/// A "present" is the frame handed to the pacer (its render end); "display" is the kernel flip
/// timestamp. `Dropped` is 1 when the frame never reached the screen (PresentMon's meaning);
/// `DroppedRefreshes` counts the stale refreshes before it. Not-applicable values are `NA`.
public enum CSVExport {
    public static let columns = [
        "Frame", "Sequence", "TargetSequence", "TimeInSeconds", "MsBetweenPresents", "MsBetweenDisplayChange",
        "MsUntilRenderComplete", "MsUntilDisplayed", "MsHitch", "Dropped", "Outcome", "LateRefreshes",
        "DroppedRefreshes", "IntervalRefreshes", "Cause", "CRTC", "MsCopy",
    ]

    /// Writes rows incrementally (during a run) with one write(2) per row.
    public final class Writer {
        private let file: LineFile
        private var origin: Int64? = nil
        private var lastPresent: Int64? = nil
        public init(path: String) throws {
            file = try LineFile(path: path)
            try file.write(line: CSVExport.columns.joined(separator: ","))
        }
        /// Appends one frame (frames arrive in completion order; the log keeps the same order).
        public func write(_ r: FrameRecord) throws {
            try file.write(line: CSVExport.row(r, origin: &origin, lastPresent: &lastPresent))
        }
        public func close() { file.close() }
        /// The file's path.
        public var path: String { file.path }
        /// Frame rows written completely (the header line not counted).
        public var rows: Int { Swift.max(0, file.linesWritten - 1) }
        public func discard() { file.discard() }
    }

    /// The whole CSV for `records` (sorted by frame).
    public static func csv(_ records: [FrameRecord]) -> String {
        var out = columns.joined(separator: ",") + "\n"
        var origin: Int64? = nil
        var last: Int64? = nil
        for r in records.sorted(by: { ($0.frame, $0.id) < ($1.frame, $1.id) }) {
            out += row(r, origin: &origin, lastPresent: &last) + "\n"
        }
        return out
    }

    static func ms(_ ns: Int64) -> String {
        let v = Double(ns) / 1e6
        return String(format: "%.3f", abs(v) < 0.0005 ? 0 : v)
    }

    static func row(_ r: FrameRecord, origin: inout Int64?, lastPresent: inout Int64?) -> String {
        let present = r.renderEndNs
        if origin == nil { origin = present }
        let shown = r.outcome == .onTime || r.outcome == .late
        var f: [String] = []
        f.append(String(r.frame))
        f.append(shown ? String(r.sequence) : "NA")
        f.append(String(r.intent.targetSequence))
        f.append(String(format: "%.6f", Double(present - (origin ?? present)) / 1e9))
        f.append(lastPresent.map { ms(present - $0) } ?? "NA")
        f.append(shown && r.intervalNs > 0 ? ms(r.intervalNs) : "NA")
        f.append(ms(r.renderEndNs - r.renderStartNs))
        f.append(shown ? ms(r.flipNs - present) : "NA")
        f.append(shown ? ms(r.hitchNs) : "NA")
        f.append(shown ? "0" : "1")
        f.append(r.outcome.rawValue)
        f.append(String(r.lateRefreshes))
        f.append(String(r.droppedRefreshes))
        f.append(String(r.intervalRefreshes))
        f.append(r.cause?.rawValue ?? "")
        f.append(String(r.crtc))
        f.append(r.copyEndNs.map { $0 > 0 ? ms($0 - r.renderEndNs) : "NA" } ?? "NA")
        lastPresent = present
        return f.joined(separator: ",")
    }
}
