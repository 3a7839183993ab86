import CadenceCore
import Foundation

/// The geometry of a run's picture, shared by the PNG, SVG and HTML renderers so that all three
/// put every mark at the same place:
///
/// - top: the frame-interval timeline (x = frame index, y = interval since the previous shown
///   frame in ms) with a horizontal gridline at every whole number of refreshes, and a marker
///   plus a vertical stripe at every frame that has a drop cause, coloured by cause, and a dashed
///   vertical line labelled "60→30 Hz" at every `--adapt` rate switch (its first frame);
/// - under it, when the log has context records with a CPU temperature: the temperature on
///   the same frame axis (each record placed at the frame shown at its time);
/// - bottom: the histogram of intervals in refresh units (1×, 2×, …);
/// - a legend of the causes that occur, and a title line with the summary.
public struct ReportChart {
    /// One point of the interval line.
    public struct Point: Equatable, Sendable {
        public var frame: Int
        public var intervalMs: Double
    }
    /// One marked frame.
    public struct Drop: Equatable, Sendable {
        public var frame: Int
        public var cause: DropCause
        public var outcome: FrameOutcome
        public var droppedRefreshes: Int
        /// Refreshes the frame was shown after its target (0 unless late).
        public var lateRefreshes: Int = 0
    }
    /// One temperature reading placed on the frame axis.
    public struct Temperature: Equatable, Sendable {
        /// Fractional frame index (interpolated between the frames shown around its time).
        public var frame: Double
        public var celsius: Double
    }
    /// A rectangle in picture coordinates (pixels, y down).
    public struct Box: Equatable, Sendable {
        public var x: Double, y: Double, width: Double, height: Double
        public var maxX: Double { x + width }
        public var maxY: Double { y + height }
    }

    public let width: Int
    public let height: Int
    public let summary: RunSummary
    public let refreshMs: Double
    public let points: [Point]
    public let drops: [Drop]
    /// The drops in log order, sorted by frame (the HTML report's table).
    let dropRows: [Drop]
    /// The `--adapt` rate switches of the log.
    public let rateSwitches: [RateSwitch]
    /// Histogram: index k counts intervals of k refreshes (k ≥ 1).
    public let histogram: [Int]
    /// The histogram's last bar: intervals of this many refreshes or more.
    public static let maxHistogramRefreshes = 4096
    public let firstFrame: Int
    public let lastFrame: Int
    /// Top of the y axis, in refreshes.
    public let yMaxRefreshes: Int
    public let timeline: Box
    public let histogramBox: Box
    /// CPU temperatures from the log's context records (empty: none recorded).
    public let temperatures: [Temperature]
    /// The temperature strip under the timeline (nil without temperatures).
    public let temperatureBox: Box?
    /// The temperature axis: lowest and highest °C shown.
    public let temperatureRange: ClosedRange<Double>
    /// The CPU frequency range recorded (mean over CPUs per record), MHz; nil without cpufreq.
    public let frequencyRangeMHz: ClosedRange<Double>?
    public let title: String
    /// The long-run picture's data, for a log of more than ``perFrameLimit(width:)`` frame
    /// records (then ``points`` is empty and ``drops`` are the worst events); nil: the per-frame picture.
    public let longRun: LongRun?
    /// Where the long-run picture's panels are (nil: the per-frame picture).
    public let longRunLayout: LongRunLayout?
    /// Frames with a drop cause (``drops``' count in the per-frame picture).
    public let markedFrames: Int

    /// The boxes of the long-run picture (``timeline`` is its top panel, dropped refreshes per bin).
    public struct LongRunLayout: Equatable, Sendable {
        /// The interval envelope per bin (min to max, and the mean), under the top panel.
        public var envelope: Box
        /// The temperature and frequency strip (nil: the log has no context records with either).
        public var context: Box?
        /// The small timelines of the worst events, worst first.
        public var events: [Box]
    }

