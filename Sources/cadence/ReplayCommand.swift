import ArgumentParser
import CadenceReport
import CadenceSession

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
        if json { print(try result.json()) } else { print(result.text, terminator: "") }
        if !result.isEqual { throw ExitCode(1) }
    }
}
