import CadenceCore
import Foundation

/// The long-run picture of a run whose log has more frames than one timeline shows
/// (``ReportChart/perFrameLimit(width:)``): what ``ReportChart`` keeps instead of a point per
/// shown frame. Built while reading, in memory that does not grow with the log: at most
/// ``maxBins`` bins of consecutive frame numbers (their width doubles, merging pairs, when the
/// run outgrows them) and the ``worstCount`` worst drop events more than ``neighbourhood``
/// frames apart (of the ``candidateCount`` worst), each with ``neighbourhood`` shown frames on
/// either side.
public struct LongRun: Equatable, Sendable {
    /// What one bin of frames (frame numbers `origin + index·binWidth ..< origin + (index+1)·binWidth`) holds.
    public struct Bin: Equatable, Sendable {
        /// Frame records.
        public var frames = 0
        /// Shown frames (on time or late).
        public var shown = 0
        /// Dropped refreshes of the shown frames (as `RunSummary.droppedRefreshes`).
        public var droppedRefreshes = 0
        /// Shown frames with dropped refreshes (as `RunSummary.dropEvents`).
        public var dropEvents = 0
        /// Shown frames with an interval (> 0).
        public var intervals = 0
        /// Smallest, largest and summed interval of those frames, ns.
        public var minIntervalNs = Int64.max
        public var maxIntervalNs = Int64.min
        public var sumIntervalNs: Int64 = 0
        /// Earliest and latest kernel timestamp of the shown frames, ns (`Int64.max`/`min`: none).
        public var minTimeNs = Int64.max
        public var maxTimeNs = Int64.min

        /// Mean interval, ns (0 without intervals).
        public var meanIntervalNs: Double { intervals > 0 ? Double(sumIntervalNs) / Double(intervals) : 0 }

        mutating func merge(_ o: Bin) {
            frames &+= o.frames
            shown &+= o.shown
            droppedRefreshes &+= o.droppedRefreshes
            dropEvents &+= o.dropEvents
            intervals &+= o.intervals
            minIntervalNs = Swift.min(minIntervalNs, o.minIntervalNs)
            maxIntervalNs = Swift.max(maxIntervalNs, o.maxIntervalNs)
            sumIntervalNs &+= o.sumIntervalNs
            minTimeNs = Swift.min(minTimeNs, o.minTimeNs)
            maxTimeNs = Swift.max(maxTimeNs, o.maxTimeNs)
        }
    }

    /// One of the worst drop events with the shown frames around it (by frame).
    public struct Event: Equatable, Sendable {
        public var drop: ReportChart.Drop
        /// The shown frames around it: up to ``LongRun/neighbourhood`` before (and the frame itself
        /// when shown), up to ``LongRun/neighbourhood`` after, in frame order.
        public var points: [ReportChart.Point]
    }

    /// Temperature and frequency of the context records that fall in one bin.
    public struct ContextBin: Equatable, Sendable {
        public var bin: Int
        public var minCelsius: Double?
        public var maxCelsius: Double?
        public var meanFrequencyMHz: Double?
    }

    /// How many worst events are kept.
    public static let worstCount = 6
    /// How many of the worst events are kept while reading, to choose ``worstCount`` apart
    /// from them: each in turn, worst first, unless it is within ``neighbourhood`` frames of one
    /// chosen (then the rest, worst first, when fewer are apart).
    public static let candidateCount = 64
    /// Shown frames kept on either side of a worst event.
    public static let neighbourhood = 60

    /// The most bins (even); the bins in use are at most this many.
    public let maxBins: Int
    /// The frame number of bin 0's first frame.
    public let origin: Int
    /// Frames per bin (a power of two).
    public let binWidth: Int
    public let bins: [Bin]
    /// Frames with a drop cause per bin and cause: `causeCounts[bin * causes + cause.index]`.
    public let causeCounts: [Int]
    /// The worst drop events, worst first (most dropped refreshes, then most late refreshes, then earliest).
    public let worst: [Event]
    /// Context records per bin (only bins with a record).
    public let context: [ContextBin]

