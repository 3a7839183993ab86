import CadenceCore
import Foundation
import Raster

extension PNGReport {
    /// The long-run picture (``ReportChart/longRun``) as a bitmap.
    static func renderLongRun(_ chart: ReportChart) -> Bitmap {
        guard let lr = chart.longRun, let layout = chart.longRunLayout else {
            return Bitmap(width: chart.width, height: chart.height)
        }
        let (bmp, c, grid, axis, text) = titledCanvas(chart)
        let tl = chart.timeline

        // Dropped refreshes per bin, coloured by the bin's main cause.
        c.drawText(chart.longRunCaption, x: Int(tl.x), y: Int(tl.y) - 14, scale: 1, axis)
        c.fillRect(x: Int(tl.x), y: Int(tl.maxY), width: Int(tl.width), height: 1, axis)
        c.fillRect(x: Int(tl.x), y: Int(tl.y), width: 1, height: Int(tl.height), axis)
        let top = chart.longRunDropTop
        for (v, label) in [(top, String(top)), (0, "0")] {
            let y = Int((tl.maxY - Double(v) / Double(top) * (tl.height - 4)).rounded())
            if v > 0 { c.fillRect(x: Int(tl.x), y: y, width: Int(tl.width), height: 1, grid) }
            c.drawText(label, x: Int(tl.x) - 8 - BitmapFont.width(of: label), y: y - 4, scale: 1, axis)
        }
        for (i, b) in lr.bins.enumerated() where b.droppedRefreshes > 0 {
            let x0 = chart.x(binStart: i), x1 = Swift.max(x0 + 1, chart.x(binStart: i + 1))
            let h = Swift.max(2, Double(b.droppedRefreshes) / Double(top) * (tl.height - 4))
            let col = Color(rgb: lr.mainCause(bin: i).map(ReportChart.color) ?? ReportChart.color(.renderLate))
            c.fill(
                IntRect(
                    minX: Int(x0.rounded(.down)), minY: Int((tl.maxY - h).rounded()),
                    maxX: Swift.max(Int(x0.rounded(.down)) + 1, Int(x1.rounded())), maxY: Int(tl.maxY)), col)
        }
        // The worst events, numbered on the top panel.
        for (i, e) in lr.worst.enumerated() {
            let x = chart.x(frame: e.drop.frame)
            c.drawText(String(i + 1), x: Int(x) - 2, y: Int(tl.y) + 2, scale: 1, text)
        }
        legend(chart, c)

        // The interval envelope: min to max per bin, and the mean.
        let env = layout.envelope
        c.drawText(
            "frame interval per bin in refreshes: min-max (band) and mean (line); 1 refresh = \(String(format: "%.3f", chart.refreshMs)) ms",
            x: Int(env.x), y: Int(env.y) - 14, scale: 1, axis)
        for k in 0...chart.yMaxRefreshes where chart.yMaxRefreshes <= 8 || k % 8 == 0 {
            let y = Int(chart.envelopeY(intervalMs: Double(k) * chart.refreshMs).rounded())
            c.fillRect(x: Int(env.x), y: y, width: Int(env.width), height: 1, k == 0 ? axis : grid)
            let label = "\(k)x"
            c.drawText(label, x: Int(env.x) - 8 - BitmapFont.width(of: label), y: y - 4, scale: 1, axis)
        }
        c.fillRect(x: Int(env.x), y: Int(env.y), width: 1, height: Int(env.height), axis)
        let line = Color(rgb: ReportChart.lineColor)
        let band = line.withAlpha(90)
        var prev: Raster.Point? = nil
        for (i, b) in lr.bins.enumerated() where b.intervals > 0 {
            let x0 = chart.x(binStart: i), x1 = Swift.max(x0 + 1, chart.x(binStart: i + 1))
            let yMin = chart.envelopeY(intervalMs: Double(b.minIntervalNs) / 1e6),
                yMax = chart.envelopeY(intervalMs: Double(b.maxIntervalNs) / 1e6)
            c.fill(
                IntRect(
                    minX: Int(x0.rounded(.down)), minY: Int(yMax.rounded(.down)),
                    maxX: Swift.max(Int(x0.rounded(.down)) + 1, Int(x1.rounded())),
                    maxY: Swift.max(Int(yMax.rounded(.down)) + 1, Int(yMin.rounded(.up)))), band)
            let q = Raster.Point((x0 + x1) / 2, chart.envelopeY(intervalMs: b.meanIntervalNs / 1e6))
            if let a = prev { c.strokeLine(from: a, to: q, width: 1.2, line) }
            prev = q
        }
        // The time axis under both panels.
        for t in chart.timeTicks {
            c.fillRect(x: Int(t.x.rounded()), y: Int(env.maxY), width: 1, height: 5, axis)
            c.fillRect(x: Int(t.x.rounded()), y: Int(tl.maxY), width: 1, height: 4, axis)
            c.drawText(
                t.label, x: Swift.max(Int(env.x), Int(t.x) - BitmapFont.width(of: t.label) / 2), y: Int(env.maxY) + 8,
                scale: 1, axis)
        }

        // Temperature (band) and frequency (line) per bin.
        if let cb = layout.context {
            c.drawText(chart.longRunContextCaption, x: Int(cb.x), y: Int(cb.y) - 14, scale: 1, axis)
            c.fillRect(x: Int(cb.x), y: Int(cb.maxY), width: Int(cb.width), height: 1, axis)
            c.fillRect(x: Int(cb.x), y: Int(cb.y), width: 1, height: Int(cb.height), axis)
            for v in [chart.temperatureRange.lowerBound, chart.temperatureRange.upperBound]
            where lr.context.contains(where: { $0.minCelsius != nil }) {
                let y = Int((chart.contextY(celsius: v) ?? cb.y).rounded())
                c.fillRect(x: Int(cb.x), y: y, width: Int(cb.width), height: 1, grid)
                let label = String(format: "%.0f", v)
                c.drawText(label, x: Int(cb.x) - 8 - BitmapFont.width(of: label), y: y - 4, scale: 1, axis)
            }
            let tcol = Color(rgb: ReportChart.temperatureColor), fcol = Color(rgb: ReportChart.frequencyColor)
            var prevF: Raster.Point? = nil
            for e in lr.context {
                let x0 = chart.x(binStart: e.bin), x1 = Swift.max(x0 + 1, chart.x(binStart: e.bin + 1))
                if let lo = e.minCelsius, let hi = e.maxCelsius, let y0 = chart.contextY(celsius: hi),
                    let y1 = chart.contextY(celsius: lo)
                {
                    c.fill(
                        IntRect(
                            minX: Int(x0.rounded(.down)), minY: Int(y0.rounded(.down)),
                            maxX: Swift.max(Int(x0.rounded(.down)) + 1, Int(x1.rounded())),
                            maxY: Swift.max(Int(y0.rounded(.down)) + 2, Int(y1.rounded(.up)))), tcol)
                }
                if let f = e.meanFrequencyMHz, let y = chart.contextY(frequencyMHz: f) {
                    let q = Raster.Point((x0 + x1) / 2, y)
                    if let a = prevF { c.strokeLine(from: a, to: q, width: 1, fcol) }
                    prevF = q
                }
            }
        }

        // The worst events, each with its neighbourhood.
        if let first = layout.events.first {
            c.drawText(
                "the \(lr.worst.count) worst drop events (over \(LongRun.neighbourhood) frames apart) of \(chart.markedFrames) frames with a drop cause, +-\(LongRun.neighbourhood) shown frames, interval in refreshes",
                x: Int(first.x), y: Int(first.y) - 44, scale: 1, axis)
        }
        for (i, e) in lr.worst.enumerated() {
            let b = layout.events[i]
            let r = chart.eventRange(i)
            let caption = chart.eventCaption(i)
            c.drawText(caption.0, x: Int(b.x), y: Int(b.y) - 24, scale: 1, text)
            c.drawText(caption.1, x: Int(b.x), y: Int(b.y) - 12, scale: 1, Color(rgb: ReportChart.color(e.drop.cause)))
            for k in 0...r.topRefreshes where r.topRefreshes <= 8 || k % 8 == 0 {
                let y = Int(chart.eventPoint(i, frame: r.first, intervalMs: Double(k) * chart.refreshMs).y.rounded())
                c.fillRect(x: Int(b.x), y: y, width: Int(b.width), height: 1, k == 0 ? axis : grid)
            }
            c.fillRect(x: Int(b.x), y: Int(b.y), width: 1, height: Int(b.height), axis)
            let ex = chart.eventPoint(i, frame: e.drop.frame, intervalMs: 0).x
            c.fillRect(
                x: Int(ex) - 1, y: Int(b.y), width: 3, height: Int(b.height),
                Color(rgb: ReportChart.color(e.drop.cause)).withAlpha(70))
            var p: Raster.Point? = nil
            for pt in e.points {
                let q = chart.eventPoint(i, frame: pt.frame, intervalMs: pt.intervalMs)
                let qq = Raster.Point(q.x, q.y)
                if let a = p { c.strokeLine(from: a, to: qq, width: 1.2, line) }
                p = qq
            }
            c.fillCircle(center: Raster.Point(ex, b.y + 6), radius: 4, Color(rgb: ReportChart.color(e.drop.cause)))
            let l0 = String(r.first), l1 = String(r.last)
            c.drawText(l0, x: Int(b.x), y: Int(b.maxY) + 4, scale: 1, axis)
            c.drawText(l1, x: Int(b.maxX) - BitmapFont.width(of: l1), y: Int(b.maxY) + 4, scale: 1, axis)
        }

        histogram(chart, c)
        return bmp
    }
}

