import CadenceCore
import Foundation

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
