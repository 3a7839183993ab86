import Raster

/// Motion-test rows in the spirit of the UFO test: a saucer per row crossing the screen at
/// 1, 2, 4 and 8 units per frame (a unit is 1/960 of the width, 2 px at 1920), over a
/// checkered track, each row labelled with its speed in pixels per frame and per second.
public struct UFOScene: Scene {
    public let name = "ufo"
    public let summary = "motion rows at 4 speeds (UFO-test style saucers over a checkered track)"
    public init() {}

    /// Pixels per frame for each row at a canvas width.
    public static func speeds(width: Int) -> [Int] {
        let unit = max(1, width / 960)
        return [1, 2, 4, 8].map { $0 * unit }
    }

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = canvas.width, h = canvas.height
        let speeds = Self.speeds(width: w)
        let rowH = max(1, h / speeds.count)
        let s = max(1, h / 360)
        let shades: [UInt32] = [0x1B2838, 0x22303F, 0x1B2838, 0x22303F]
        for (i, speed) in speeds.enumerated() {
            let y0 = i * rowH
            canvas.fillRect(x: 0, y: y0, width: w, height: rowH, Color(rgb: shades[i % shades.count]))
            // Checkered track along the bottom of the row.
            let cell = max(2, rowH / 12)
            let ty = y0 + rowH - 2 * cell
            var cx = 0, k = 0
            while cx < w {
                canvas.fillRect(x: cx, y: ty + (k & 1) * cell, width: cell, height: cell, Color(rgb: 0x808080))
                canvas.fillRect(x: cx, y: ty + (1 - (k & 1)) * cell, width: cell, height: cell, Color(rgb: 0x303030))
                cx += cell
                k += 1
            }
            // The saucer: body, dome, three lights; wraps around the right edge.
            let bodyRX = Double(rowH) * 0.32, bodyRY = Double(rowH) * 0.09
            let span = w + Int(bodyRX * 2) + 2
            let x = Double(wrap(context.frameIndex * speed, span)) - bodyRX - 1
            let yc = Double(y0) + Double(rowH) * 0.45
            canvas.fillCircle(center: Point(x, yc - bodyRY * 0.6), radius: bodyRY * 1.7, Color(rgb: 0x7FDBFF).withAlpha(200))
            canvas.fillEllipse(center: Point(x, yc), radiusX: bodyRX, radiusY: bodyRY, Color(rgb: 0xB0B0B0))
            for l in -1...1 {
                canvas.fillCircle(center: Point(x + Double(l) * bodyRX * 0.55, yc + bodyRY * 0.15), radius: max(1.5, bodyRY * 0.3), Color(rgb: 0xFFDC00))
            }
            let pps = Double(speed) * context.effectiveRateHz
            canvas.drawText("\(speed) PX/FRAME  \(Int(pps.rounded())) PX/S", x: 8 * s, y: y0 + 6 * s, scale: s, .white)
        }
    }
}

/// A checkerboard page scrolling diagonally under lines of text scrolling upwards: smooth
/// text motion makes uneven pacing and tearing easy to spot.
public struct ScrollScene: Scene {
    public let name = "scroll"
    public let summary = "checkerboard and text page scrolling at fixed pixels per frame"
    public init() {}

    static let words = "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 0123456789 +-=/%"

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = canvas.width, h = canvas.height
        let unit = max(1, h / 540)
        let cell = 32 * unit
        let f = context.frameIndex
        let ox = wrap(f * 2 * unit, 2 * cell), oy = wrap(f * unit, 2 * cell)
        canvas.clear(Color(rgb: 0x2E2E2E))
        // Dark cells of the checkerboard, shifted by the scroll offset.
        var row = 0
        var y = -oy
        while y < h {
            var col = 0
            var x = -ox
            while x < w {
                if (row + col) & 1 == 0 { canvas.fillRect(x: x, y: y, width: cell, height: cell, Color(rgb: 0x4A4A4A)) }
                x += cell
                col += 1
            }
            y += cell
            row += 1
        }
        // Text lines scroll up three units per frame, numbered from the top of the page.
        let scale = unit * 2
        let lineH = BitmapFont.cellHeight * scale + 4 * unit
        let scrolled = f * 3 * unit
        let first = scrolled / lineH
        var ly = -(scrolled % lineH)
        var n = first
        let margin = 24 * unit
        while ly < h {
            var line = TextLine()
            line.append(n % 10000)
            canvas.drawText(line, x: margin, y: ly, scale: scale, Color(rgb: 0xFFD37F))
            canvas.drawText(Self.words, x: margin + 6 * BitmapFont.cellWidth * scale, y: ly, scale: scale, .white)
            ly += lineH
            n += 1
        }
    }
}

/// A full-frame rainbow gradient rotating one degree per frame with a soft radial glow
/// orbiting the centre.
public struct GradientScene: Scene {
    public let name = "gradient"
    public let summary = "full-frame linear gradient sweeping 1 degree per frame, with an orbiting radial glow"
    public init() {}

    static let rainbow = Gradient(stops: [
        .init(0, Color(rgb: 0xFF0000)), .init(0.2, Color(rgb: 0xFFFF00)), .init(0.4, Color(rgb: 0x00FF00)),
        .init(0.6, Color(rgb: 0x00FFFF)), .init(0.8, Color(rgb: 0x0000FF)), .init(1, Color(rgb: 0xFF00FF)),
    ])
    static let glow = Gradient(stops: [.init(0, Color(rgb: 0xFFFFFF).withAlpha(220)), .init(1, Color(rgb: 0xFFFFFF).withAlpha(0))])

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = Double(canvas.width), h = Double(canvas.height)
        let (c, s) = Trig.degrees[wrap(context.frameIndex, 360)]
        let r = (w * w + h * h).squareRoot() / 2
        let mid = Point(w / 2, h / 2)
        canvas.fillLinearGradient(canvas.bounds, from: Point(mid.x - c * r, mid.y - s * r), to: Point(mid.x + c * r, mid.y + s * r), Self.rainbow)
        let (c2, s2) = Trig.degrees[wrap(context.frameIndex * 3, 360)]
        let orbit = h / 4, glowR = h / 5
        let g = Point(mid.x + c2 * orbit, mid.y + s2 * orbit)
        let box = IntRect(minX: Int(g.x - glowR), minY: Int(g.y - glowR), maxX: Int(g.x + glowR) + 1, maxY: Int(g.y + glowR) + 1)
        canvas.fillRadialGradient(box, center: g, radius: glowR, Self.glow)
    }
}
