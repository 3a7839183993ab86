import ArgumentParser
import CadenceCore
import CadenceMetrics
import CadenceSession
import DRM
import DRMTrace
import Foundation
import KMSDisplay

/// `cadence observe`: another program's page flips, from the kernel's DRM trace events, with
/// the same accounting as `run` (see ``ObservedCadence``).
struct ObserveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "observe",
        abstract: "Measure the cadence of whatever program drives the display, without taking it over.",
        discussion: """
            Reads the kernel's DRM trace events (drm_vblank_event, drm_vblank_event_queued,
            drm_vblank_event_delivered, and kprobes on the DRM commit and CRTC-sequence
            ioctls) in a trace instance of its own under tracefs, removed on exit, SIGINT and
            SIGTERM (one left by a killed run is removed by the next). Per CRTC and client it
            reports flips, the measured refresh (least squares over the vblank timestamps),
            intervals in refreshes and ms, dropped refreshes and drop events judged against
            --expect-rate or the client's dominant interval, and the hitch time ratio. Needs
            root (tracefs). Nothing flipping during the window: "no flips observed", exit 0.
            Each client's process name and pid come from the DRM debugfs `clients` file
            (matched by pid) when debugfs is mounted, else from the trace ("nameSource").
            Once a second a status line (`run`'s format) for the client with the most flips
            goes to stderr (--quiet: none). `cadence validate --observe` judges a client
            against validate's thresholds; `cadence report` draws an observe log.

            Exit status: 0 observed (or nothing flipped), 2 usage, tracefs or permission
            error, 3 an output file is incomplete.

            Examples:
              cadence observe --duration 60                       every client, 60 s
              cadence observe --connector HDMI-A-1 --expect-rate 60 --json
              cadence observe --duration 0 --metrics-port 9464    until stopped, /metrics
              cadence observe --duration 0 --metrics-textfile /var/lib/node_exporter/cadence.prom
            """
    )

    @Option(help: "DRM device, for connector names and mode refresh (optional).") var device = "/dev/dri/card0"
    @Option(help: "Only this CRTC index (the kernel's pipe).") var crtc: Int?
    @Option(help: "Only the CRTC driving this connector (needs --device).") var connector: String?
    @Option(help: "Seconds to observe; 0 = until SIGINT/SIGTERM.") var duration: Double = 10
    @Option(help: "The rate the clients are meant to flip at (Hz); default: each client's dominant interval.")
    var expectRate: Double?
    @Option(help: "Write one JSON line per observed flip (kind \"observed\"); FILE.zst: zstd, as a run log.")
    var log: String?
    @Option(help: "Write one CSV row per observed flip.") var csv: String?
    @Option(
        name: .customLong("log-max-size"),
        help: "Rotate the --log file before it grows past SIZE (10M, 512K, 1G or bytes; at least 64K): FILE, FILE.1, …")
    var logMaxSize: String?
    @Option(
        name: .customLong("log-keep"), parsing: .unconditional,
        help: "With --log-max-size: keep N earlier files (default 5, 0 = only the current one).") var logKeep: Int?
    @Flag(help: "Print the summary as JSON.") var json = false
    @OptionGroup(title: "Prometheus metrics") var metrics: MetricsOptions
    @Option(help: "Analyse a saved trace (text, as tracefs' `trace` file) instead of the live kernel.") var fromTrace:
        String?
    @Option(help: "tracefs mount point (default: /sys/kernel/tracing).") var tracefs: String?
    @Option(help: "Also save the trace text as read (for --from-trace, bug reports, test fixtures).") var saveTrace:
        String?
    @Option(
        help:
            "crc: check each flip's content against the CRTC's CRC (debugfs): flips that change nothing, frozen pictures."
    )
    var verify: String?
    @Flag(help: "With --verify crc: exit 1 when a flip changed nothing (the picture froze while flips went on).")
    var expectMotion = false

    func validate() throws {
        guard duration >= 0, duration.isFinite else { throw ValidationError("--duration must be >= 0") }
        if let r = expectRate, !(r > 0 && r.isFinite) { throw ValidationError("--expect-rate must be > 0") }
        if let c = crtc, c < 0 { throw ValidationError("--crtc must be >= 0") }
        if crtc != nil && connector != nil { throw ValidationError("--crtc and --connector are exclusive") }
        if let v = verify, v != "crc" {
            throw ValidationError(
                "--verify '\(v)': observe checks crc only (writeback would take over another program's CRTC)")
        }
        if expectMotion && verify == nil { throw ValidationError("--expect-motion needs --verify crc") }
        if verify != nil && fromTrace != nil {
            throw ValidationError("--verify crc needs the live kernel: a saved trace (--from-trace) holds no CRC lines")
        }
    }

    @Flag(help: "No live status line on stderr.") var quiet = false

    func run() throws {
        try exitTwoOnError("observe") {
            var o = Observation.onStandardError()
            o.device = device
            o.crtc = crtc
            o.connector = connector
            o.duration = duration
            o.expectRate = expectRate
            o.log = log
            o.csv = csv
            o.metrics = metrics
            o.fromTrace = fromTrace
            o.tracefs = tracefs
            o.saveTrace = saveTrace
            o.logRotation = try RunPlanning.logRotation(log: log, maxSize: logMaxSize, keep: logKeep)
            o.statusLine = !quiet
            o.verifyCRC = verify == "crc"
            let (result, source, _): (ObserveResult, String, [String: [FrameReport]])
            do {
                (result, source, _) = try o.run()
            } catch let e as CRCError {
                throw CLIFailure(RunPlanning.crcRefusalLine(e))
            }
            print(json ? try result.json() : result.text(source: source))
            if let status = StandardStreams.incompleteOutputStatus(
                result.incompleteOutputs.isEmpty ? nil : result.incompleteOutputs)
            {
                throw ExitCode(status)
            }
            if expectMotion {
                for line in result.frozenLines { StandardStreams.errorLine("cadence observe: " + line) }
                if !result.frozenCRTCs.isEmpty { throw ExitCode(1) }
            }
        }
    }
}
