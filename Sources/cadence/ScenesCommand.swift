import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence scenes`.
struct ScenesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scenes", abstract: "List the test scenes.")
    func run() throws { throw ValidationError("cadence scenes is not built yet") }
}
