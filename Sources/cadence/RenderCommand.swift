import ArgumentParser
import CadenceSession

/// Bad input for the raster commands: one line on stderr, exit status 2.
enum RasterCLI {
    static func fail(_ message: String) -> ExitCode {
        StandardStreams.errorLine("cadence: \(message)")
        return ExitCode(2)
    }

    /// Runs `body`, turning any error into ``fail(_:)`` with its line.
    static func checked<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw fail("\(error)") }
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
        let still = try RasterCLI.checked {
            let scene = try SceneStill.scene(named: self.scene)
            let frame = try SceneStill.integer(self.frame, "--frame", min: 0)
            let (w, h) = try SceneStill.size(size)
            let hz = try SceneStill.positive(refresh, "--refresh")
            return SceneStill(scene: scene, frame: frame, width: w, height: h, refreshHz: hz, hud: hud)
        }
        print(try RasterCLI.checked { try still.write(to: output ?? still.defaultPath) })
    }
}
