import CadenceCore
import CadenceReport
import Foundation

/// Replaying a recorded run (`cadence replay`): `Replay.run` on the log, and, when asked, the
/// replayed run written as a run log of its own (backend "replay") that `report` and `replay`
/// read like any other.
public enum LogReplay {
    /// Replays the run log at `path` (`allowPartialLastLine`: a log whose last line was cut
    /// short by a killed run). With `logOut`, the replayed frames wait in `LOGOUT.frames.tmp`
    /// (removed at the end) until the run's rate switches are known, then the log is written:
    /// the recorded header, the rate switches, the frames, the end line.
    public static func run(path: String, allowPartialLastLine: Bool, logOut: String?) throws -> ReplayResult {
        let framesPath = logOut.map { $0 + ".frames.tmp" }
        var frames: LineFile? = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let out = framesPath.map { path in
            Replay.ReplayedFrames(
                restart: { frames = try LineFile(path: path) },
                frame: { try frames!.write(line: [UInt8](try encoder.encode($0))) })
        }
        defer { if let p = framesPath { unlink(p) } }
        let result = try Replay.run(path: path, allowPartialLastLine: allowPartialLastLine, replayedFrames: out)
        if let p = logOut, let framesPath {
            frames?.close()
            let w = try RunLogWriter(path: p)
            var header = result.log!.header!
            header.backend = "replay"
            try w.begin(header)
            for s in result.rateSwitches { try w.write(s) }
            try eachLine(of: framesPath) { try w.file.write(line: $0) }
            try w.end(result.replayed)
        }
        return result
    }

    /// Each line of the file at `path` (without its newline).
    static func eachLine(of path: String, _ body: ([UInt8]) throws -> Void) throws {
        guard let f = fopen(path, "r") else { throw LineFile.Failure("cannot read \(path)") }
        defer { fclose(f) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(line) }
        while true {
            let n = getline(&line, &capacity, f)
            if n <= 0 { break }
            let count = line![n - 1] == 0x0A ? n - 1 : n
            try body([UInt8](UnsafeRawBufferPointer(start: line, count: count)))
        }
    }
}

extension ReplayResult {
    /// What a replay reports as JSON: the replayed and recorded summaries, whether they are
    /// equal, the differences, the divergences and the note.
    public struct Report: Encodable {
        /// The summary the pacer computed on the replayed timestamps.
        public var replayed: RunSummary
        /// The recorded summary.
        public var recorded: RunSummary
        /// True when the replay reproduces the recording (no differences).
        public var equal: Bool
        /// The summary fields that differ.
        public var differences: [String]
        /// Frames whose replay could not follow the recording.
        public var divergences: Int
        /// What was replayed when not a whole run (a file of a rotated log).
        public var note: String?
    }

    /// True when the replay reproduces the recording (no differences).
    public var isEqual: Bool { differences.isEmpty }

    /// The report of this replay.
    public var report: Report {
        Report(
            replayed: replayed, recorded: recorded, equal: isEqual, differences: differences, divergences: divergences,
            note: note)
    }
}
