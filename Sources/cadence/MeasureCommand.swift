import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence measure`.
struct MeasureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "measure", abstract: "Measure a panel's real refresh from kernel flip timestamps.")
    func run() throws { throw ValidationError("cadence measure is not built yet") }
}
