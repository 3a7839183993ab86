import ArgumentParser
import CadenceCore
import CadenceReport
import Foundation
import Raster

/// `cadence report LOG.jsonl --output FILE.(png|svg|html)`: a picture of a recorded run.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Draw a run log as a picture: interval timeline, drops by cause, histogram (PNG, SVG or HTML).",
        usage: """
            cadence report <log> [--output <output>] [--size <size>] [--csv <csv>]
                   [--allow-partial] [--client <client>]
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

            Exit status:
              0  written
              2  usage or input error (no such file, not a run log, a cut-off line
                 without --allow-partial, an unwritable output)

            Examples:
              cadence run --duration 10 --inject-late 100:1,250:3 --log run.jsonl
              cadence report run.jsonl --output run.png
              cadence report run.jsonl --output run.svg --size 1600x900
              cadence report run.jsonl --output run.html --csv run.csv
            """)

    @Argument(help: "A run log written by `cadence run --log` (or an observe log, `cadence observe --log`).")
    var log: String
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
        if let k = kind, !["png", "svg", "html", "htm"].contains(k) {
            throw CLIFailure("--output '\(output!)' must end in .png, .svg or .html")
        }
        let parts = size.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (480...8192).contains(w), (320...8192).contains(h) else {
            throw CLIFailure("--size '\(size)' must be WxH with 480 ≤ W ≤ 8192 and 320 ≤ H ≤ 8192")
        }
        let runLog = try readLog()
        let chart = ReportChart(log: runLog, width: w, height: h)
        // Render everything first, then write: a failure leaves no partial output.
        var outputs: [(String, [UInt8])] = []
        if let path = output, let k = kind {
            switch k {
            case "png": outputs.append((path, PNGReport.encode(chart)))
            case "svg": outputs.append((path, Array(SVGReport.svg(chart).utf8)))
            default: outputs.append((path, Array(HTMLReport.html(chart, log: runLog, source: log).utf8)))
            }
        }
        if let c = csv { outputs.append((c, Array(CSVExport.csv(runLog.records).utf8))) }
        for (path, bytes) in outputs {
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw CLIFailure("cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
        let s = chart.summary
        for (path, bytes) in outputs {
            print("wrote \(path) (\(bytes.count) bytes)")
        }
        print("\(runLog.records.count) frames, \(s.droppedRefreshes) dropped refreshes in \(s.dropEvents) events, \(chart.drops.count) frames marked\(runLog.segmentDescription.map { " (\($0))" } ?? (runLog.end == nil ? " (log has no end line: the run did not finish)" : ""))")
    }

    /// The run log, or for an observe log the chosen client's flips as a run log (printing
    /// one line per client and which one is drawn).
    private func readLog() throws -> RunLog {
        guard let data = FileManager.default.contents(atPath: log), ObservedLog.isObserveLog(data) else {
            if client != nil { throw CLIFailure("--client is for observe logs; \(log) is a run log") }
            return try RunLog.read(path: log, allowPartialLastLine: allowPartial)
        }
        let observed = try ObservedLog.parse(data, name: log, allowPartialLastLine: allowPartial)
        guard let chosen = observed.mostFlips(command: client) else {
            throw CLIFailure("\(log): no client named '\(client ?? "")' (clients: \(Set(observed.clients.map(\.client)).sorted().joined(separator: ", ")))")
        }
        for c in observed.clients {
            let s = LogAnalysis.summary(of: c.log)
            print("client \(c.client) (pid \(c.pid), crtc \(c.crtc)): \(s.presented) flips, \(s.droppedRefreshes) dropped refreshes in \(s.dropEvents) events")
        }
        let why = client != nil ? "named by --client" : observed.clients.count > 1 ? "the most flips of \(observed.clients.count) clients" : "the only client"
        print("drawing client \(chosen.client) (pid \(chosen.pid), crtc \(chosen.crtc)): \(why)")
        return chosen.log
    }
}
