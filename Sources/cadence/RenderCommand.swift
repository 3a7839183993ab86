import ArgumentParser
import Raster
import Scenes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bad input for the raster commands: one line on stderr, exit status 2.
enum RasterCLI {
    static func fail(_ message: String) -> ExitCode {
        StandardStreams.errorLine("cadence: \(message)")
        return ExitCode(2)
    }

    /// Parses "WIDTHxHEIGHT" (each 1...16384).
    static func size(_ text: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...16384).contains(w), (1...16384).contains(h) else {
            throw fail("invalid size '\(text)': expected WIDTHxHEIGHT such as 1920x1080 (1 to 16384 each)")
        }
        return (w, h)
    }

    static func scene(_ name: String) throws -> any Scene {
        guard let s = SceneCatalog.scene(named: name) else {
            throw fail("unknown scene '\(name)': choose one of \(SceneCatalog.names.joined(separator: ", "))")
        }
        return s
    }

    static func int(_ text: String, _ option: String, min: Int) throws -> Int {
        guard let v = Int(text), v >= min else { throw fail("invalid \(option) '\(text)': expected an integer ≥ \(min)") }
        return v
    }

    static func positive(_ text: String, _ option: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v > 0 else { throw fail("invalid \(option) '\(text)': expected a positive number") }
        return v
    }
}

/// `cadence render`: one frame of a scene to a PNG file.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render", abstract: "Render one frame of a scene to a PNG file.",
        usage: """
            cadence render [--scene <scene>] [--frame <frame>] [--size <size>]
                   [--output <output>] [--refresh <refresh>] [--hud]
            """,
        discussion: """
            Draws frame N of a scene with Cadence's CPU rasterizer into a PNG file,
            exactly as `cadence run` would draw it on the display.

            Exit status:
              0  written
              2  usage or input error (unknown scene, bad size), or the file cannot be
                 written

            Examples:
              cadence render --scene counter --frame 1234 --size 1920x1080 \\
                  --output counter.png
              cadence render --scene bar --frame 10 --hud --output bar-hud.png
            """)

    @Option(help: "Scene name (see `cadence scenes`).")
    var scene = "bar"
    @Option(parsing: .unconditional, help: "Frame index to draw.")
    var frame = "0"
    @Option(parsing: .unconditional, help: "Frame size, WIDTHxHEIGHT.")
    var size = "1920x1080"
    @Option(help: "Output PNG file (default: SCENE-FRAME.png).")
    var output: String?
    @Option(parsing: .unconditional, help: "Refresh rate the frame context reports, in Hz.")
    var refresh = "60"
    @Flag(help: "Draw the HUD overlay (with steady intervals at the refresh rate).")
    var hud = false

    func run() throws {
        let scene = try RasterCLI.scene(self.scene)
        let frame = try RasterCLI.int(self.frame, "--frame", min: 0)
        let (w, h) = try RasterCLI.size(size)
        let hz = try RasterCLI.positive(refresh, "--refresh")
        let path = output ?? "\(scene.name)-\(frame).png"
        guard path.lowercased().hasSuffix(".png") else { throw RasterCLI.fail("output '\(path)' must end in .png") }
        let bmp = Bitmap(width: w, height: h)
        var stats: HUDStats?
        if hud {
            var s = HUDStats(refreshHz: hz)
            for _ in 0..<min(frame, IntervalRing.capacity) { s.recordFrame(intervalMs: 1000 / hz) }
            s.presentedFrames = frame
            stats = s
        }
        SceneRenderer(scene: scene, threads: nil).render(into: bmp.canvas, context: SceneContext(frameIndex: frame, refreshHz: hz), hud: stats)
        do {
            try PNGWriter.write(bmp.canvas, to: path)
        } catch {
            throw RasterCLI.fail("\(error)")
        }
        print("wrote \(path) (\(w)x\(h), \(scene.name) frame \(frame))")
    }
}
