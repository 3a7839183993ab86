import ArgumentParser
import CadenceCore
import CadenceReport
import CadenceSession
import Foundation

/// `cadence replay LOG.jsonl`: re-run the pacing core headlessly on a recorded run's kernel timestamps.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-analyse a recorded run: feed its kernel timestamps to the pacing core on a replay display.",
        discussion: """
            The run's configuration comes from the log's header; a replay display
            produces the recorded vblanks (kernel timestamps and sequences) and completes
            each frame as the kernel did; every frame's rendering takes as long as it
            did. The pacing core then accounts for every frame again. Prints the replayed
            summary and whether it equals the recorded one (the log's end line; for a
            killed run, the accounting of its frames). Context records (temperature,
            frequency) are read and ignored.

            Exit status:
              0  the replay equals the recorded summary
              1  the replay differs
              2  usage or input error (no such file, not a run log, a cut-off line)

            Examples:
              cadence run --backend fake --frames 600 --inject-late 100:1,250:3 \\
                  --log run.jsonl
              cadence replay run.jsonl
              cadence replay run.jsonl --json --log-out replayed.jsonl
            """)

    @Argument(help: "A run log written by `cadence run --log`.")
    var log: String
    @Flag(
        help:
            "Print the replayed and recorded summaries, whether they are equal, the differences and divergences as one JSON object."
    )
    var json = false
    @Option(
        name: .customLong("log-out"),
        help: "Write the replayed frames as a run log to FILE (FILE.zst: zstd-compressed).")
    var logOut: String?
    @Flag(
        name: .customLong("allow-partial"),
        help: "Replay a log whose last line was cut off (a killed run), dropping that line.")
    var allowPartial = false

    func run() throws {
        let result: ReplayResult
        do {
            result = try LogReplay.run(path: log, allowPartialLastLine: allowPartial, logOut: logOut)
        } catch {
            StandardStreams.errorLine("cadence replay: \(String(describing: error))")
            throw ExitCode(2)
        }
        let runLog = result.log!
        let equal = result.isEqual
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            print(String(decoding: try enc.encode(result.report), as: UTF8.self))
        } else {
            let s = result.replayed
            let f = { (v: Double) in String(format: "%.3f", v) }
            print(
                "replayed          \(runLog.frameCount) logged frames of a \(runLog.header?.backend ?? "?") run at \(f(s.refreshHz)) Hz"
            )
            if let n = result.note { print("file              \(n)") }
            print(
                "frames            \(s.frames)  presented \(s.presented) (on time \(s.onTime), late \(s.late))  discarded \(s.discarded)"
            )
            print(
                "dropped           \(s.droppedRefreshes) refreshes in \(s.dropEvents) events  hitch \(f(s.hitchTimeRatio)) ms/s"
            )
            print(
                "interval ms       mean \(f(s.intervalMs.mean))  p50 \(f(s.intervalMs.p50))  p99 \(f(s.intervalMs.p99))  max \(f(s.intervalMs.max))"
            )
            if !s.causesByName.isEmpty {
                print(
                    "causes            "
                        + s.causesByName.map { "\($0.cause.rawValue) \($0.frames)" }.joined(separator: "  "))
            }
            print(
                equal
                    ? "summary           equals the recorded one"
                    : "summary           DIFFERS from the recorded one: " + result.differences.joined(separator: "; "))
            if result.divergences > 0 {
                print("divergences       \(result.divergences) frames could not follow the recording")
            }
        }
        if !equal { throw ExitCode(1) }
    }
}
