import ArgumentParser
import Scenes

/// `cadence scenes`: the test scenes, one line each.
struct ScenesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenes", abstract: "List the test scenes.",
        discussion: """
            One line per scene: its name and what it draws. `cadence run --scene NAME`
            paces it on a display; `cadence render` draws one frame to a PNG.

            Exit status:
              0  listed

            Examples:
              cadence scenes
              cadence render --scene ufo --frame 30 --output ufo.png
              cadence run --scene ufo --hud --duration 10
            """)

    func run() throws {
        let width = SceneCatalog.names.map(\.count).max() ?? 0
        for scene in SceneCatalog.all {
            print(scene.name + String(repeating: " ", count: width - scene.name.count + 2) + scene.summary)
        }
    }
}
