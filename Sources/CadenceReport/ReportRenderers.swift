import CadenceCore
import Foundation
import Raster

/// Draws a ``ReportChart`` with Cadence's own rasterizer (PNG output).
public enum PNGReport {
    /// Renders the chart into a new bitmap.
    public static func render(_ chart: ReportChart) -> Bitmap {
        if chart.longRun != nil { return renderLongRun(chart) }
        let (bmp, c, grid, axis, _) = titledCanvas(chart)
        let tl = chart.timeline
        c.drawText("frame interval in refreshes by frame (1 refresh = \(String(format: "%.3f", chart.refreshMs)) ms)", x: Int(tl.x), y: Int(tl.y) - 14, scale: 1, axis)

        // Refresh gridlines with labels.
        for k in 0...chart.yMaxRefreshes {
            let y = Int(chart.y(intervalMs: Double(k) * chart.refreshMs).rounded())
            c.fillRect(x: Int(tl.x), y: y, width: Int(tl.width), height: 1, k == 0 ? axis : grid)
            if chart.yMaxRefreshes <= 16 || k % 4 == 0 {
                let label = "\(k)x"
                c.drawText(label, x: Int(tl.x) - 8 - BitmapFont.width(of: label), y: y - 4, scale: 1, axis)
            }
        }
        c.fillRect(x: Int(tl.x), y: Int(tl.y), width: 1, height: Int(tl.height), axis)
        // Frame ticks.
        for f in frameTicks(chart) {
            let x = Int(chart.x(frame: f).rounded())
            c.fillRect(x: x, y: Int(tl.maxY), width: 1, height: 5, axis)
            let label = String(f)
            c.drawText(label, x: x - BitmapFont.width(of: label) / 2, y: Int(tl.maxY) + 8, scale: 1, axis)
        }

        // Drop stripes (behind the line).
        for d in chart.drops {
            let x = Int(chart.x(frame: d.frame).rounded())
            c.fillRect(x: x - 1, y: Int(tl.y), width: 3, height: Int(tl.height), Color(rgb: ReportChart.color(d.cause)).withAlpha(70))
        }
        // The interval line.
        let line = Color(rgb: ReportChart.lineColor)
        var prev: Raster.Point? = nil
        for p in chart.points {
            let q = Raster.Point(chart.x(frame: p.frame), chart.y(intervalMs: p.intervalMs))
            if let a = prev { c.strokeLine(from: a, to: q, width: 1.5, line) }
            if chart.points.count <= 600 { c.fillCircle(center: q, radius: 1.8, line) }
            prev = q
        }
        // Drop markers.
        for d in chart.drops {
            let m = chart.markerCenter(frame: d.frame)
            c.fillCircle(center: Raster.Point(m.x, m.y), radius: chart.markerRadius, Color(rgb: ReportChart.color(d.cause)))
        }
        // `--adapt` rate switches: a dashed line at the first frame of the new rate, labelled.
        let sw = Color(rgb: ReportChart.rateSwitchColor)
        for r in chart.rateSwitches {
            let x = Int(chart.x(frame: r.frame).rounded())
            var y = Int(tl.y) + 20
            while y < Int(tl.maxY) { c.fillRect(x: x, y: y, width: 1, height: 4, sw); y += 7 }
            c.drawText(ReportChart.label(r, ascii: true), x: x + 3, y: Int(tl.y) + 20, scale: 1, sw)
        }
        legend(chart, c)

        // CPU temperature under the timeline, on the same frame axis.
        if let tb = chart.temperatureBox {
            c.drawText(chart.temperatureCaption, x: Int(tb.x), y: Int(tb.y) - 14, scale: 1, axis)
            c.fillRect(x: Int(tb.x), y: Int(tb.maxY), width: Int(tb.width), height: 1, axis)
            c.fillRect(x: Int(tb.x), y: Int(tb.y), width: 1, height: Int(tb.height), axis)
            let r = chart.temperatureRange
            for v in [r.lowerBound, r.upperBound] {
                let y = Int((chart.y(celsius: v) ?? tb.y).rounded())
                c.fillRect(x: Int(tb.x), y: y, width: Int(tb.width), height: 1, grid)
                let label = String(format: "%.0f", v)
                c.drawText(label, x: Int(tb.x) - 8 - BitmapFont.width(of: label), y: y - 4, scale: 1, axis)
            }
            let tcol = Color(rgb: ReportChart.temperatureColor)
            var prevT: Raster.Point? = nil
            for t in chart.temperatures {
                let q = Raster.Point(chart.x(framePosition: t.frame), chart.y(celsius: t.celsius) ?? tb.maxY)
                if let a = prevT { c.strokeLine(from: a, to: q, width: 1.5, tcol) }
                c.fillCircle(center: q, radius: 2, tcol)
                prevT = q
            }
        }

        histogram(chart, c)
        return bmp
    }