    /// The bins with shown frames' times, in order (for ``framePosition(timeNs:)``).
    let timed: [Int]

    init(
        maxBins: Int, origin: Int, binWidth: Int, bins: [Bin], causeCounts: [Int], worst: [Event], context: [ContextBin]
    ) {
        self.maxBins = maxBins
        self.origin = origin
        self.binWidth = binWidth
        self.bins = bins
        self.causeCounts = causeCounts
        self.worst = worst
        self.context = context
        timed = bins.indices.filter { bins[$0].minTimeNs <= bins[$0].maxTimeNs }
    }

    /// The number of causes (the stride of ``causeCounts``).
    public static var causes: Int { DropCause.allCases.count }

    /// Frames with cause `c` in bin `i`.
    public func count(bin i: Int, cause c: DropCause) -> Int { causeCounts[i * Self.causes + c.index] }

    /// The first frame number of bin `i`.
    public func firstFrame(bin i: Int) -> Int { origin &+ i &* binWidth }

    /// The cause with the most frames in bin `i` (nil: none).
    public func mainCause(bin i: Int) -> DropCause? {
        var best: DropCause? = nil
        var n = 0
        for c in DropCause.allCases where count(bin: i, cause: c) > n {
            n = count(bin: i, cause: c)
            best = c
        }
        return best
    }

    /// Fractional frame position of kernel time `t` (ns), from the bins' time ranges (clamped to
    /// the first and last shown frame's time; nil without shown frames).
    public func framePosition(timeNs t: Int64) -> Double? {
        guard let first = timed.first, let last = timed.last else { return nil }
        if t <= bins[first].minTimeNs { return Double(firstFrame(bin: first)) }
        if t >= bins[last].maxTimeNs { return Double(firstFrame(bin: last) &+ binWidth) }
        var lo = 0, hi = timed.count - 1
        while hi > lo {
            let mid = (lo + hi + 1) / 2
            if bins[timed[mid]].minTimeNs <= t { lo = mid } else { hi = mid - 1 }
        }
        let b = bins[timed[lo]]
        let start = Double(firstFrame(bin: timed[lo]))
        if t >= b.maxTimeNs { return start + Double(binWidth) }
        let span = Double(b.maxTimeNs - b.minTimeNs)
        return start + (span > 0 ? Double(t - b.minTimeNs) / span : 0) * Double(binWidth)
    }

    /// Kernel time of the first shown frame, ns (nil: none).
    public var startTimeNs: Int64? { bins.lazy.map(\.minTimeNs).filter { $0 != Int64.max }.min() }
    /// Kernel time of the last shown frame, ns (nil: none).
    public var endTimeNs: Int64? { bins.lazy.map(\.maxTimeNs).filter { $0 != Int64.min }.max() }
}

/// Builds a ``LongRun`` from frame records added one at a time in log order.
struct LongRunBuilder {
    let maxBins: Int
    var origin: Int? = nil
    var width = 1
    var bins: [LongRun.Bin] = []
    var causeCounts: [Int] = []
    /// The worst events so far, worst first; `after` counts the points they still take.
    var worst: [(event: LongRun.Event, id: UInt64, after: Int)] = []
    /// The last ``LongRun/neighbourhood`` shown frames (log order), a ring.
    var ring: [ReportChart.Point] = []
    var ringNext = 0
    /// The kept events still taking points after them.
    var pending = 0
    /// The histogram (as ``ReportChart/histogram``) of frames that give their interval in refreshes.
    var histogram = [Int](repeating: 0, count: 2)
    /// Intervals of frames that do not (`intervalRefreshes` 0), by 0.1 ms: placed at the end.
    var unplaced: [Int64: Int] = [:]
    var maxIntervalNs: Int64 = 0

    /// `maxBins` is rounded up to an even number (at least 2).
    init(maxBins: Int) { self.maxBins = Swift.max(2, maxBins + (maxBins & 1)) }