    /// The most frame records drawn one point per shown frame for a picture `width` pixels wide:
    /// 8 points per pixel column of the timeline, at least 10,000; a longer log gets the
    /// long-run picture (``longRun``).
    public static func perFrameLimit(width: Int) -> Int { Swift.max(10_000, 8 * (Swift.max(480, width) - 88)) }

    /// The long-run picture's bins at most, for a picture `width` pixels wide: 2 per pixel column.
    static func maxBins(width: Int) -> Int { 2 * (Swift.max(480, width) - 88) }

    /// Builds the chart of `log` at the given picture size (at least 480×320).
    public init(log: RunLog, width: Int = 1200, height: Int = 720) {
        var b = Builder(estimatesRefresh: log.header == nil, width: width)
        for r in log.records { b.add(r) }
        self.init(consume b, log: log, width: width, height: height)
    }

    /// Reads the run log at `path` in one pass (``RunLog/stream(path:allowPartialLastLine:frame:)``)
    /// and builds its chart without keeping the frame records: what the picture needs of each
    /// shown frame (its number, interval and kernel timestamp: 40 bytes, then its point on the
    /// timeline, ``points``, 16 bytes), and of each frame with a drop cause. Returns the chart
    /// and the log without its records; the chart equals ``init(log:width:height:)``'s of the
    /// log read whole.
    public static func read(path: String, allowPartialLastLine: Bool = false, width: Int = 1200, height: Int = 720) throws -> (chart: ReportChart, log: RunLog) {
        try read(paths: [path], allowPartialLastLine: allowPartialLastLine, width: width, height: height)
    }

    /// What the chart keeps of the frame records, added one at a time in log order.
    struct Builder {
        /// A shown frame (on time or late).
        struct Shown {
            var frame: Int
            var id: UInt64
            var intervalNs: Int64
            var flipNs: Int64
            var intervalRefreshes: Int
        }
        var summary: LogSummaryBuilder
        var shown: [Shown] = []
        /// Frames with a drop cause, in log order.
        var drops: [(frame: Int, id: UInt64, drop: Drop)] = []
        var minFrame: Int? = nil
        var maxFrame: Int? = nil
        /// Frame records added, and those with a drop cause.
        var records = 0
        var marked = 0
        /// Past this many records, `shown` and `drops` are let go: the long-run picture.
        let perFrameLimit: Int
        var long: LongRunBuilder

        init(estimatesRefresh: Bool, width: Int = 1200) {
            summary = LogSummaryBuilder(estimatesRefresh: estimatesRefresh)
            perFrameLimit = ReportChart.perFrameLimit(width: width)
            long = LongRunBuilder(maxBins: ReportChart.maxBins(width: width))
        }

        /// Whether the chart is the long-run picture.
        var isLongRun: Bool { records > perFrameLimit }

        mutating func add(_ r: FrameRecord) {
            summary.add(r)
            minFrame = Swift.min(minFrame ?? r.frame, r.frame)
            maxFrame = Swift.max(maxFrame ?? r.frame, r.frame)
            records &+= 1
            if r.cause != nil { marked &+= 1 }
            long.add(r)
            if records > perFrameLimit {
                if !shown.isEmpty || !drops.isEmpty {
                    shown = []
                    drops = []
                }
                return
            }
            if r.outcome == .onTime || r.outcome == .late {
                shown.append(Shown(frame: r.frame, id: r.id, intervalNs: r.intervalNs, flipNs: r.flipNs, intervalRefreshes: r.intervalRefreshes))
            }
            if let c = r.cause {
                drops.append((r.frame, r.id, Drop(frame: r.frame, cause: c, outcome: r.outcome, droppedRefreshes: r.droppedRefreshes, lateRefreshes: r.lateRefreshes)))
            }
        }
    }

