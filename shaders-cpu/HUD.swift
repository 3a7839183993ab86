import Raster

/// The last ``capacity`` frame intervals in milliseconds, oldest first. Storage is allocated
/// once at creation; appending overwrites in place (no allocation per frame while the ring
/// has a single owner).
public struct IntervalRing: Sendable {
    /// Intervals kept (the HUD chart width in bars).
    public static let capacity = 120
    private var storage: [Float]
    private var next = 0
    /// Intervals held (up to ``capacity``).
    public private(set) var count = 0

    public init() { storage = [Float](repeating: 0, count: Self.capacity) }

    /// Records one interval, dropping the oldest when full.
    public mutating func append(_ milliseconds: Double) {
        storage[next] = Float(milliseconds)
        next = next + 1 == Self.capacity ? 0 : next + 1
        if count < Self.capacity { count += 1 }
    }

    /// Interval `i`, 0 being the oldest held.
    public subscript(i: Int) -> Double {
        precondition(i >= 0 && i < count, "interval index out of range")
        let start = count < Self.capacity ? 0 : next
        let j = start + i
        return Double(storage[j >= Self.capacity ? j - Self.capacity : j])
    }

    /// Mean of the intervals held (0 when empty).
    public var mean: Double {
        if count == 0 { return 0 }
        var s = 0.0
        for i in 0..<count { s += self[i] }
        return s / Double(count)
    }
}

/// What the HUD shows; the run loop keeps one and updates it every frame.
public struct HUDStats: Sendable {
    /// Frames per second from the latest interval.
    public var currentFPS: Double = 0
    /// Frames per second averaged over the intervals in ``intervals``.
    public var averageFPS: Double = 0
    /// The rate frames are being produced at (Hz).
    public var effectiveRateHz: Double
    /// The display's refresh rate (Hz).
    public var refreshHz: Double
    /// Refreshes that should have shown a new frame and did not.
    public var droppedRefreshes: Int = 0
    /// Frames presented so far.
    public var presentedFrames: Int = 0
    /// The frame-interval budget drawn as the chart's reference line, in ms.
    public var budgetMs: Double
    /// The last 120 presentation intervals (ms).
    public var intervals = IntervalRing()

    /// Stats for a display at `refreshHz` paced at `effectiveRateHz` (default: the refresh).
    public init(refreshHz: Double, effectiveRateHz: Double? = nil) {
        self.refreshHz = refreshHz
        self.effectiveRateHz = effectiveRateHz ?? refreshHz
        let rate = effectiveRateHz ?? refreshHz
        budgetMs = rate > 0 ? 1000 / rate : 0
    }

    /// Records a presented frame that arrived `intervalMs` after the previous one and
    /// updates the fps figures.
    public mutating func recordFrame(intervalMs: Double) {
        intervals.append(intervalMs)
        presentedFrames += 1
        currentFPS = intervalMs > 0 ? 1000 / intervalMs : 0
        let m = intervals.mean
        averageFPS = m > 0 ? 1000 / m : 0
    }
}

/// The on-screen performance overlay (in the spirit of the Metal performance HUD): fps,
/// rates, drops and a chart of the last 120 intervals with the budget line, drawn in the
/// top-left corner on top of whatever is in the canvas. Allocation-free.
public enum HUD {
    /// The panel's rectangle for a canvas size (scale grows with height: 2 at 1080p).
    public static func frame(width: Int, height: Int) -> IntRect {
        let u = unit(height)
        return IntRect(x: 8 * u, y: 8 * u, width: panelWidth(u), height: panelHeight(u))
    }

    static func unit(_ height: Int) -> Int { max(1, height / 540) }
    static func panelWidth(_ u: Int) -> Int { (IntervalRing.capacity * 2 + 12) * u }
    static func panelHeight(_ u: Int) -> Int { (3 * 10 + 8 + chartHeight + 6) * u }
    static let chartHeight = 60
    static let chartSpanBudgets = 3.0  // the chart's top is 3× the budget

    /// Draws the overlay for `stats` into `canvas` (respecting its clip).
    public static func draw(_ stats: HUDStats, into canvas: Canvas) {
        let u = unit(canvas.height)
        let panel = frame(width: canvas.width, height: canvas.height)
        let clip = canvas.clip
        if panel.intersection(clip).isEmpty { return }
        canvas.fill(panel, Color(rgb: 0x000000).withAlpha(170))
        let x = panel.minX + 6 * u
        var y = panel.minY + 6 * u
        let text = Color(rgb: 0xE8E8E8)

        var line = TextLine("FPS ")
        line.append(stats.currentFPS, fractionDigits: 1)
        line.append("  AVG ")
        line.append(stats.averageFPS, fractionDigits: 1)
        canvas.drawText(line, x: x, y: y, scale: u, text)
        y += 10 * u

        line = TextLine("RATE ")
        line.append(stats.effectiveRateHz, fractionDigits: 2)
        line.append(" OF ")
        line.append(stats.refreshHz, fractionDigits: 2)
        line.append(" HZ")
        canvas.drawText(line, x: x, y: y, scale: u, text)
        y += 10 * u

        line = TextLine("DROPPED ")
        line.append(stats.droppedRefreshes)
        line.append("  FRAMES ")
        line.append(stats.presentedFrames)
        canvas.drawText(line, x: x, y: y, scale: u, stats.droppedRefreshes > 0 ? Color(rgb: 0xFF6B5B) : text)
        y += 10 * u + 2 * u

        // Chart: one bar per interval, newest on the right; top is 3× budget.
        let ch = chartHeight * u
        let chart = IntRect(x: x, y: y, width: IntervalRing.capacity * 2 * u, height: ch)
        canvas.fill(chart, Color(rgb: 0x202020).withAlpha(200))
        let top = stats.budgetMs > 0 ? stats.budgetMs * chartSpanBudgets : max(1, stats.intervals.mean * 2)
        let n = stats.intervals.count
        let barW = 2 * u
        let firstX = chart.maxX - n * barW
        for i in 0..<n {
            let ms = stats.intervals[i]
            let frac = min(1, max(0, ms / top))
            let bh = max(u, Int((frac * Double(ch)).rounded()))
            let color: Color
            if stats.budgetMs <= 0 || ms <= stats.budgetMs * 1.5 {
                color = Color(rgb: 0x3DDC84)
            } else if ms <= stats.budgetMs * 2.5 {
                color = Color(rgb: 0xFFC107)
            } else {
                color = Color(rgb: 0xFF5252)
            }
            canvas.fillRect(x: firstX + i * barW, y: chart.maxY - bh, width: max(1, barW - (u > 1 ? 1 : 0)), height: bh, color)
        }
        if stats.budgetMs > 0 {
            let by = chart.maxY - Int((Double(ch) / chartSpanBudgets).rounded())
            canvas.fillRect(x: chart.minX, y: by, width: chart.width, height: u, Color(rgb: 0xFFFFFF).withAlpha(200))
            var label = TextLine()
            label.append(stats.budgetMs, fractionDigits: 2)
            label.append(" MS")
            canvas.drawText(label, x: chart.minX + 2 * u, y: by - 9 * u, scale: u, Color(rgb: 0xFFFFFF).withAlpha(200))
        }
    }
}
