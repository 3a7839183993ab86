import ArgumentParser

// Placeholder until its issue lands: owned by the helper building `cadence bench`.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Benchmark the rasterizer workloads.")
    func run() throws { throw ValidationError("cadence bench is not built yet") }
}