    /// Halves the bins: bin i becomes bins 2i and 2i+1, the width doubles.
    mutating func mergePairs() {
        let n = (bins.count + 1) / 2
        let k = LongRun.causes
        for i in 0..<n {
            var b = bins[2 * i]
            if 2 * i + 1 < bins.count { b.merge(bins[2 * i + 1]) }
            bins[i] = b
            for c in 0..<k {
                causeCounts[i * k + c] =
                    causeCounts[2 * i * k + c] &+ (2 * i + 1 < bins.count ? causeCounts[(2 * i + 1) * k + c] : 0)
            }
        }
        bins.removeLast(bins.count - n)
        causeCounts.removeLast(causeCounts.count - n * k)
        width &*= 2
    }

    /// The bin of frame `frame`, making room for it.
    mutating func bin(of frame: Int) -> Int {
        guard let o = origin else {
            origin = frame
            bins.append(LongRun.Bin())
            causeCounts += [Int](repeating: 0, count: LongRun.causes)
            return 0
        }
        if frame < o {
            // Frames before the first: bins in front (fewer, wider ones first when needed).
            while Double(bins.count) + ((Double(o) - Double(frame)) / Double(width)).rounded(.up) > Double(maxBins) {
                mergePairs()
            }
            let k = (o - frame + width - 1) / width
            bins.insert(contentsOf: [LongRun.Bin](repeating: LongRun.Bin(), count: k), at: 0)
            causeCounts.insert(contentsOf: [Int](repeating: 0, count: k * LongRun.causes), at: 0)
            origin = o - k * width
            return (frame - origin!) / width
        }
        while (Double(frame) - Double(o)) / Double(width) >= Double(maxBins) { mergePairs() }
        let i = (frame - o) / width
        if i >= bins.count {
            let add = i + 1 - bins.count
            bins.append(contentsOf: [LongRun.Bin](repeating: LongRun.Bin(), count: add))
            causeCounts.append(contentsOf: [Int](repeating: 0, count: add * LongRun.causes))
        }
        return i
    }

    mutating func add(_ r: FrameRecord) {
        let i = bin(of: r.frame)
        let shown = r.outcome == .onTime || r.outcome == .late
        bins[i].frames &+= 1
        if shown {
            bins[i].shown &+= 1
            if r.droppedRefreshes > 0 {
                bins[i].droppedRefreshes &+= r.droppedRefreshes
                bins[i].dropEvents &+= 1
            }
            if r.flipNs > 0 {
                bins[i].minTimeNs = Swift.min(bins[i].minTimeNs, r.flipNs)
                bins[i].maxTimeNs = Swift.max(bins[i].maxTimeNs, r.flipNs)
            }
            if r.intervalNs > 0 {
                bins[i].intervals &+= 1
                bins[i].minIntervalNs = Swift.min(bins[i].minIntervalNs, r.intervalNs)
                bins[i].maxIntervalNs = Swift.max(bins[i].maxIntervalNs, r.intervalNs)
                bins[i].sumIntervalNs &+= r.intervalNs
                maxIntervalNs = Swift.max(maxIntervalNs, r.intervalNs)
                if r.intervalRefreshes > 0 {
                    let k = Swift.min(ReportChart.maxHistogramRefreshes, r.intervalRefreshes)
                    if k >= histogram.count { histogram += [Int](repeating: 0, count: k - histogram.count + 1) }
                    histogram[k] &+= 1
                } else {
                    unplaced[Swift.min(r.intervalNs / 100_000, 1_000_000), default: 0] &+= 1
                }
                let p = ReportChart.Point(frame: r.frame, intervalMs: Double(r.intervalNs) / 1e6)
                if pending > 0 {
                    for j in worst.indices where worst[j].after > 0 {
                        worst[j].event.points.append(p)
                        worst[j].after -= 1
                        if worst[j].after == 0 { pending -= 1 }
                    }
                }
                if ring.count < LongRun.neighbourhood + 1 {
                    ring.append(p)
                } else {
                    ring[ringNext] = p
                    ringNext = (ringNext + 1) % ring.count
                }
            }
        }
        if let c = r.cause {
            causeCounts[i * LongRun.causes + c.index] &+= 1
            consider(r, cause: c)
        }
    }

