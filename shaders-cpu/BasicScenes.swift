import Raster

/// Full-frame black/white alternation: even frames black, odd frames white, for a
/// photodiode on the panel.
public struct FlashScene: Scene {
    public let name = "flash"
    public let summary = "full-frame black/white alternation every frame (photodiode target)"
    public init() {}
    public func render(into canvas: Canvas, context: SceneContext) {
        canvas.clear(context.frameIndex & 1 == 0 ? .black : .white)
    }
}

/// A large decimal frame number and a 32-bit binary barcode of the index, for a camera.
public struct CounterScene: Scene {
    public let name = "counter"
    public let summary = "large frame number plus a 32-bit barcode of the index (camera capture)"
    public init() {}

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = canvas.width, h = canvas.height
        canvas.clear(Color(rgb: 0x101010))
        let index = context.frameIndex
        // Barcode: start marker (white, black), 32 bits MSB first, end marker (black, white).
        let cells = 36
        let cellW = max(1, w / (cells + 2))
        let barY = h * 3 / 4, barH = max(2, h / 8)
        let x0 = (w - cellW * cells) / 2
        let value = UInt32(truncatingIfNeeded: index)
        canvas.fillRect(x: x0 - cellW / 2, y: barY - cellW / 2, width: cellW * (cells + 1), height: barH + cellW, Color(rgb: 0x404040))
        for c in 0..<cells {
            let on: Bool
            switch c {
            case 0, cells - 1: on = true
            case 1, cells - 2: on = false
            default: on = (value >> UInt32(31 - (c - 2))) & 1 == 1
            }
            canvas.fillRect(x: x0 + c * cellW, y: barY, width: cellW, height: barH, on ? .white : .black)
        }
        // Frame number, as large as fits.
        let digits = String(index)
        let scale = max(1, min(h / 16, (w * 9 / 10) / max(1, digits.count * BitmapFont.cellWidth)))
        let tw = BitmapFont.width(of: digits, scale: scale)
        let ty = max(0, (barY - 7 * scale) / 2)
        canvas.drawText(digits, x: (w - tw) / 2, y: ty, scale: scale, .white)
        let s = max(1, h / 360)
        canvas.drawText("FRAME  \(hz(context.effectiveRateHz)) HZ OF \(hz(context.refreshHz)) HZ", x: 8 * s, y: 8 * s, scale: s, Color(rgb: 0xA0A0A0))
    }
}

/// A vertical bar moving a fixed number of pixels per frame over a ruler: any uneven
/// pacing shows as visible judder.
public struct BarScene: Scene {
    public let name = "bar"
    public let summary = "vertical bar moving a fixed number of pixels per frame (judder is visible)"
    public init() {}

    /// Pixels the bar moves per frame at a given canvas width (8 at 1920).
    public static func pixelsPerFrame(width: Int) -> Int { max(1, width / 240) }

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = canvas.width, h = canvas.height
        canvas.clear(Color(rgb: 0x202020))
        let step = Self.pixelsPerFrame(width: w)
        let barW = step * 2
        // Ruler: a tick at every position the bar's left edge takes, longer every 10 frames.
        let tick = max(1, h / 540)
        var x = 0
        var n = 0
        while x < w {
            canvas.fillRect(x: x, y: 0, width: tick, height: n % 10 == 0 ? h / 12 : h / 30, Color(rgb: 0x707070))
            x += step
            n += 1
        }
        let bx = wrap(context.frameIndex * step, w)
        canvas.fillRect(x: bx, y: h / 10, width: barW, height: h - h / 5, .white)
        if bx + barW > w { canvas.fillRect(x: bx - w, y: h / 10, width: barW, height: h - h / 5, .white) }
        let s = max(1, h / 360)
        canvas.drawText("\(step) PX/FRAME  FRAME \(context.frameIndex)", x: 8 * s, y: h - 12 * s, scale: s, Color(rgb: 0xA0A0A0))
    }
}
