import CadenceCore
import CadenceReport
import Foundation

/// A temporary directory removed by the caller.
func temporaryDirectory() -> String {
    let p = NSTemporaryDirectory() + "cadence-report-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
    return p
}

/// Runs the pacing core on a fake display (virtual time), logging every frame with
/// ``RunLogWriter`` exactly as `cadence run --log` does; returns the log path and the summary.
func recordRun(_ config: RunConfiguration, fake: FakeDisplayConfiguration = .init(), in dir: String, name: String = "run.jsonl") throws -> (path: String, summary: RunSummary) {
    let path = dir + "/" + name
    let writer = try RunLogWriter(path: path)
    let display = FakeDisplay(fake)
    let run = try PacingRun(backend: display, configuration: config)
    try writer.begin(RunLogHeader(backend: display, configuration: config))
    run.onFrame = { try? writer.write(FrameRecord($0)) }
    run.onRateSwitch = { try? writer.write($0) }
    run.onSessionChange = { try? writer.write($0) }
    let summary = try run.run()
    try writer.end(summary)
    return (path, summary)
}

func config(frames: Int = 600, latency: Int = 1, injectLate: [Int: Int] = [:]) -> RunConfiguration {
    var c = RunConfiguration()
    c.frames = frames
    c.latency = latency
    c.injectLate = injectLate
    return c
}