    /// The legend of the causes present, right-aligned above the timeline.
    static func legend(_ chart: ReportChart, _ c: Canvas) {
        let tl = chart.timeline
        let text = Color(rgb: 0x202020)
        var lx = Int(tl.maxX)
        for cause in chart.causesPresent.reversed() {
            let label = cause.rawValue
            lx -= BitmapFont.width(of: label) + 26
            c.fillCircle(center: Raster.Point(Double(lx + 6), tl.y - 10), radius: 5, Color(rgb: ReportChart.color(cause)))
            c.drawText(label, x: lx + 14, y: Int(tl.y) - 14, scale: 1, text)
        }
    }

    /// The histogram in refresh units.
    static func histogram(_ chart: ReportChart, _ c: Canvas) {
        let axis = Color(rgb: ReportChart.axisColor)
        let text = Color(rgb: 0x202020)
        let hb = chart.histogramBox
        c.drawText(chart.histogramCaption, x: Int(hb.x), y: Int(hb.y) - 14, scale: 1, axis)
        c.fillRect(x: Int(hb.x), y: Int(hb.maxY), width: Int(hb.width), height: 1, axis)
        for bar in chart.histogramBars {
            let b = bar.box
            c.fill(IntRect(minX: Int(b.x.rounded()), minY: Int(b.y.rounded()), maxX: Int(b.maxX.rounded()), maxY: Int(b.maxY.rounded())), Color(rgb: ReportChart.barColor))
            let label = "\(bar.refreshes)x"
            c.drawText(label, x: Int(b.x + b.width / 2) - BitmapFont.width(of: label) / 2, y: Int(hb.maxY) + 6, scale: 1, axis)
            if bar.count > 0 {
                let n = String(bar.count)
                c.drawText(n, x: Int(b.x + b.width / 2) - BitmapFont.width(of: n) / 2, y: Int(b.y) - 10, scale: 1, text)
            }
        }
    }

    /// The chart as PNG file bytes.
    public static func encode(_ chart: ReportChart) -> [UInt8] {
        let bmp = render(chart)
        return withExtendedLifetime(bmp) { PNGWriter.encode(bmp.canvas) }
    }

    /// Round frame numbers for the x axis (about 10).
    static func frameTicks(_ chart: ReportChart) -> [Int] {
        let span = Swift.max(1, chart.lastFrame - chart.firstFrame)
        let raw = Double(span) / 10
        let mag = pow(10, floor(log10(raw)))
        let step = Swift.max(1, Int([1.0, 2.0, 5.0, 10.0].map { $0 * mag }.first { $0 >= raw } ?? raw))
        var out: [Int] = []
        var f = (chart.firstFrame + step - 1) / step * step
        while f <= chart.lastFrame { out.append(f); f += step }
        return out
    }
}

