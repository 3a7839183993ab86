import Raster
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The benchmark workloads of `cadence bench`, defined so any 2D library can do the same
/// work: shapes come from xorshift32 seeded 0x12345678 (`x ^= x << 13; x ^= x >> 17;
/// x ^= x << 5`), values taken in the order listed, colours `r() & 0xFFFFFF` at 50% alpha.
public enum BenchWorkload: Equatable, Sendable, CustomStringConvertible {
    /// Clear the frame to an opaque colour.
    case fill
    /// 1000 rectangles: x = r() % W, y = r() % H, w = 20 + r() % 181, h = 20 + r() % 181, colour.
    case rects
    /// 500 anti-aliased circles: cx = r() % W, cy = r() % H, radius = 10 + r() % 51, colour.
    case circles
    /// A full-frame opaque two-stop linear gradient from (0,0) red to (W,H) blue.
    case gradient
    /// Copy an opaque W×H image to offset (frame × 7 mod W, 0) with wrap-around.
    case blit
    /// `memset` of the frame (the store-bandwidth limit).
    case memset
    /// `memcpy` of an equal buffer onto the frame (the copy-bandwidth limit).
    case memcpy
    /// A scene from the catalogue.
    case scene(String)

    /// The workloads `--workload all` runs, in order.
    public static let standard: [BenchWorkload] = [.fill, .rects, .circles, .gradient, .blit, .memset, .memcpy]

    /// Parses `fill`, `rects`, …, or `scene:NAME` (nil for anything else or an unknown scene).
    public init?(_ text: String) {
        switch text {
        case "fill": self = .fill
        case "rects": self = .rects
        case "circles": self = .circles
        case "gradient": self = .gradient
        case "blit": self = .blit
        case "memset": self = .memset
        case "memcpy": self = .memcpy
        default:
            guard text.hasPrefix("scene:"), let s = SceneCatalog.scene(named: String(text.dropFirst(6))) else { return nil }
            self = .scene(s.name)
        }
    }

    public var description: String {
        switch self {
        case .fill: return "fill"
        case .rects: return "rects"
        case .circles: return "circles"
        case .gradient: return "gradient"
        case .blit: return "blit"
        case .memset: return "memset"
        case .memcpy: return "memcpy"
        case .scene(let n): return "scene:\(n)"
        }
    }
}

/// The xorshift32 stream the workloads are defined by.
public struct WorkloadRandom {
    public private(set) var state: UInt32 = 0x1234_5678
    public init() {}
    public mutating func next() -> UInt32 {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return state
    }
}

/// A workload with its shapes and images generated for one frame size, ready to run
/// repeatedly (generation is not part of the timed work). Immutable once made, so its bands may
/// read it from several threads.
public final class PreparedWorkload: Sendable {
    public let workload: BenchWorkload
    public let width: Int
    public let height: Int
    let rects: [(IntRect, Color)]
    let circles: [(Point, Double, Color)]
    let image: Bitmap?
    let scene: (any Scene)?
    let gradient = Gradient(.red, .blue)

    public init(_ workload: BenchWorkload, width: Int, height: Int) {
        self.workload = workload
        self.width = width
        self.height = height
        var r = WorkloadRandom()
        var rects: [(IntRect, Color)] = []
        var circles: [(Point, Double, Color)] = []
        var image: Bitmap?
        var scene: (any Scene)?
        switch workload {
        case .rects:
            for _ in 0..<1000 {
                let x = Int(r.next() % UInt32(width)), y = Int(r.next() % UInt32(height))
                let w = 20 + Int(r.next() % 181), h = 20 + Int(r.next() % 181)
                rects.append((IntRect(x: x, y: y, width: w, height: h), Color(argb: (r.next() & 0xFF_FFFF) | 0x8000_0000)))
            }
        case .circles:
            for _ in 0..<500 {
                let cx = Double(r.next() % UInt32(width)), cy = Double(r.next() % UInt32(height))
                let radius = Double(10 + r.next() % 51)
                circles.append((Point(cx, cy), radius, Color(argb: (r.next() & 0xFF_FFFF) | 0x8000_0000)))
            }
        case .blit, .memcpy:
            let img = Bitmap(width: width, height: height)
            img.canvas.fillLinearGradient(img.canvas.bounds, from: Point(0, 0), to: Point(Double(width), 0), Gradient(.black, .white))
            image = img
        case .scene(let name):
            scene = SceneCatalog.scene(named: name)
        default:
            break
        }
        self.rects = rects
        self.circles = circles
        self.image = image
        self.scene = scene
    }

    /// Draws frame `frame` of the workload into `canvas` using `renderer`'s bands.
    public func run(frame: Int, into canvas: Canvas, renderer: BandedRenderer) {
        switch workload {
        case .fill:
            renderer.render(canvas) { $0.clear(Color(rgb: 0x336699)) }
        case .rects:
            renderer.render(canvas) { c in for (rect, color) in rects { c.fill(rect, color) } }
        case .circles:
            renderer.render(canvas) { c in for (p, radius, color) in circles { c.fillCircle(center: p, radius: radius, color) } }
        case .gradient:
            renderer.render(canvas) { c in
                c.fillLinearGradient(c.bounds, from: Point(0, 0), to: Point(Double(self.width), Double(self.height)), self.gradient)
            }
        case .blit:
            let x = (frame &* 7) % width
            renderer.render(canvas) { c in c.blit(self.image!.canvas, x: x, y: 0, wrap: true) }
        case .memset:
            renderer.render(canvas) { c in
                let r = c.clip
                memset(c.base + r.minY * c.stride, 0x40, r.height * c.stride)
            }
        case .memcpy:
            let src = image!
            renderer.render(canvas) { c in
                let r = c.clip
                memcpy(c.base + r.minY * c.stride, src.base + r.minY * src.stride, r.height * c.stride)
            }
        case .scene:
            SceneRenderer(scene: scene!, threads: renderer.threads).render(into: canvas, context: SceneContext(frameIndex: frame))
        }
    }
}
