import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// A rotated run log's continuation line carries the pacer's prediction state (issue 21): the
/// state the pacer had when the callback of the lowest carried frame began, exactly (the fit's
/// sums are doubles: JSON must give back the same bits), so that a replay of the file starts
/// from the run's vblank grid and ε, not from a fresh fit.
@Suite struct PacerStateLogTests {
    /// 24 fps content on a drifting, jittery 60 Hz display, rotated every 8 KiB: every later
    /// file's continuation line holds the states of its lowest carried frame's callback and
    /// completion, equal to the ones the run reported for that frame, and the states change
    /// along the run (the fit and ε learn from every vblank).
    @Test func eachContinuationCarriesTheStateOfItsLowestCarriedFrame() throws {
        let dir = NSTemporaryDirectory() + "pacer-state-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/run.jsonl"
        let writer = try RunLogWriter(path: path, rotation: LogRotation(maxBytes: 8 << 10, keep: 1_000))
        var f = FakeDisplayConfiguration(refreshHz: 60)
        f.driftPPM = -130
        f.jitter = 29_000
        f.seed = 979_938
        let display = FakeDisplay(f)
        let config = RunConfiguration(contentRate: 24, latency: 2, frames: 120)
        let run = try PacingRun(backend: display, configuration: config)
        run.pacer.recordsPacerState = true
        try writer.begin(RunLogHeader(backend: display, configuration: config))
        var reported: [Int: (PacerState, PacerState?)] = [:]
        run.onFrame = { r in
            if let s = r.pacerState { reported[r.frameIndex] = (s, r.pacerStateAtCompletion) }
            try? writer.write(FrameRecord(r), pacerState: r.pacerState, completedPacerState: r.pacerStateAtCompletion)
        }
        try writer.end(try run.run())

        let files =
            (1...1_000).reversed().map { LogRotation.path(path, age: $0) }
            .filter { FileManager.default.fileExists(atPath: $0) } + [path]
        #expect(files.count >= 4, "\(files.count) files")
        var states: [PacerState] = []
        for file in files.dropFirst() {
            let c = try #require(try RunLog.read(path: file).continuation)
            let lowest = try #require(c.carried.min(by: { $0.frame < $1.frame }))
            let p = try #require(c.pacer, "\(file): no pacer state")
            #expect(p.callbackTime == lowest.callbackNs)
            let run = try #require(reported[lowest.frame])
            #expect(p.state == run.0, "\(file): frame \(lowest.frame)")
            #expect(p.completed != nil && p.completed == run.1, "\(file): frame \(lowest.frame) completed")
            states.append(p.state)
        }
        #expect(Set(states.map { "\($0)" }).count == states.count, "every file starts from another state")
    }

    /// A continuation line's `vblanks` (where frames before the carried ones were shown after
    /// the lowest carried frame's callback) read back; pairs no run writes are refused.
    @Test func aContinuationsVBlanksReadAndAreChecked() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: try recordRun(config(frames: 3), in: dir).path, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let file = { (v: String) in
            let c =
                #"{"carried":[],"framesBefore":12,"record":"continuation","segment":2,"version":3,"vblanks":"# + v + "}"
            return Data(([lines[0], c] + lines.dropFirst()).joined(separator: "\n").utf8 + [0x0A])
        }
        let log = try RunLog.parse(file("[[1013,1433243909]]"), name: "x.jsonl")
        #expect(log.continuation?.vblanks == [[1013, 1_433_243_909]])
        for bad in ["[[1013,-1]]", "[[-1,1433243909]]", "[[1013]]"] {
            #expect(throws: RunLog.Invalid.self, "\(bad)") { try RunLog.parse(file(bad), name: "x.jsonl") }
        }
    }

    /// A continuation line written before the state existed reads as before: no state.
    @Test func aContinuationWithoutAStateReadsAsNone() throws {
        let line = #"{"carried":[],"framesBefore":12,"record":"continuation","segment":2,"version":3}"#
        let c = try JSONDecoder().decode(LogContinuation.self, from: Data(line.utf8))
        #expect(c.pacer == nil)
        #expect(c.segment == 2 && c.framesBefore == 12)
    }
}