/// Writes a ``ReportChart`` as SVG. Marks carry data attributes so that tools (and tests) can
/// read them back: drop markers `class="drop <cause>" data-frame data-cause`, histogram bars
/// `class="bar" data-refreshes data-count`, the interval line `class="intervals"`, `--adapt` rate
/// switches `class="rate-switch down|up" data-frame data-from-hz data-to-hz`.
public enum SVGReport {
    public static func svg(_ chart: ReportChart) -> String {
        if chart.longRun != nil { return svgLongRun(chart) }
        let f = { (v: Double) in String(format: "%.2f", v) }
        let hex = { (c: UInt32) in String(format: "#%06X", c) }
        let tl = chart.timeline
        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(chart.width)\" height=\"\(chart.height)\" viewBox=\"0 0 \(chart.width) \(chart.height)\" font-family=\"monospace\" font-size=\"11\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"\(hex(ReportChart.background))\"/>\n"
        s += "<text class=\"title\" x=\"12\" y=\"24\" font-size=\"15\">\(JUnitReport.escape(chart.title))</text>\n"
        s += "<text x=\"\(f(tl.x))\" y=\"\(f(tl.y - 6))\" fill=\"\(hex(ReportChart.axisColor))\">frame interval in refreshes by frame (1 refresh = \(String(format: "%.3f", chart.refreshMs)) ms)</text>\n"
        s += "<g class=\"grid\">\n"
        for k in 0...chart.yMaxRefreshes {
            let y = chart.y(intervalMs: Double(k) * chart.refreshMs)
            s += "<line class=\"gridline\" data-refreshes=\"\(k)\" x1=\"\(f(tl.x))\" y1=\"\(f(y))\" x2=\"\(f(tl.maxX))\" y2=\"\(f(y))\" stroke=\"\(hex(k == 0 ? ReportChart.axisColor : ReportChart.gridColor))\"/>\n"
            if chart.yMaxRefreshes <= 16 || k % 4 == 0 {
                s += "<text x=\"\(f(tl.x - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\" fill=\"\(hex(ReportChart.axisColor))\">\(k)×</text>\n"
            }
        }
        for fr in PNGReport.frameTicks(chart) {
            let x = chart.x(frame: fr)
            s += "<text x=\"\(f(x))\" y=\"\(f(tl.maxY + 16))\" text-anchor=\"middle\" fill=\"\(hex(ReportChart.axisColor))\">\(fr)</text>\n"
        }
        s += "</g>\n<g class=\"drops\">\n"
        for d in chart.drops {
            let x = chart.x(frame: d.frame)
            let col = hex(ReportChart.color(d.cause))
            s += "<rect class=\"stripe\" x=\"\(f(x - 1.5))\" y=\"\(f(tl.y))\" width=\"3\" height=\"\(f(tl.height))\" fill=\"\(col)\" fill-opacity=\"0.27\"/>\n"
        }
        s += "</g>\n"
        var pts = ""
        for p in chart.points { pts += "\(f(chart.x(frame: p.frame))),\(f(chart.y(intervalMs: p.intervalMs))) " }
        s += "<polyline class=\"intervals\" fill=\"none\" stroke=\"\(hex(ReportChart.lineColor))\" stroke-width=\"1.5\" points=\"\(pts)\"/>\n"
        s += "<g class=\"markers\">\n"
        for d in chart.drops {
            let m = chart.markerCenter(frame: d.frame)
            s += "<circle class=\"drop \(d.cause.rawValue)\" data-frame=\"\(d.frame)\" data-cause=\"\(d.cause.rawValue)\" data-outcome=\"\(d.outcome.rawValue)\" data-dropped-refreshes=\"\(d.droppedRefreshes)\" cx=\"\(f(m.x))\" cy=\"\(f(m.y))\" r=\"\(f(chart.markerRadius))\" fill=\"\(hex(ReportChart.color(d.cause)))\"><title>frame \(d.frame): \(d.outcome.rawValue), \(d.cause.rawValue), \(d.droppedRefreshes) dropped refreshes</title></circle>\n"
        }
        s += "</g>\n<g class=\"rate-switches\">\n"
        for r in chart.rateSwitches {
            let x = chart.x(frame: r.frame)
            let col = hex(ReportChart.rateSwitchColor)
            s += "<g class=\"rate-switch \(r.direction)\" data-frame=\"\(r.frame)\" data-from-hz=\"\(r.fromHz)\" data-to-hz=\"\(r.toHz)\"><line x1=\"\(f(x))\" y1=\"\(f(tl.y + 20))\" x2=\"\(f(x))\" y2=\"\(f(tl.maxY))\" stroke=\"\(col)\" stroke-dasharray=\"4 3\"/><text x=\"\(f(x + 3))\" y=\"\(f(tl.y + 28))\" fill=\"\(col)\">\(ReportChart.label(r))</text><title>frame \(r.frame): \(JUnitReport.escape(r.reason))</title></g>\n"
        }
        s += "</g>\n<g class=\"legend\">\n"
        s += legend(chart)
        if let tb = chart.temperatureBox {
            s += "</g>\n<g class=\"temperature\">\n"
            s += "<text x=\"\(f(tb.x))\" y=\"\(f(tb.y - 6))\" fill=\"\(hex(ReportChart.axisColor))\">\(JUnitReport.escape(chart.temperatureCaption))</text>\n"
            s += "<line x1=\"\(f(tb.x))\" y1=\"\(f(tb.maxY))\" x2=\"\(f(tb.maxX))\" y2=\"\(f(tb.maxY))\" stroke=\"\(hex(ReportChart.axisColor))\"/>\n"
            for v in [chart.temperatureRange.lowerBound, chart.temperatureRange.upperBound] {
                let y = chart.y(celsius: v) ?? tb.y
                s += "<line class=\"gridline\" x1=\"\(f(tb.x))\" y1=\"\(f(y))\" x2=\"\(f(tb.maxX))\" y2=\"\(f(y))\" stroke=\"\(hex(ReportChart.gridColor))\"/>\n"
                s += "<text x=\"\(f(tb.x - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\" fill=\"\(hex(ReportChart.axisColor))\">\(String(format: "%.0f", v))</text>\n"
            }
            var tp = ""
            for t in chart.temperatures { tp += "\(f(chart.x(framePosition: t.frame))),\(f(chart.y(celsius: t.celsius) ?? tb.maxY)) " }
            s += "<polyline class=\"temperature\" data-points=\"\(chart.temperatures.count)\" fill=\"none\" stroke=\"\(hex(ReportChart.temperatureColor))\" stroke-width=\"1.5\" points=\"\(tp)\"/>\n"
            for t in chart.temperatures {
                s += "<circle class=\"reading\" data-celsius=\"\(String(format: "%.1f", t.celsius))\" cx=\"\(f(chart.x(framePosition: t.frame)))\" cy=\"\(f(chart.y(celsius: t.celsius) ?? tb.maxY))\" r=\"2\" fill=\"\(hex(ReportChart.temperatureColor))\"/>\n"
            }
        }
        s += "</g>\n"
        s += histogram(chart)
        s += "</svg>\n"
        return s
    }

