import Raster
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// N blended anti-aliased shapes (discs, triangles, rotated squares) drifting across the
/// frame: a load that can be dialled up until frames miss their refresh on purpose.
public struct StressScene: Scene {
    public let name = "stress"
    public var summary: String { "\(shapeCount) blended anti-aliased shapes; N is tunable to cost a chosen fraction of the budget" }
    /// Number of shapes drawn per frame.
    public let shapeCount: Int

    /// The default load (about 1.7 ms per 1080p frame on one core of the development machine).
    public static let defaultShapeCount = 150

    public init(shapeCount: Int = StressScene.defaultShapeCount) {
        self.shapeCount = max(0, shapeCount)
    }

    public func render(into canvas: Canvas, context: SceneContext) {
        let w = canvas.width, h = canvas.height
        canvas.clear(Color(rgb: 0x0A0A14))
        let unit = Double(max(h, 1)) / 1080
        let f = context.frameIndex
        var pts = [Point](repeating: Point(0, 0), count: 4)
        for i in 0..<shapeCount {
            var rng = XorShift32(seed: UInt32(truncatingIfNeeded: (i + 1) &* 0x9E37_79B9))
            let size = (15 + Double(rng.below(46))) * unit
            let margin = Int(size) + 2
            let vx = rng.below(9) - 4, vy = rng.below(7) - 3
            let x = Double(wrap(rng.below(w + 2 * margin) + vx * f, w + 2 * margin) - margin)
            let y = Double(wrap(rng.below(h + 2 * margin) + vy * f, h + 2 * margin) - margin)
            let color = Color(argb: (rng.next() & 0xFF_FFFF) | UInt32(96 + rng.below(129)) << 24)
            let spin = rng.below(360)
            // Skip shapes wholly outside this band before building them.
            let c = canvas.clip
            if y + size < Double(c.minY) || y - size > Double(c.maxY) || x + size < Double(c.minX) || x - size > Double(c.maxX) { continue }
            switch i % 3 {
            case 0:
                canvas.fillCircle(center: Point(x, y), radius: size, color)
            default:
                let corners = i % 3 == 1 ? 3 : 4
                let angle0 = wrap(spin + f * (1 + i % 5), 360)
                for k in 0..<corners {
                    let (cs, sn) = Trig.degrees[wrap(angle0 + k * 360 / corners, 360)]
                    pts[k] = Point(x + cs * size, y + sn * size)
                }
                pts.withUnsafeBufferPointer { canvas.fillPolygon(UnsafeBufferPointer(rebasing: $0[0..<corners]), color) }
            }
        }
    }

    /// A stress scene whose shape count makes one frame cost about `fraction` of
    /// `budgetSeconds` at `width`×`height` with `threads` threads, measured here and now
    /// by timing frames with 0 and 200 shapes (the count is at least 1).
    public static func calibrated(fraction: Double, budgetSeconds: Double, width: Int, height: Int, threads: Int = 1) -> StressScene {
        let bmp = Bitmap(width: max(1, width), height: max(1, height))
        func seconds(_ n: Int) -> Double {
            let r = SceneRenderer(scene: StressScene(shapeCount: n), threads: threads)
            var best = Double.infinity
            for i in 0..<5 {
                let t0 = monotonicSeconds()
                r.render(into: bmp.canvas, context: SceneContext(frameIndex: i))
                best = min(best, monotonicSeconds() - t0)
            }
            return best
        }
        let base = seconds(0)
        let per = max(1e-9, (seconds(200) - base) / 200)
        let target = fraction * budgetSeconds - base
        return StressScene(shapeCount: max(1, min(1_000_000, Int(target / per))))
    }
}

/// Cosine and sine of whole degrees, computed once.
enum Trig {
    static let degrees: [(Double, Double)] = (0..<360).map { d in
        let t = Double(d) * Double.pi / 180
        return (cos(t), sin(t))
    }
}

/// CLOCK_MONOTONIC in seconds.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}