extension SVGReport {
    /// The long-run picture (``ReportChart/longRun``) as SVG. The panels over the whole run are
    /// in `<g class="zoom">` groups (the HTML report zooms them): bins `class="bin"
    /// data-frame data-frames data-dropped-refreshes`, the envelope `class="envelope"`, the
    /// worst events `class="worst" data-frame data-cause data-dropped-refreshes`.
    static func svgLongRun(_ chart: ReportChart) -> String {
        guard let lr = chart.longRun, let layout = chart.longRunLayout else { return "" }
        let f = { (v: Double) in String(format: "%.2f", v) }
        let hex = { (c: UInt32) in String(format: "#%06X", c) }
        let axis = hex(ReportChart.axisColor), grid = hex(ReportChart.gridColor)
        let tl = chart.timeline
        var s =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"long-run\" width=\"\(chart.width)\" height=\"\(chart.height)\" viewBox=\"0 0 \(chart.width) \(chart.height)\" font-family=\"monospace\" font-size=\"11\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"\(hex(ReportChart.background))\"/>\n"
        s += "<text class=\"title\" x=\"12\" y=\"24\" font-size=\"15\">\(JUnitReport.escape(chart.title))</text>\n"
        s +=
            "<text x=\"\(f(tl.x))\" y=\"\(f(tl.y - 6))\" fill=\"\(axis)\">\(JUnitReport.escape(chart.longRunCaption))</text>\n"
        let top = chart.longRunDropTop
        s +=
            "<g class=\"grid\">\n<line x1=\"\(f(tl.x))\" y1=\"\(f(tl.maxY))\" x2=\"\(f(tl.maxX))\" y2=\"\(f(tl.maxY))\" stroke=\"\(axis)\"/>\n"
        let yTop = tl.maxY - (tl.height - 4)
        s += "<line x1=\"\(f(tl.x))\" y1=\"\(f(yTop))\" x2=\"\(f(tl.maxX))\" y2=\"\(f(yTop))\" stroke=\"\(grid)\"/>\n"
        s +=
            "<text x=\"\(f(tl.x - 6))\" y=\"\(f(yTop + 4))\" text-anchor=\"end\" fill=\"\(axis)\">\(top)</text><text x=\"\(f(tl.x - 6))\" y=\"\(f(tl.maxY + 4))\" text-anchor=\"end\" fill=\"\(axis)\">0</text>\n"
        let env = layout.envelope
        s +=
            "<text x=\"\(f(env.x))\" y=\"\(f(env.y - 6))\" fill=\"\(axis)\">frame interval per bin in refreshes: min–max (band) and mean (line); 1 refresh = \(String(format: "%.3f", chart.refreshMs)) ms</text>\n"
        for k in 0...chart.yMaxRefreshes where chart.yMaxRefreshes <= 8 || k % 8 == 0 {
            let y = chart.envelopeY(intervalMs: Double(k) * chart.refreshMs)
            s +=
                "<line class=\"gridline\" data-refreshes=\"\(k)\" x1=\"\(f(env.x))\" y1=\"\(f(y))\" x2=\"\(f(env.maxX))\" y2=\"\(f(y))\" stroke=\"\(k == 0 ? axis : grid)\"/>\n"
            s += "<text x=\"\(f(env.x - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\" fill=\"\(axis)\">\(k)×</text>\n"
        }
        s += "</g>\n<g class=\"zoom time-axis\">\n"
        for t in chart.timeTicks {
            s +=
                "<text class=\"tick\" x=\"\(f(t.x))\" y=\"\(f(env.maxY + 16))\" text-anchor=\"\(t.x - env.x < 16 ? "start" : "middle")\" fill=\"\(axis)\">\(t.label)</text>\n"
        }
        s += "</g>\n<g class=\"zoom bins\">\n"
        for (i, b) in lr.bins.enumerated() where b.droppedRefreshes > 0 {
            let x0 = chart.x(binStart: i), x1 = Swift.max(x0 + 1, chart.x(binStart: i + 1))
            let h = Swift.max(2, Double(b.droppedRefreshes) / Double(top) * (tl.height - 4))
            let col = hex(lr.mainCause(bin: i).map(ReportChart.color) ?? ReportChart.color(.renderLate))
            s +=
                "<rect class=\"bin\" data-frame=\"\(lr.firstFrame(bin: i))\" data-frames=\"\(lr.binWidth)\" data-dropped-refreshes=\"\(b.droppedRefreshes)\" x=\"\(f(x0))\" y=\"\(f(tl.maxY - h))\" width=\"\(f(x1 - x0))\" height=\"\(f(h))\" fill=\"\(col)\"/>\n"
        }
        for (i, e) in lr.worst.enumerated() {
            let x = chart.x(frame: e.drop.frame)
            s +=
                "<text class=\"worst\" data-frame=\"\(e.drop.frame)\" data-cause=\"\(e.drop.cause.rawValue)\" data-dropped-refreshes=\"\(e.drop.droppedRefreshes)\" x=\"\(f(x))\" y=\"\(f(tl.y + 10))\" text-anchor=\"middle\">\(i + 1)</text>\n"
        }
        s += "</g>\n<g class=\"zoom envelope\">\n"
        let col = hex(ReportChart.lineColor)
        var mean = ""
        for (i, b) in lr.bins.enumerated() where b.intervals > 0 {
            let x0 = chart.x(binStart: i), x1 = Swift.max(x0 + 1, chart.x(binStart: i + 1))
            let yMin = chart.envelopeY(intervalMs: Double(b.minIntervalNs) / 1e6),
                yMax = chart.envelopeY(intervalMs: Double(b.maxIntervalNs) / 1e6)
            s +=
                "<rect class=\"envelope\" x=\"\(f(x0))\" y=\"\(f(yMax))\" width=\"\(f(x1 - x0))\" height=\"\(f(Swift.max(1, yMin - yMax)))\" fill=\"\(col)\" fill-opacity=\"0.35\"/>\n"
            mean += "\(f((x0 + x1) / 2)),\(f(chart.envelopeY(intervalMs: b.meanIntervalNs / 1e6))) "
        }
        s += "<polyline class=\"mean\" fill=\"none\" stroke=\"\(col)\" stroke-width=\"1.2\" points=\"\(mean)\"/>\n"
        s += "</g>\n<g class=\"legend\">\n"
        s += legend(chart)
        s += "</g>\n"
        if let cb = layout.context {
            s +=
                "<g class=\"context\">\n<text x=\"\(f(cb.x))\" y=\"\(f(cb.y - 6))\" fill=\"\(axis)\">\(JUnitReport.escape(chart.longRunContextCaption))</text>\n"
            s +=
                "<line x1=\"\(f(cb.x))\" y1=\"\(f(cb.maxY))\" x2=\"\(f(cb.maxX))\" y2=\"\(f(cb.maxY))\" stroke=\"\(axis)\"/>\n</g>\n<g class=\"zoom context\">\n"
            var freq = ""
            for e in lr.context {
                let x0 = chart.x(binStart: e.bin), x1 = Swift.max(x0 + 1, chart.x(binStart: e.bin + 1))
                if let lo = e.minCelsius, let hi = e.maxCelsius, let y0 = chart.contextY(celsius: hi),
                    let y1 = chart.contextY(celsius: lo)
                {
                    s +=
                        "<rect class=\"temperature\" data-min-celsius=\"\(String(format: "%.1f", lo))\" data-max-celsius=\"\(String(format: "%.1f", hi))\" x=\"\(f(x0))\" y=\"\(f(y0))\" width=\"\(f(x1 - x0))\" height=\"\(f(Swift.max(2, y1 - y0)))\" fill=\"\(hex(ReportChart.temperatureColor))\"/>\n"
                }
                if let fr = e.meanFrequencyMHz, let y = chart.contextY(frequencyMHz: fr) {
                    freq += "\(f((x0 + x1) / 2)),\(f(y)) "
                }
            }
            if !freq.isEmpty {
                s +=
                    "<polyline class=\"frequency\" fill=\"none\" stroke=\"\(hex(ReportChart.frequencyColor))\" stroke-width=\"1\" points=\"\(freq)\"/>\n"
            }
            s += "</g>\n"
        }
        s += "<g class=\"worst-events\">\n"
        if let first = layout.events.first {
            s +=
                "<text x=\"\(f(first.x))\" y=\"\(f(first.y - 36))\" fill=\"\(axis)\">the \(lr.worst.count) worst drop events (over \(LongRun.neighbourhood) frames apart) of \(chart.markedFrames) frames with a drop cause, ±\(LongRun.neighbourhood) shown frames, interval in refreshes</text>\n"
        }
        for (i, e) in lr.worst.enumerated() {
            let b = layout.events[i]
            let r = chart.eventRange(i)
            let ccol = hex(ReportChart.color(e.drop.cause))
            s +=
                "<g class=\"event\" data-frame=\"\(e.drop.frame)\" data-cause=\"\(e.drop.cause.rawValue)\" data-dropped-refreshes=\"\(e.drop.droppedRefreshes)\" data-first-frame=\"\(r.first)\" data-last-frame=\"\(r.last)\">\n"
            let caption = chart.eventCaption(i)
            s +=
                "<text x=\"\(f(b.x))\" y=\"\(f(b.y - 16))\">\(JUnitReport.escape(caption.0))</text><text x=\"\(f(b.x))\" y=\"\(f(b.y - 4))\" fill=\"\(ccol)\">\(JUnitReport.escape(caption.1))</text>\n"
            for k in 0...r.topRefreshes where r.topRefreshes <= 8 || k % 8 == 0 {
                let y = chart.eventPoint(i, frame: r.first, intervalMs: Double(k) * chart.refreshMs).y
                s +=
                    "<line x1=\"\(f(b.x))\" y1=\"\(f(y))\" x2=\"\(f(b.maxX))\" y2=\"\(f(y))\" stroke=\"\(k == 0 ? axis : grid)\"/>\n"
            }
            let ex = chart.eventPoint(i, frame: e.drop.frame, intervalMs: 0).x
            s +=
                "<rect class=\"stripe\" x=\"\(f(ex - 1.5))\" y=\"\(f(b.y))\" width=\"3\" height=\"\(f(b.height))\" fill=\"\(ccol)\" fill-opacity=\"0.27\"/>\n"
            var pts = ""
            for pt in e.points {
                let q = chart.eventPoint(i, frame: pt.frame, intervalMs: pt.intervalMs)
                pts += "\(f(q.x)),\(f(q.y)) "
            }
            s +=
                "<polyline class=\"intervals\" data-points=\"\(e.points.count)\" fill=\"none\" stroke=\"\(col)\" stroke-width=\"1.2\" points=\"\(pts)\"/>\n"
            s +=
                "<circle class=\"drop \(e.drop.cause.rawValue)\" cx=\"\(f(ex))\" cy=\"\(f(b.y + 6))\" r=\"4\" fill=\"\(ccol)\"/>\n"
            s +=
                "<text x=\"\(f(b.x))\" y=\"\(f(b.maxY + 14))\" fill=\"\(axis)\">\(r.first)</text><text x=\"\(f(b.maxX))\" y=\"\(f(b.maxY + 14))\" text-anchor=\"end\" fill=\"\(axis)\">\(r.last)</text>\n</g>\n"
        }
        s += "</g>\n"
        s += histogram(chart)
        s += "</svg>\n"
        return s
    }
}
