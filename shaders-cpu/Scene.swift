import Raster

/// Everything a scene may depend on for one frame. Scenes are pure functions of
/// (canvas size, this context): the same context always draws the same pixels.
public struct SceneContext: Sendable, Equatable {
    /// Index of the frame being drawn (0 for the first). Motion is driven by this, so a
    /// dropped frame shows as a jump.
    public var frameIndex: Int
    /// Seconds since the run started (the frame's target presentation time).
    public var time: Double
    /// The display's nominal refresh rate in Hz.
    public var refreshHz: Double
    /// The rate frames are being produced at, in Hz (refresh divided by the frame interval
    /// in refreshes; equal to `refreshHz` when every refresh gets a new frame).
    public var effectiveRateHz: Double

    /// A context; `time` defaults to `frameIndex / effectiveRateHz`, the rate to the refresh.
    public init(frameIndex: Int, time: Double? = nil, refreshHz: Double = 60, effectiveRateHz: Double? = nil) {
        let rate = effectiveRateHz ?? refreshHz
        self.frameIndex = frameIndex
        self.refreshHz = refreshHz
        self.effectiveRateHz = rate
        self.time = time ?? (rate > 0 ? Double(frameIndex) / rate : 0)
    }
}

/// A test picture drawn on the CPU every frame.
public protocol Scene: Sendable {
    /// Short name used on the command line (`--scene NAME`).
    var name: String { get }
    /// One line saying what the scene shows and what it is for.
    var summary: String { get }
    /// Draws the frame for `context` into `canvas`, touching only pixels inside its clip.
    /// Layout depends only on the canvas size (not its clip), so banded rendering matches.
    func render(into canvas: Canvas, context: SceneContext)
}

/// The built-in scenes.
public enum SceneCatalog {
    /// Every scene, in the order `cadence scenes` lists them.
    public static let all: [any Scene] = [
        FlashScene(), CounterScene(), BarScene(), UFOScene(), ScrollScene(), GradientScene(), StressScene(),
    ]

    /// Scene names, in catalogue order.
    public static var names: [String] { all.map(\.name) }

    /// The scene called `name` (case-insensitive), or nil.
    public static func scene(named name: String) -> (any Scene)? {
        let key = name.lowercased()
        return all.first { $0.name == key }
    }
}

/// Draws a scene (and optionally the HUD on top) into a canvas, split into horizontal bands
/// across threads. Create one per run and call ``render(into:context:hud:identity:)`` per frame.
public struct SceneRenderer: Sendable {
    public let scene: any Scene
    public let bands: BandedRenderer

    /// A renderer for `scene` on `threads` threads (nil: every online core).
    public init(scene: any Scene, threads: Int? = nil) {
        self.scene = scene
        self.bands = threads.map { BandedRenderer(threads: $0) } ?? .allCores
    }

    /// Renders one frame into `canvas`, with the HUD overlay when `hud` is given and, with
    /// `identity`, the frame's ``FrameIdentity`` on top (without it, the scene's pixels alone).
    public func render(into canvas: Canvas, context: SceneContext, hud: HUDStats? = nil, identity: Bool = false) {
        let scene = self.scene
        if let hud {
            bands.render(canvas) { band in
                scene.render(into: band, context: context)
                HUD.draw(hud, into: band)
                if identity { FrameIdentity.draw(context.frameIndex, into: band) }
            }
        } else if identity {
            bands.render(canvas) { band in
                scene.render(into: band, context: context)
                FrameIdentity.draw(context.frameIndex, into: band)
            }
        } else {
            bands.render(canvas) { band in scene.render(into: band, context: context) }
        }
    }

    /// Renders one frame into the XRGB8888 pixels at `base` (`stride` bytes per row),
    /// e.g. a display backend's shadow surface.
    public func render(base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, context: SceneContext,
                       hud: HUDStats? = nil, identity: Bool = false) {
        render(into: Canvas(base: base, width: width, height: height, stride: stride), context: context, hud: hud, identity: identity)
    }
}

/// Deterministic pseudo-random numbers (xorshift32) for scene layouts.
struct XorShift32 {
    var state: UInt32
    init(seed: UInt32) { state = seed == 0 ? 0x1234_5678 : seed }
    mutating func next() -> UInt32 {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return state
    }
    /// A value in 0..<n.
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt32(n)) }
}

/// Positive modulo.
@inline(__always)
func wrap(_ v: Int, _ m: Int) -> Int {
    guard m > 0 else { return 0 }
    let r = v % m
    return r < 0 ? r + m : r
}

/// A readable rate such as "59.94".
func hz(_ v: Double) -> String {
    var line = TextLine()
    line.append(v, fractionDigits: 2)
    return line.string
}
