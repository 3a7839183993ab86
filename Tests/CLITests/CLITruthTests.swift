import CadenceCore
import CadenceReport
import Foundation
import Testing

/// `cadence run` as the issue tried it: minimum durations at 60 and 144 Hz, `--adapt` with a
/// scripted render cost through log, replay and report, and the summary's new lines.
@Suite(.serialized) struct CLITruthTests {
    func summary(_ args: [String], in dir: String) throws -> RunSummary {
        let r = try cadence(["run", "--backend", "fake", "--scene", "solid", "--quiet", "--json"] + args, in: dir)
        #expect(r.status == 0, "\(args): \(r.err)")
        return try JSONDecoder().decode(RunSummary.self, from: Data(r.out.utf8))
    }

    @Test func minimumDurationIsNeverEarly() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The hand-computed table (see PresentationContractTests).
        for (ms, at60, at144) in [("16", 1, 3), ("16.7", 2, 3), ("17", 2, 3), ("18", 2, 3), ("33.4", 3, 5), ("34", 3, 5)] {
            let a = try summary(["--min-duration", ms, "--frames", "30"], in: dir)
            #expect(a.intervalRefreshes == ["\(at60)": 29], "\(ms) ms at 60 Hz")
            let b = try summary(["--min-duration", ms, "--frames", "30", "--fake-refresh", "144"], in: dir)
            #expect(b.intervalRefreshes == ["\(at144)": 29], "\(ms) ms at 144 Hz")
        }
    }

    @Test func adaptIsLoggedReplayedAndReported() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--scene", "solid", "--quiet", "--adapt", "--render-cost", "100-199:20",
                             "--frames", "400", "--log", "adapt.jsonl"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("\nrate switches     2\n"))
        #expect(r.out.contains("\non-time error µs  p50 0.000  p99 0.001  max 0.001\n"))
        #expect(r.out.contains("\ndropped           3 refreshes in 3 events"))
        let log = try RunLog.read(path: dir + "/adapt.jsonl")
        #expect(log.rateSwitches.map(\.frame) == [103, 260])
        let replay = try cadence(["replay", "adapt.jsonl", "--log-out", "replayed.jsonl"], in: dir)
        #expect(replay.status == 0, "\(replay.out)")
        #expect(try RunLog.read(path: dir + "/replayed.jsonl").rateSwitches.map(\.frame) == [103, 260])
        let report = try cadence(["report", "adapt.jsonl", "--output", "adapt.svg"], in: dir)
        #expect(report.status == 0)
        let svg = try String(contentsOfFile: dir + "/adapt.svg", encoding: .utf8)
        #expect(svg.components(separatedBy: "class=\"rate-switch ").count == 3)
    }

    @Test func badRenderCostIsOneLineExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for bad in ["5-3:1", "abc", "1:-2"] {
            let r = try cadence(["run", "--backend", "fake", "--render-cost", bad, "--log", "x.jsonl"], in: dir)
            #expect(r.status == 2, "\(bad)")
            #expect(lines(r.err).count == 1 && r.err.contains("--render-cost"), "\(bad): \(r.err)")
            #expect(files(in: dir).isEmpty)
        }
    }
}