    /// Whether event a is worse than event b.
    static func worse(_ a: ReportChart.Drop, _ aID: UInt64, than b: ReportChart.Drop, _ bID: UInt64) -> Bool {
        if a.droppedRefreshes != b.droppedRefreshes { return a.droppedRefreshes > b.droppedRefreshes }
        if a.lateRefreshes != b.lateRefreshes { return a.lateRefreshes > b.lateRefreshes }
        return (a.frame, aID) < (b.frame, bID)
    }

    mutating func consider(_ r: FrameRecord, cause c: DropCause) {
        let d = ReportChart.Drop(
            frame: r.frame, cause: c, outcome: r.outcome, droppedRefreshes: r.droppedRefreshes,
            lateRefreshes: r.lateRefreshes)
        if worst.count == LongRun.candidateCount, let last = worst.last,
            !Self.worse(d, r.id, than: last.event.drop, last.id)
        {
            return
        }
        // The ring in log order: the frames before (and the frame itself when shown).
        var before: [ReportChart.Point] = []
        before.reserveCapacity(2 * LongRun.neighbourhood + 1)
        for j in 0..<ring.count { before.append(ring[(ringNext + j) % ring.count]) }
        if before.count > LongRun.neighbourhood + 1 { before.removeFirst(before.count - LongRun.neighbourhood - 1) }
        // The frame itself is the ring's last point only when it was shown with an interval.
        let shownHere =
            before.last?.frame == r.frame && (r.outcome == .onTime || r.outcome == .late) && r.intervalNs > 0
        if !shownHere && before.count > LongRun.neighbourhood { before.removeFirst() }
        let e = (event: LongRun.Event(drop: d, points: before), id: r.id, after: LongRun.neighbourhood)
        let at = worst.firstIndex { Self.worse(d, r.id, than: $0.event.drop, $0.id) } ?? worst.count
        worst.insert(e, at: at)
        pending += 1
        if worst.count > LongRun.candidateCount, let gone = worst.popLast(), gone.after > 0 { pending -= 1 }
    }

    /// The ``LongRun/worstCount`` events of `candidates` (worst first) chosen to be apart.
    static func apart(_ candidates: [LongRun.Event]) -> [LongRun.Event] {
        var chosen: [Int] = []
        for (i, e) in candidates.enumerated() where chosen.count < LongRun.worstCount {
            let far = chosen.allSatisfy { abs(candidates[$0].drop.frame - e.drop.frame) > LongRun.neighbourhood }
            if far { chosen.append(i) }
        }
        for i in candidates.indices where chosen.count < LongRun.worstCount && !chosen.contains(i) { chosen.append(i) }
        return chosen.sorted().map { candidates[$0] }
    }

    /// The histogram with the frames that gave no interval in refreshes placed by `refreshMs`.
    func fullHistogram(refreshMs: Double) -> [Int] {
        var h = histogram
        for (key, n) in unplaced {
            let ms = (Double(key) + 0.5) / 10
            let k = Swift.min(
                ReportChart.maxHistogramRefreshes,
                Swift.max(1, Int(Swift.min(Double(ReportChart.maxHistogramRefreshes), (ms / refreshMs).rounded()))))
            if k >= h.count { h += [Int](repeating: 0, count: k - h.count + 1) }
            h[k] &+= n
        }
        return h
    }