    /// The legend's marks (inside the legend group).
    static func legend(_ chart: ReportChart) -> String {
        let f = { (v: Double) in String(format: "%.2f", v) }
        let hex = { (c: UInt32) in String(format: "#%06X", c) }
        let tl = chart.timeline
        var s = ""
        var lx = tl.maxX
        for cause in chart.causesPresent.reversed() {
            lx -= Double(cause.rawValue.count * 7 + 26)
            s += "<circle cx=\"\(f(lx + 6))\" cy=\"\(f(tl.y - 10))\" r=\"5\" fill=\"\(hex(ReportChart.color(cause)))\"/><text x=\"\(f(lx + 14))\" y=\"\(f(tl.y - 6))\">\(cause.rawValue)</text>\n"
        }
        return s
    }

    /// The histogram group.
    static func histogram(_ chart: ReportChart) -> String {
        let f = { (v: Double) in String(format: "%.2f", v) }
        let hex = { (c: UInt32) in String(format: "#%06X", c) }
        var s = ""
        let hb = chart.histogramBox
        s += "<g class=\"histogram\">\n"
        s += "<text x=\"\(f(hb.x))\" y=\"\(f(hb.y - 6))\" fill=\"\(hex(ReportChart.axisColor))\">\(chart.histogramCaption)</text>\n"
        s += "<line x1=\"\(f(hb.x))\" y1=\"\(f(hb.maxY))\" x2=\"\(f(hb.maxX))\" y2=\"\(f(hb.maxY))\" stroke=\"\(hex(ReportChart.axisColor))\"/>\n"
        for bar in chart.histogramBars {
            let b = bar.box
            s += "<rect class=\"bar\" data-refreshes=\"\(bar.refreshes)\" data-count=\"\(bar.count)\" x=\"\(f(b.x))\" y=\"\(f(b.y))\" width=\"\(f(b.width))\" height=\"\(f(b.height))\" fill=\"\(hex(ReportChart.barColor))\"/>\n"
            s += "<text x=\"\(f(b.x + b.width / 2))\" y=\"\(f(hb.maxY + 14))\" text-anchor=\"middle\">\(bar.refreshes)×</text>\n"
            if bar.count > 0 { s += "<text x=\"\(f(b.x + b.width / 2))\" y=\"\(f(b.y - 3))\" text-anchor=\"middle\">\(bar.count)</text>\n" }
        }
        s += "</g>\n"
        return s
    }
}

