import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence list`.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List DRM devices, connectors, modes, CRTCs and planes.")
    func run() throws { throw ValidationError("cadence list is not built yet") }
}
