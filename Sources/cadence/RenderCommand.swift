import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence render`.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "render", abstract: "Render one frame of a scene to a PNG file.")
    func run() throws { throw ValidationError("cadence render is not built yet") }
}