    /// The long run with the context records placed in the bins.
    func longRun(context: [ContextRecord]) -> LongRun {
        var events = Self.apart(worst.map(\.event))
        for i in events.indices { events[i].points.sort { $0.frame < $1.frame } }
        let partial = LongRun(
            maxBins: maxBins, origin: origin ?? 0, binWidth: width, bins: bins, causeCounts: causeCounts, worst: events,
            context: [])
        var byBin: [Int: (lo: Double, hi: Double, fSum: Double, fN: Int, t: Bool)] = [:]
        for c in context {
            let t = c.cpuTemperatureC.flatMap { $0.isFinite ? $0 : nil }
            let f = c.meanFrequencyMHz.flatMap { $0.isFinite ? $0 : nil }
            guard t != nil || f != nil, let pos = partial.framePosition(timeNs: c.timeNs) else { continue }
            let i = Swift.min(
                bins.count - 1, Swift.max(0, Int(((pos - Double(origin ?? 0)) / Double(width)).rounded(.down))))
            var e = byBin[i] ?? (lo: .infinity, hi: -.infinity, fSum: 0, fN: 0, t: false)
            if let t {
                e.lo = Swift.min(e.lo, t)
                e.hi = Swift.max(e.hi, t)
                e.t = true
            }
            if let f {
                e.fSum += f
                e.fN += 1
            }
            byBin[i] = e
        }
        let ctx = byBin.keys.sorted().map { i in
            let e = byBin[i]!
            return LongRun.ContextBin(
                bin: i, minCelsius: e.t ? e.lo : nil, maxCelsius: e.t ? e.hi : nil,
                meanFrequencyMHz: e.fN > 0 ? e.fSum / Double(e.fN) : nil)
        }
        return LongRun(
            maxBins: maxBins, origin: origin ?? 0, binWidth: width, bins: bins, causeCounts: causeCounts, worst: events,
            context: ctx)
    }
}

extension ReportChart {
    /// The long-run picture (``longRun``).
    init(longRun b: consuming Builder, log: RunLog, width: Int, height: Int) {
        self.width = Swift.max(480, width)
        self.height = Swift.max(320, height)
        summary = b.summary.summary(of: log)
        refreshMs = Swift.max(1e-6, LogAnalysis.refreshIntervalNs(log, estimatedHz: { b.summary.refreshHz(log) }) / 1e6)
        firstFrame = b.minFrame ?? 0
        lastFrame = Swift.max(firstFrame &+ 1, b.maxFrame ?? 1)
        let lr = b.long.longRun(context: log.context)
        longRun = lr
        markedFrames = b.marked
        points = []
        drops = lr.worst.map(\.drop).sorted { $0.frame < $1.frame }
        dropRows = drops
        rateSwitches = log.rateSwitches
        histogram = b.long.fullHistogram(refreshMs: refreshMs)
        let maxRef = Int(Swift.min(64, (Double(b.long.maxIntervalNs) / 1e6 / refreshMs).rounded(.up)))
        yMaxRefreshes = Swift.min(64, Swift.max(3, maxRef + 1))
        temperatures = []
        let lo = lr.context.compactMap(\.minCelsius).min(), hi = lr.context.compactMap(\.maxCelsius).max()
        temperatureRange = ((lo ?? 0) - 1).rounded(.down)...((hi ?? 1) + 1).rounded(.up)
        let mhz = log.context.compactMap(\.meanFrequencyMHz)
        frequencyRangeMHz = mhz.isEmpty ? nil : mhz.min()!...mhz.max()!
        title = Self.title(summary)
        // Panels top to bottom: dropped refreshes per bin, the interval envelope, the context
        // strip (when recorded), the worst events, the histogram.
        let pw = Double(self.width), ph = Double(self.height)
        let hasContext = !lr.context.isEmpty
        let hasEvents = !lr.worst.isEmpty
        let gaps = 24 + (hasContext ? 40.0 : 0) + (hasEvents ? 66.0 : 0) + 40
        let u = Swift.max(40, ph - 56 - 28 - gaps)
        let panel = hasContext ? 0.22 : 0.25
        let x0 = 64.0, w = pw - 64 - 24
        timeline = Box(x: x0, y: 56, width: w, height: u * panel)
        let env = Box(x: x0, y: timeline.maxY + 24, width: w, height: u * panel)
        var y = env.maxY
        var ctx: Box? = nil
        if hasContext {
            ctx = Box(x: x0, y: y + 40, width: w, height: u * 0.12)
            y = ctx!.maxY
        }
        var events: [Box] = []
        if hasEvents {
            let n = Double(lr.worst.count)
            let ew = (w - (n - 1) * 16) / n
            for i in lr.worst.indices {
                events.append(Box(x: x0 + Double(i) * (ew + 16), y: y + 66, width: ew, height: u * 0.24))
            }
            y += 66 + u * 0.24
        }
        temperatureBox = ctx
        longRunLayout = LongRunLayout(envelope: env, context: ctx, events: events)
        histogramBox = Box(x: x0, y: y + 40, width: w, height: Swift.max(10, ph - y - 40 - 28))
    }