    init(_ b: consuming Builder, log: RunLog, width: Int, height: Int) {
        if b.isLongRun {
            self.init(longRun: b, log: log, width: width, height: height)
        } else {
            self.init(perFrame: b, log: log, width: width, height: height)
        }
    }

    /// The per-frame picture.
    private init(perFrame b: consuming Builder, log: RunLog, width: Int, height: Int) {
        longRun = nil
        longRunLayout = nil
        markedFrames = b.marked
        self.width = Swift.max(480, width)
        self.height = Swift.max(320, height)
        summary = b.summary.summary(of: log)
        refreshMs = LogAnalysis.refreshIntervalNs(log, estimatedHz: { b.summary.refreshHz(log) }) / 1e6
        firstFrame = b.minFrame ?? 0
        lastFrame = Swift.max(firstFrame &+ 1, b.maxFrame ?? 1)
        // In frame order (the order of the records sorted by frame and id), sorted in place.
        var byFrame = b.shown
        b.shown = []
        byFrame.sort { ($0.frame, $0.id) < ($1.frame, $1.id) }
        var pts: [Point] = []
        var hist = [Int](repeating: 0, count: 2)
        var maxRef = 0
        for r in byFrame where r.intervalNs > 0 {
            pts.append(Point(frame: r.frame, intervalMs: Double(r.intervalNs) / 1e6))
            // Bars up to ``maxHistogramRefreshes`` (68 s at 60 Hz); longer intervals count there.
            let cap = Double(Self.maxHistogramRefreshes)
            let k = r.intervalRefreshes > 0 ? r.intervalRefreshes : Int(Swift.min(cap, (Double(r.intervalNs) / 1e6 / refreshMs).rounded()))
            let kk = Swift.min(Self.maxHistogramRefreshes, Swift.max(1, k))
            if kk >= hist.count { hist += [Int](repeating: 0, count: kk - hist.count + 1) }
            hist[kk] += 1
            maxRef = Swift.max(maxRef, Int(Swift.min(64, (Double(r.intervalNs) / 1e6 / refreshMs).rounded(.up))))
        }
        points = pts
        drops = b.drops.sorted { ($0.frame, $0.id) < ($1.frame, $1.id) }.map(\.drop)
        dropRows = b.drops.map(\.drop).sorted { $0.frame < $1.frame }
        rateSwitches = log.rateSwitches
        histogram = hist
        yMaxRefreshes = Swift.min(64, Swift.max(3, maxRef + 1))
        // Shown frames by kernel timestamp (ties in frame order).
        // (Only when a context record has a temperature: without one, nothing is placed.)
        let anchors = !log.context.contains { $0.cpuTemperatureC?.isFinite == true } ? []
            : byFrame.filter { $0.flipNs > 0 }.map { (t: $0.flipNs, frame: Double($0.frame)) }.sorted { $0.t < $1.t }
        let temps = Self.place(log.context, onShown: anchors)
        temperatures = temps
        let lo = temps.map(\.celsius).min() ?? 0, hi = temps.map(\.celsius).max() ?? 1
        temperatureRange = (lo - 1).rounded(.down)...(hi + 1).rounded(.up)
        let mhz = log.context.compactMap(\.meanFrequencyMHz)
        frequencyRangeMHz = mhz.isEmpty ? nil : mhz.min()!...mhz.max()!
        let W = Double(self.width), H = Double(self.height)
        let hy: Double
        if temps.isEmpty {
            timeline = Box(x: 64, y: 56, width: W - 64 - 24, height: (H - 56) * 0.62 - 24)
            temperatureBox = nil
            hy = timeline.maxY + 40
        } else {
            timeline = Box(x: 64, y: 56, width: W - 64 - 24, height: (H - 56) * 0.50 - 24)
            let tb = Box(x: 64, y: timeline.maxY + 36, width: W - 64 - 24, height: (H - 56) * 0.14)
            temperatureBox = tb
            hy = tb.maxY + 40
        }
        histogramBox = Box(x: 64, y: hy, width: W - 64 - 24, height: H - hy - 28)
        title = Self.title(summary)
    }

