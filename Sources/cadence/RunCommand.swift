import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence run`.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Pace frames on a KMS or fake display and account for every drop.")
    func run() throws { throw ValidationError("cadence run is not built yet") }
}
