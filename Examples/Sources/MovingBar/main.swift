// Paces a moving white bar at 60 Hz for 5 seconds: on the first KMS display that opens,
// else on a 1280x720 fake display at 120 Hz (virtual time). Prints every 60th frame's
// presentation and the run's drops.
import CadenceCore
import KMSDisplay

let display: any DisplayBackend
do {
    display = try KMSDisplay.open()
} catch {
    print("no KMS display (\(error)); using the fake display")
    display = FakeDisplay(refreshHz: 120, width: 1280, height: 720)
}

/// Draws a 64-pixel-wide white bar on black, `x` pixels from the left.
func drawBar(into canvas: PixelSurface, x: Int) {
    for y in 0..<canvas.height {
        let row = (canvas.base + y * canvas.stride).assumingMemoryBound(to: UInt32.self)
        row.update(repeating: 0x0000_0000, count: canvas.width)
        let start = min(x, canvas.width), end = min(x + 64, canvas.width)
        (row + start).update(repeating: 0x00FF_FFFF, count: end - start)
    }
}

let range = FrameRateRange(minimum: 30, maximum: 120, preferred: 60)
let link = DisplayLink(display: display, preferredFrameRateRange: range) { update in
    let drawable = update.drawable
    let canvas = drawable.canvas
    let seconds = Double(update.targetPresentationTimestamp.nanoseconds) / 1e9
    drawBar(into: canvas, x: Int(seconds * 400) % max(1, canvas.width))
    if drawable.drawableID % 60 == 0 {
        drawable.addPresentedHandler { d in print("drawable \(d.drawableID) presented at \(d.presentedTime)") }
    }
    drawable.present()
}
let result = try link.run(for: .seconds(5))
let s = result.summary
print("\(s.presented) frames at \(s.effectiveRateHz) Hz on \(s.backend), \(s.droppedRefreshes) dropped refreshes")
try display.close()   // gives the console back (KMS)