    /// The title line: the summary in one line.
    static func title(_ s: RunSummary) -> String {
        let f = { (v: Double) in String(format: "%.2f", v) }
        return "\(s.backend) \(f(s.refreshHz)) Hz, effective \(f(s.effectiveRateHz)) Hz: \(s.frames) frames, "
            + "\(s.presented) shown, \(s.droppedRefreshes) dropped refreshes in \(s.dropEvents) events, "
            + "hitch \(f(s.hitchTimeRatio)) ms/s"
    }

    /// Places each context record's CPU temperature at the frame shown at its time: linear
    /// between the two shown frames around it, clamped to the first and last frame.
    static func place(_ context: [ContextRecord], on records: [FrameRecord]) -> [Temperature] {
        let shown = records.filter { $0.flipNs > 0 && ($0.outcome == .onTime || $0.outcome == .late) }
            .map { (t: $0.flipNs, frame: Double($0.frame)) }.sorted { $0.t < $1.t }
        return place(context, onShown: shown)
    }

    /// ``place(_:on:)`` with the shown frames' kernel timestamps and numbers, sorted by time.
    static func place(_ context: [ContextRecord], onShown shown: [(t: Int64, frame: Double)]) -> [Temperature] {
        guard let first = shown.first, let last = shown.last else { return [] }
        var out: [Temperature] = []
        for c in context {
            guard let celsius = c.cpuTemperatureC, celsius.isFinite else { continue }
            let frame: Double
            if c.timeNs <= first.t {
                frame = first.frame
            } else if c.timeNs >= last.t {
                frame = last.frame
            } else {
                var lo = 0, hi = shown.count - 1
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2
                    if shown[mid].t <= c.timeNs { lo = mid } else { hi = mid }
                }
                let a = shown[lo], b = shown[hi]
                let f = b.t > a.t ? Double(c.timeNs - a.t) / Double(b.t - a.t) : 0
                frame = a.frame + f * (b.frame - a.frame)
            }
            out.append(Temperature(frame: frame, celsius: celsius))
        }
        return out
    }

    /// x of a fractional frame position.
    public func x(framePosition f: Double) -> Double {
        let span = Double(lastFrame - firstFrame)
        return timeline.x + (f - Double(firstFrame)) / span * timeline.width
    }

    /// y of a temperature in the temperature strip (clamped); nil without the strip.
    public func y(celsius: Double) -> Double? {
        guard let b = temperatureBox else { return nil }
        let r = temperatureRange
        let span = Swift.max(0.001, r.upperBound - r.lowerBound)
        let v = Swift.min(Swift.max(celsius, r.lowerBound), r.upperBound)
        return b.maxY - (v - r.lowerBound) / span * b.height
    }

    /// The strip's caption: what is drawn, the temperature range and, when recorded, the CPU
    /// frequency range.
    public var temperatureCaption: String {
        let f1 = { (v: Double) in String(format: "%.1f", v) }
        let t = temperatures.map(\.celsius)
        var s = "CPU temperature (C) by frame: \(f1(t.min() ?? 0))-\(f1(t.max() ?? 0)) C"
        if let f = frequencyRangeMHz { s += "; CPU frequency \(Int(f.lowerBound.rounded()))-\(Int(f.upperBound.rounded())) MHz" }
        return s
    }

    /// x of frame `frame` on the timeline.
    public func x(frame: Int) -> Double {
        let span = Double(lastFrame) - Double(firstFrame)
        return timeline.x + (Double(frame) - Double(firstFrame)) / span * timeline.width
    }

    /// y of an interval (ms) on the timeline (clamped to the plot).
    public func y(intervalMs: Double) -> Double {
        let top = Double(yMaxRefreshes) * refreshMs
        let v = Swift.min(Swift.max(intervalMs, 0), top)
        return timeline.maxY - v / top * timeline.height
    }

    /// Centre of the marker of a drop at `frame` (a row of markers along the top of the plot).
    public func markerCenter(frame: Int) -> (x: Double, y: Double) { (x(frame: frame), timeline.y + 10) }
    /// Marker radius.
    public var markerRadius: Double { 5 }

    /// The histogram bars: refreshes k, count, and the bar's box.
    public var histogramBars: [(refreshes: Int, count: Int, box: Box)] {
        let kinds = Swift.max(1, histogram.count - 1)
        let slot = histogramBox.width / Double(kinds)
        let top = Double(histogram.max() ?? 1)
        let logScale = histogramLogScale
        var out: [(Int, Int, Box)] = []
        for k in 1..<histogram.count {
            let n = histogram[k]
            // Non-empty bars are at least 2 px tall so that a single interval stays visible.
            let share =
                logScale ? (log10(Double(Swift.max(1, n))) + 1) / (log10(top) + 1) : Double(n) / top
            let h = top > 0 && n > 0 ? Swift.max(2, share * (histogramBox.height - 16)) : 0
            let bx = histogramBox.x + Double(k - 1) * slot + slot * 0.15
            out.append((k, n, Box(x: bx, y: histogramBox.maxY - h, width: slot * 0.7, height: h)))
        }
        return out
    }

    /// Whether the histogram's counts are drawn on a log scale: when the largest count is more
    /// than 1,000 times the smallest non-zero one (the few drops of a long run are then visible
    /// beside the millions of on-time intervals; a picture of up to ``perFrameLimit(width:)``
    /// frames with a handful of drops keeps the linear scale).
    public var histogramLogScale: Bool {
        let counts = histogram.dropFirst().filter { $0 > 0 }
        guard let lo = counts.min(), let hi = counts.max() else { return false }
        return Double(hi) > 1000 * Double(lo)
    }

    /// The histogram's caption.
    public var histogramCaption: String { "intervals in refresh units" + (histogramLogScale ? " (count: log scale)" : "") }

    /// The causes present, in `DropCause.allCases` order.
    public var causesPresent: [DropCause] {
        if let lr = longRun {
            return DropCause.allCases.filter { c in lr.bins.indices.contains { lr.count(bin: $0, cause: c) > 0 } }
        }
        return DropCause.allCases.filter { c in drops.contains { $0.cause == c } }
    }

    /// The colour of each cause (RGB), distinct and readable on white.
    public static func color(_ c: DropCause) -> UInt32 {
        switch c {
        case .renderLate: return 0xD32F2F
        case .copyLate: return 0x795548
        case .schedulerLate: return 0xF57C00
        case .flipLate: return 0x7B1FA2
        case .busy: return 0x1976D2
        case .deviceLost: return 0x212121
        case .disconnected: return 0x616161
        case .sessionPaused: return 0x9E9E9E
        }
    }
    public static let lineColor: UInt32 = 0x00897B
    /// Rate-switch lines and labels.
    public static let rateSwitchColor: UInt32 = 0x3949AB
    /// The label of a rate switch: "60→30 Hz" ("60->30 Hz" in `ascii`, for the bitmap font).
    public static func label(_ s: RateSwitch, ascii: Bool = false) -> String {
        "\(RateSwitch.format(s.fromHz))\(ascii ? "->" : "→")\(RateSwitch.format(s.toHz)) Hz"
    }
    public static let gridColor: UInt32 = 0xD0D0D0
    public static let axisColor: UInt32 = 0x404040
    public static let barColor: UInt32 = 0x546E7A
    public static let temperatureColor: UInt32 = 0xC2185B
    /// The CPU frequency line of the long-run picture.
    public static let frequencyColor: UInt32 = 0x1565C0
    public static let background: UInt32 = 0xFFFFFF
}
