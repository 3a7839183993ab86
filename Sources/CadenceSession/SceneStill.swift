import Raster
import Scenes

/// One frame of a scene drawn to a PNG file (what `cadence render` does), exactly as a run
/// would draw it on the display, and the parsing of the raster commands' text arguments.
public struct SceneStill {
    /// A text argument of the raster commands that is not what it must be; its description is
    /// the one line for the user.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        /// The line.
        public var description: String

        /// A failure with the line `description`.
        public init(description: String) { self.description = description }
    }

    /// The scene drawn.
    public var scene: any Scene
    /// The frame index drawn.
    public var frame: Int
    /// The frame's width in pixels.
    public var width: Int
    /// The frame's height in pixels.
    public var height: Int
    /// The refresh rate the frame context reports, Hz.
    public var refreshHz: Double
    /// Whether the HUD overlay is drawn, with steady intervals at the refresh rate.
    public var hud: Bool

    /// Frame `frame` of `scene` at `width`×`height`, its context reporting `refreshHz`.
    public init(scene: any Scene, frame: Int, width: Int, height: Int, refreshHz: Double, hud: Bool) {
        self.scene = scene
        self.frame = frame
        self.width = width
        self.height = height
        self.refreshHz = refreshHz
        self.hud = hud
    }

    /// The file written when none is named: SCENE-FRAME.png.
    public var defaultPath: String { "\(scene.name)-\(frame).png" }

    /// The HUD's statistics after `frame` frames at steady intervals of one refresh (nil
    /// without the HUD).
    public var hudStats: HUDStats? {
        guard hud else { return nil }
        var s = HUDStats(refreshHz: refreshHz)
        for _ in 0..<min(frame, IntervalRing.capacity) { s.recordFrame(intervalMs: 1000 / refreshHz) }
        s.presentedFrames = frame
        return s
    }

    /// The frame drawn.
    public func render() -> Bitmap {
        let bmp = Bitmap(width: width, height: height)
        SceneRenderer(scene: scene, threads: nil).render(
            into: bmp.canvas, context: SceneContext(frameIndex: frame, refreshHz: refreshHz), hud: hudStats)
        return bmp
    }

    /// Draws the frame and writes it as PNG to `path` (which must end in .png: else
    /// ``Invalid``); throws the writer's error. Returns the line saying what was written.
    public func write(to path: String) throws -> String {
        guard path.lowercased().hasSuffix(".png") else {
            throw Invalid(description: "output '\(path)' must end in .png")
        }
        // The canvas points into the bitmap's memory: the bitmap must outlive the write
        // (`render().canvas` freed it first; AddressSanitizer: heap-use-after-free).
        let bitmap = render()
        try withExtendedLifetime(bitmap) { try PNGWriter.write(bitmap.canvas, to: path) }
        return "wrote \(path) (\(width)x\(height), \(scene.name) frame \(frame))"
    }

    /// Parses "WIDTHxHEIGHT" (each 1...16384).
    public static func size(_ text: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...16384).contains(w),
            (1...16384).contains(h)
        else {
            throw Invalid(
                description: "invalid size '\(text)': expected WIDTHxHEIGHT such as 1920x1080 (1 to 16384 each)")
        }
        return (w, h)
    }

    /// The scene named `name` in the catalog.
    public static func scene(named name: String) throws -> any Scene {
        guard let s = SceneCatalog.scene(named: name) else {
            throw Invalid(
                description: "unknown scene '\(name)': choose one of \(SceneCatalog.names.joined(separator: ", "))")
        }
        return s
    }

    /// `text` as an integer ≥ `min`; `option` names the argument in the error.
    public static func integer(_ text: String, _ option: String, min: Int) throws -> Int {
        guard let v = Int(text), v >= min else {
            throw Invalid(description: "invalid \(option) '\(text)': expected an integer ≥ \(min)")
        }
        return v
    }

    /// `text` as a finite number > 0; `option` names the argument in the error.
    public static func positive(_ text: String, _ option: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v > 0 else {
            throw Invalid(description: "invalid \(option) '\(text)': expected a positive number")
        }
        return v
    }
}