/// A self-contained HTML page: the SVG chart, the summary and the list of drops.
public enum HTMLReport {
    public static func html(_ chart: ReportChart, log: RunLog, source: String) -> String {
        let s = chart.summary
        let f3 = { (v: Double) in String(format: "%.3f", v) }
        var h = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Cadence report: \(JUnitReport.escape(source))</title>\n"
        h += "<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}</style></head><body>\n"
        h += "<h1>Cadence report</h1><p>\(JUnitReport.escape(source))\(log.header.map { ", started \($0.startedAt)" } ?? "")</p>\n"
        h += zoomableChart(chart)
        h += "<h2>Summary</h2><table>\n"
        let rows: [(String, String)] = [
            ("backend", s.backend), ("refresh (Hz)", f3(s.refreshHz)), ("effective rate (Hz)", f3(s.effectiveRateHz)),
            ("measured rate (Hz)", f3(s.measuredRateHz)), ("frames", "\(s.frames)"), ("presented", "\(s.presented)"),
            ("on time / late", "\(s.onTime) / \(s.late)"), ("discarded / failed / unconfirmed", "\(s.discarded) / \(s.failed) / \(s.unconfirmed)"),
            ("dropped refreshes", "\(s.droppedRefreshes)"), ("drop events", "\(s.dropEvents)"), ("hitch (ms/s)", f3(s.hitchTimeRatio)),
            ("on-time error p50 / p99 / max (µs)", s.onTimeErrorUs.map { "\(f3($0.p50)) / \(f3($0.p99)) / \(f3($0.max))" } ?? "n/a"),
            ("interval mean / p50 / p99 / max (ms)", "\(f3(s.intervalMs.mean)) / \(f3(s.intervalMs.p50)) / \(f3(s.intervalMs.p99)) / \(f3(s.intervalMs.max))"),
            ("end", s.endReason),
        ] + (s.sessionGaps.map { n in [("session gaps", "\(n) (\(f3(s.sessionGapSeconds ?? 0)) s away; no drops counted inside)")] } ?? [])
            + (log.segmentDescription.map { [("file", $0)] } ?? []) + Self.systemRows(log)
        let scanout = s.scanout.map { [("scanout", $0.crcVerdict)] } ?? []
        for (k, v) in rows + scanout { h += "<tr><th>\(k)</th><td>\(JUnitReport.escape(v))</td></tr>\n" }
        h += "</table>\n"
        if let lr = chart.longRun {
            h += "<h2>Worst drop events</h2><p>\(chart.markedFrames) frames with a drop cause; "
            h += "the \(lr.worst.count) worst (most dropped refreshes, then most late refreshes), in frame order:</p>"
        } else {
            h += "<h2>Drops</h2>"
        }
        h += "<table><tr><th>frame</th><th>outcome</th><th>cause</th><th>dropped refreshes</th><th>late refreshes</th></tr>\n"
        for r in chart.dropRows {
            h += "<tr><td>\(r.frame)</td><td>\(r.outcome.rawValue)</td><td>\(r.cause.rawValue)</td><td>\(r.droppedRefreshes)</td><td>\(r.lateRefreshes)</td></tr>\n"
        }
        h += "</table>\n"
        if !log.rateSwitches.isEmpty {
            h += "<h2>Rate switches</h2><table><tr><th>frame</th><th>from (Hz)</th><th>to (Hz)</th><th>why</th></tr>\n"
            for r in log.rateSwitches {
                h += "<tr><td>\(r.frame)</td><td>\(f3(r.fromHz))</td><td>\(f3(r.toHz))</td><td>\(JUnitReport.escape(r.reason))</td></tr>\n"
            }
            h += "</table>\n"
        }
        h += "</body></html>\n"
        return h
    }

    /// The header's machine context, when the log has it.
    static func systemRows(_ log: RunLog) -> [(String, String)] {
        guard let sys = log.header?.system else { return [] }
        var rows: [(String, String)] = [("display driver", sys.driver)]
        if let k = sys.kernel { rows.append(("kernel", k)) }
        if let m = sys.cpuModel { rows.append(("CPU", m + (sys.cpus.map { " (\($0) CPUs)" } ?? ""))) }
        if let g = sys.cpuGovernor { rows.append(("cpufreq governor", g)) }
        let temps = log.context.compactMap(\.cpuTemperatureC)
        if let lo = temps.min(), let hi = temps.max() {
            rows.append(("CPU temperature (°C)", String(format: "%.1f – %.1f", lo, hi)))
        }
        return rows
    }
}

extension PNGReport {
    /// The colour of the pictures' text.
    static let textColor: UInt32 = 0x202020

    /// A bitmap of the chart's size on the background, with the chart's title line drawn (both
    /// pictures start so).
    static func titledBitmap(_ chart: ReportChart) -> Bitmap {
        let bmp = Bitmap(width: chart.width, height: chart.height)
        let c = bmp.canvas
        c.clear(Color(rgb: ReportChart.background))
        let titleScale = BitmapFont.width(of: chart.title, scale: 2) <= chart.width - 24 ? 2 : 1
        c.drawText(chart.title, x: 12, y: titleScale == 2 ? 10 : 16, scale: titleScale, Color(rgb: textColor))
        return bmp
    }

    /// What both pictures draw with: the ``titledBitmap(_:)``, its canvas, and the colours of
    /// the gridlines, the axes and the text.
    static func titledCanvas(_ chart: ReportChart) -> (Bitmap, Canvas, grid: Color, axis: Color, text: Color) {
        let bmp = titledBitmap(chart)
        let grid = Color(rgb: ReportChart.gridColor), axis = Color(rgb: ReportChart.axisColor)
        return (bmp, bmp.canvas, grid, axis, Color(rgb: textColor))
    }
}
