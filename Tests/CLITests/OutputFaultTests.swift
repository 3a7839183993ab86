import CadenceCore
import CadenceReport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Output files that fail mid-run (issue 10, item 4): the display keeps running, one stderr
/// line says which output stopped and why, the summary names it, the lines written stay, and
/// the exit status is 3. A closed stdout or stderr never kills the process.
@Suite(.serialized) struct OutputFaultTests {
    /// The one line `cadence` prints when an output stops.
    func stopLines(_ err: String) -> [Substring] { lines(err).filter { $0.contains("stopped after") } }

    func jsonSummary(_ out: String) throws -> RunSummary {
        try JSONDecoder().decode(RunSummary.self, from: Data(out.utf8))
    }

    /// A full device from the first byte (/dev/full: ENOSPC): the header fails, nothing else.
    @Test func logOnAFullDeviceStopsLoggingAndExitsThree() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--frames", "120", "--log", "/dev/full", "--summary", "s.json", "--json", "--quiet"], in: dir)
        #expect(r.status == 3, "\(r.err)")
        #expect(stopLines(r.err).count == 1 && lines(r.err).count == 1, "\(r.err)")
        #expect(r.err.contains("logging stopped after 0 frames") && r.err.contains("No space left on device"))
        let s = try jsonSummary(r.out)
        #expect(s.frames == 120 && s.presented == 120, "the display kept running")
        #expect(s.incompleteOutputs == ["log /dev/full: 0 frames, no end line (cannot write /dev/full: No space left on device)"])
        // The summary file says so too.
        let file = try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/s.json")))
        #expect(file == s)
    }

    /// A file-size limit reached mid-line (EFBIG, like a full disk after a partial write): the
    /// partial line is cut off, every complete line stays, the log reads without
    /// --allow-partial; the CSV, hitting the same limit later, stops on its own.
    /// Not under ThreadSanitizer: its runtime dies with SIGBUS at start-up (before `main`, even
    /// for `--help`) when RLIMIT_FSIZE is this small, so the limit cannot be tested there.
    @Test(.disabled(if: underThreadSanitizer, "TSan's runtime cannot start under a 20 KB RLIMIT_FSIZE"))
    func sizeLimitMidRunKeepsEveryCompleteLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let limit = 20_000
        let args = ["--fsize=\(limit)", cadenceBinary(), "run", "--backend", "fake", "--frames", "300", "--scene", "solid",
                    "--log", "run.jsonl", "--csv", "run.csv", "--quiet"]
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let outText = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 3, "\(errText)")
        let stops = stopLines(errText)
        #expect(stops.count == 2 && lines(errText).count == 2, "\(errText)")
        #expect(stops.allSatisfy { $0.contains("File too large") })
        #expect(outText.contains("frames            300  presented 300"))
        #expect(lines(outText).filter { $0.hasPrefix("INCOMPLETE") }.count == 2, "\(outText)")

        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/run.jsonl"))
        #expect(data.count < limit && data.last == 0x0A, "the partial line was cut off (\(data.count) bytes)")
        let log = try RunLog.parse(data, name: "run.jsonl")
        #expect(log.end == nil && log.header != nil)
        #expect(log.records.map(\.frame) == Array(0..<log.records.count))
        #expect(errText.contains("logging stopped after \(log.records.count) frames"))
        let csv = try Data(contentsOf: URL(fileURLWithPath: dir + "/run.csv"))
        #expect(csv.count < limit && csv.last == 0x0A)
        let rows = String(decoding: csv, as: UTF8.self).split(separator: "\n").count - 1
        #expect(errText.contains("the csv stopped after \(rows) frames"))
        // report reads it like a killed run's log.
        let rep = try cadence(["report", "run.jsonl", "--output", "run.svg"], in: dir)
        #expect(rep.status == 0, "\(rep.err)")
        #expect(rep.out.contains("\(log.records.count) frames") && rep.out.contains("no end line"))
    }

    /// The log removed mid-run: logging stops at once (the data would vanish), the run goes on.
    @Test func logRemovedMidRunStopsLoggingAndTheRunGoesOn() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "2",
                                    "--log", "run.jsonl", "--json", "--quiet"], in: dir)
        try waitForLines(dir + "/run.jsonl", 10)
        unlink(dir + "/run.jsonl")
        let r = p.finish(timeout: 30)
        #expect(r.status == 3, "\(r.err)")
        #expect(stopLines(r.err).count == 1 && r.err.contains("run.jsonl was removed"), "\(r.err)")
        let s = try jsonSummary(r.out)
        #expect(s.endReason == "completed" && s.presented > 100, "the display kept running: \(s.presented)")
        #expect(s.incompleteOutputs?.count == 1 && s.incompleteOutputs?[0].hasPrefix("log run.jsonl: ") == true)
        #expect(!FileManager.default.fileExists(atPath: dir + "/run.jsonl"), "nothing recreated it")
    }

    /// Made read-only mid-run: permissions are checked when a file is opened, so the open
    /// descriptor keeps writing and the log is complete (exit 0). (The failing cases are the
    /// ones above: ENOSPC, EFBIG, removal; EIO and EROFS take the same path.)
    @Test func logMadeReadOnlyMidRunStaysComplete() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "1.5",
                                    "--log", "run.jsonl", "--quiet"], in: dir)
        try waitForLines(dir + "/run.jsonl", 10)
        chmod(dir + "/run.jsonl", 0o444)
        let r = p.finish(timeout: 30)
        #expect(r.status == 0, "\(r.err)")
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.end?.summary.frames == log.records.count && log.records.count > 60)
    }

    /// stdout and stderr are pipes nobody reads (`cadence run --json | head -c1`, the reader
    /// gone): no signal death, no trap; the log is complete; exit 3 says stdout is incomplete.
    @Test func closedStdoutAndStderrNeverKillTheRun() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [["--json"], ["--fake-clock", "wall", "--duration", "1.2"], ["--backend-that-does-not-exist"]] {
            let pipe = Pipe()
            pipe.fileHandleForReading.closeFile()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: cadenceBinary())
            var args = ["run", "--backend", "fake", "--scene", "solid", "--log", "run.jsonl"]
            if !extra.contains("--duration") { args += ["--frames", "200"] }
            p.arguments = args + extra
            p.currentDirectoryURL = URL(fileURLWithPath: dir)
            p.standardOutput = pipe.fileHandleForWriting
            p.standardError = pipe.fileHandleForWriting
            p.standardInput = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationReason == .exit, "\(extra): killed by signal \(p.terminationStatus)")
            if extra[0].hasPrefix("--backend-") {
                #expect(p.terminationStatus == 2, "bad input still exits 2")
                continue
            }
            #expect(p.terminationStatus == 3, "\(extra)")
            let log = try RunLog.read(path: dir + "/run.jsonl")
            #expect(log.end != nil && log.records.count == log.end?.summary.frames)
        }
    }

    /// validate: a failed criterion (1) wins over an incomplete output (3); a pass with an
    /// incomplete output is 3.
    @Test func validateExitStatusWithAnIncompleteLog() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pass = try cadence(["validate", "--backend", "fake", "--frames", "120", "--log", "/dev/full", "--max-dropped", "0", "--quiet"], in: dir)
        #expect(pass.status == 3, "\(pass.err)")
        #expect(pass.out.contains("validate: PASS"))
        let fail = try cadence(["validate", "--backend", "fake", "--frames", "120", "--inject-late", "10:1", "--log", "/dev/full",
                                "--max-dropped", "0", "--quiet"], in: dir)
        #expect(fail.status == 1, "\(fail.err)")
        #expect(lines(fail.err).count == 2, "one line for the log, one for the criterion: \(fail.err)")
    }

    /// Bad numbers that trapped or spun before (found fuzzing the option parsers): one line, exit 2.
    @Test func absurdOptionValuesAreOneLineExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for bad in [["--inject-late", "1:9223372036854775807"], ["--inject-late", "1:100000000000"], ["--min-duration", "1e300"],
                    ["--min-duration", "1e12"], ["--content-rate", "1e-300"]] {
            let r = try cadence(["run", "--backend", "fake", "--frames", "5", "--quiet"] + bad, in: dir)
            let errLines = lines(r.err).count
            #expect(r.status == 2, "\(bad)")
            #expect(errLines == 1, "\(bad)")
        }
        #expect(files(in: dir).isEmpty)
    }
}