    /// x on the long-run panels of the start of bin `i` (clamped to the panel).
    public func x(binStart i: Int) -> Double {
        guard let lr = longRun else { return timeline.x }
        return Swift.min(timeline.maxX, Swift.max(timeline.x, x(frame: lr.firstFrame(bin: i))))
    }

    /// The top of the dropped-refreshes panel's axis (at least 1).
    public var longRunDropTop: Int { Swift.max(1, longRun?.bins.map(\.droppedRefreshes).max() ?? 1) }

    /// y of an interval (ms) in the envelope panel (clamped).
    public func envelopeY(intervalMs: Double) -> Double {
        guard let env = longRunLayout?.envelope else { return y(intervalMs: intervalMs) }
        let top = Double(yMaxRefreshes) * refreshMs
        let v = Swift.min(Swift.max(intervalMs, 0), top)
        return env.maxY - v / top * env.height
    }

    /// The frame range and y top (refreshes) of worst event `i`'s small timeline.
    public func eventRange(_ i: Int) -> (first: Int, last: Int, topRefreshes: Int) {
        guard let e = longRun?.worst[i] else { return (0, 1, 3) }
        let frames = e.points.map(\.frame) + [e.drop.frame]
        let lo = frames.min()!, hi = Swift.max(frames.max()!, lo + 1)
        let maxMs = e.points.map(\.intervalMs).max() ?? refreshMs
        let top = Swift.min(64, Swift.max(3, Int((maxMs / refreshMs).rounded(.up)) + 1))
        return (lo, hi, top)
    }

    /// A point of worst event `i`'s small timeline.
    public func eventPoint(_ i: Int, frame: Int, intervalMs: Double) -> (x: Double, y: Double) {
        guard let b = longRunLayout?.events[i] else { return (0, 0) }
        let r = eventRange(i)
        let top = Double(r.topRefreshes) * refreshMs
        let x = b.x + Double(frame - r.first) / Double(r.last - r.first) * b.width
        return (x, b.maxY - Swift.min(Swift.max(intervalMs, 0), top) / top * b.height)
    }

    /// Seconds since the first shown frame at fractional frame `f` (nil without times).
    func seconds(atFrame f: Double) -> Double? {
        guard let lr = longRun, let t0 = lr.startTimeNs else { return nil }
        let i = Swift.min(
            lr.bins.count - 1, Swift.max(0, Int(((f - Double(lr.origin)) / Double(lr.binWidth)).rounded(.down))))
        // The bins with times around frame f, interpolated.
        var a = i, b = i
        while a >= 0 && lr.bins[a].minTimeNs == Int64.max { a -= 1 }
        while b < lr.bins.count && lr.bins[b].minTimeNs == Int64.max { b += 1 }
        if a < 0 { a = b }
        if b >= lr.bins.count { b = a }
        guard a >= 0 && a < lr.bins.count else { return nil }
        let ba = lr.bins[a]
        let fa = Double(lr.firstFrame(bin: a)), fb = Double(lr.firstFrame(bin: a) &+ lr.binWidth)
        let t = Double(ba.minTimeNs) + (f - fa) / Swift.max(1, fb - fa) * Double(ba.maxTimeNs - ba.minTimeNs)
        return (t - Double(t0)) / 1e9
    }

