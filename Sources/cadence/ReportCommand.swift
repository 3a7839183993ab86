import ArgumentParser
import CadenceReport
import CadenceSession
import Foundation

/// `cadence report LOG.jsonl --output FILE.(png|svg|html)`: a picture of a recorded run.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Draw a run log as a picture: interval timeline, drops by cause, histogram (PNG, SVG or HTML).",
        usage: """
            cadence report <log> ... [--all] [--output <output>] [--size <size>]
                   [--csv <csv>] [--allow-partial] [--client <client>]
            """,
        discussion: """
            The timeline plots the interval between shown frames against the frame
            number, with a gridline at every whole number of refreshes; every frame with
            a drop cause gets a marker and a stripe in the cause's colour (render-late
            red, scheduler-late orange, flip-late purple, busy blue, device-lost black).
            When the log has context records, the CPU temperature is drawn under the
            timeline on the same frame axis. Below, the histogram of intervals in refresh
            units. PNG is drawn with Cadence's own rasterizer; HTML embeds the SVG with
            the summary and the list of drops. --csv converts the log to PresentMon-style
            CSV.

            An observe log (`cadence observe --log`) is drawn the same way for one client:
            --client COMM, or the one with the most flips; one line per client gives its
            flips and drops, and one says which client was drawn.

            The files of a rotated log (--log-max-size) are one run: give them all
            (run.jsonl*, in any order) or --all with the newest (run.jsonl), and they
            are read in segment order as the run unrotated. A segment missing between
            two given is named in one line and nothing is drawn. The log is read in one
            pass without keeping its frames (--csv reads it a second time).

            Exit status:
              0  written
              2  usage or input error (no such file, not a run log, a cut-off line
                 without --allow-partial, an unwritable output)

            Examples:
              cadence run --duration 10 --inject-late 100:1,250:3 --log run.jsonl
              cadence report run.jsonl --output run.png
              cadence report run.jsonl --output run.svg --size 1600x900
              cadence report run.jsonl --output run.html --csv run.csv
              cadence report run.jsonl* --output run.png    a rotated log, as one run
              cadence report --all run.jsonl --output run.png
            """)

    @Argument(help: "A run log written by `cadence run --log` (or an observe log, `cadence observe --log`); several: the files of one rotated log.")
    var logs: [String]
    @Flag(help: "Read every file of the rotated log beside <log> (<log>.1, <log>.2, …) as one run.")
    var all = false
    @Option(help: "Output picture: FILE.png, FILE.svg or FILE.html.")
    var output: String?
    @Option(help: "Picture size WxH (default 1200x720).")
    var size: String = "1200x720"
    @Option(help: "Also write the frames as PresentMon-style CSV to FILE.")
    var csv: String?
    @Flag(name: .customLong("allow-partial"), help: "Analyse a log whose last line was cut off (a killed run), dropping that line.")
    var allowPartial = false
    @Option(help: "For an observe log: the client (process name) to draw; default: the one with the most flips.")
    var client: String?

    func run() throws {
        try exitTwoOnError("report") { try execute() }
    }

    private func execute() throws {
        guard output != nil || csv != nil else { throw CLIFailure("give --output FILE.(png|svg|html) and/or --csv FILE.csv") }
        let kind = output.map { ($0 as NSString).pathExtension.lowercased() }
        if let k = kind, !LogReport.pictureExtensions.contains(k) {
            throw CLIFailure("--output '\(output!)' must end in .png, .svg or .html")
        }
        let parts = size.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (480...8192).contains(w), (320...8192).contains(h) else {
            throw CLIFailure("--size '\(size)' must be WxH with 480 ≤ W ≤ 8192 and 320 ≤ H ≤ 8192")
        }
        guard let log = logs.first else { throw CLIFailure("give the run log to draw") }
        if all && logs.count > 1 { throw CLIFailure("--all takes one log (the newest file of the rotation); give either --all or the files") }
        let files = all ? RunLog.rotationFiles(of: log) : logs
        let report: LogReport
        do {
            report = try LogReport.read(files, client: client, allowPartialLastLine: allowPartial, width: w, height: h)
        } catch let r as LogReport.Refusal {
            switch r {
            case .noLog: throw CLIFailure("give the run log to draw")
            case .severalObserveLogs:
                throw CLIFailure("several files are the files of one rotated run log; observe logs are read one at a time")
            case .clientOfRunLog(let path): throw CLIFailure("--client is for observe logs; \(path) is a run log")
            case .noSuchClient(let path, let client, let clients):
                throw CLIFailure("\(path): no client named '\(client ?? "")' (clients: \(clients.joined(separator: ", ")))")
            }
        }
        for line in report.clientLines(named: client != nil) { print(line) }
        for (path, count) in try report.write(output: output, csv: csv, allowPartialLastLine: allowPartial) {
            print("wrote \(path) (\(count) bytes)")
        }
        print(report.framesLine)
        // Judged again from the log's CRC lines (a run with --verify crc).
        if let v = report.chart.summary.scanout { print("scanout: " + RunReport.scanoutLine(v)) }
    }
}