    /// The long-run picture's time axis: round times (1 s … 12 h apart, about 8 of them) at
    /// their x, labelled m:ss (h:mm when the run is an hour or longer).
    public var timeTicks: [(x: Double, label: String)] {
        guard let lr = longRun, let t0 = lr.startTimeNs, let t1 = lr.endTimeNs, t1 > t0 else { return [] }
        let duration = Double(t1 - t0) / 1e9
        let steps: [Double] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200]
        let step = steps.first { $0 >= duration / 8 } ?? 86400
        var out: [(Double, String)] = []
        var t = 0.0
        while t <= duration {
            if let f = lr.framePosition(timeNs: t0 + Int64(t * 1e9)) {
                out.append(
                    (
                        Swift.min(timeline.maxX, Swift.max(timeline.x, x(framePosition: f))),
                        Self.clock(t, hours: duration >= 3600)
                    ))
            }
            t += step
        }
        return out
    }

    /// `t` seconds as m:ss, or h:mm with `hours` (h:mm:ss when not a whole minute).
    static func clock(_ t: Double, hours: Bool) -> String {
        let s = Int(t.rounded())
        if hours {
            return s % 60 == 0
                ? String(format: "%d:%02d", s / 3600, s / 60 % 60)
                : String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        }
        return String(format: "%d:%02d", s / 60, s % 60)
    }

    /// The top panel's caption: what a bin is.
    public var longRunCaption: String {
        guard let lr = longRun else { return "" }
        var s = "dropped refreshes per bin of \(lr.binWidth) frames"
        if let t0 = lr.startTimeNs, let t1 = lr.endTimeNs, lastFrame > firstFrame {
            let secondsPerBin = Double(t1 - t0) / 1e9 / Double(lastFrame - firstFrame) * Double(lr.binWidth)
            s += String(format: " (about %.1f s)", secondsPerBin)
        }
        return s + "; frames \(firstFrame)-\(lastFrame)"
    }

    /// The two caption lines of worst event `i`'s small timeline: rank, frame and time; cause and
    /// dropped refreshes.
    public func eventCaption(_ i: Int) -> (String, String) {
        guard let lr = longRun else { return ("", "") }
        let e = lr.worst[i]
        var s = "#\(i + 1) frame \(e.drop.frame)"
        let hours = Double((lr.endTimeNs ?? 0) - (lr.startTimeNs ?? 0)) / 1e9 >= 3600
        if let t = seconds(atFrame: Double(e.drop.frame)) { s += " at " + Self.clock(t, hours: hours) }
        return (s, "\(e.drop.cause.rawValue), \(e.drop.droppedRefreshes) dropped")
    }

    /// The context strip's caption: the temperature range and the CPU frequency range.
    public var longRunContextCaption: String {
        guard let lr = longRun else { return "" }
        let f1 = { (v: Double) in String(format: "%.1f", v) }
        var parts: [String] = []
        if let lo = lr.context.compactMap(\.minCelsius).min(), let hi = lr.context.compactMap(\.maxCelsius).max() {
            parts.append("CPU temperature (C) per bin, min-max: \(f1(lo))-\(f1(hi)) C")
        }
        if let f = frequencyRangeMHz {
            parts.append("CPU frequency (mean, blue) \(Int(f.lowerBound.rounded()))-\(Int(f.upperBound.rounded())) MHz")
        }
        return parts.joined(separator: "; ")
    }

    /// y of a frequency in the context strip (the recorded range, top to bottom).
    public func contextY(frequencyMHz v: Double) -> Double? {
        guard let b = longRunLayout?.context, let r = frequencyRangeMHz else { return nil }
        let span = Swift.max(0.001, r.upperBound - r.lowerBound)
        return b.maxY - 2 - (Swift.min(Swift.max(v, r.lowerBound), r.upperBound) - r.lowerBound) / span * (b.height - 4)
    }

    /// y of a temperature in the context strip (clamped).
    public func contextY(celsius: Double) -> Double? {
        guard let b = longRunLayout?.context else { return nil }
        let r = temperatureRange
        let span = Swift.max(0.001, r.upperBound - r.lowerBound)
        return b.maxY - (Swift.min(Swift.max(celsius, r.lowerBound), r.upperBound) - r.lowerBound) / span * b.height
    }
}
