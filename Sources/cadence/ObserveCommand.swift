import ArgumentParser
import CadenceCore
import CadenceMetrics
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
    @Option(help: "The rate the clients are meant to flip at (Hz); default: each client's dominant interval.") var expectRate: Double?
    @Option(help: "Write one JSON line per observed flip (kind \"observed\").") var log: String?
    @Option(help: "Write one CSV row per observed flip.") var csv: String?
    @Flag(help: "Print the summary as JSON.") var json = false
    @OptionGroup(title: "Prometheus metrics") var metrics: MetricsOptions
    @Option(help: "Analyse a saved trace (text, as tracefs' `trace` file) instead of the live kernel.") var fromTrace: String?
    @Option(help: "tracefs mount point (default: /sys/kernel/tracing).") var tracefs: String?
    @Option(help: "Also save the trace text as read (for --from-trace, bug reports, test fixtures).") var saveTrace: String?

    func validate() throws {
        guard duration >= 0, duration.isFinite else { throw ValidationError("--duration must be >= 0") }
        if let r = expectRate, !(r > 0 && r.isFinite) { throw ValidationError("--expect-rate must be > 0") }
        if let c = crtc, c < 0 { throw ValidationError("--crtc must be >= 0") }
        if crtc != nil && connector != nil { throw ValidationError("--crtc and --connector are exclusive") }
    }

    func run() throws {
        try exitTwoOnError("observe") {
            let displays = ObservedDisplays(devicePath: device)
            var onlyCRTC = crtc.map { Int32($0) }
            if let name = connector {
                guard let c = displays.crtc(ofConnector: name) else {
                    throw CLIFailure("connector \(name) is not driving a CRTC on \(device)")
                }
                onlyCRTC = c
            }
            try metrics.checkAvailable()
            let session = try ObserveSession(
                onlyCRTC: onlyCRTC, expectRate: expectRate, displays: displays, logPath: log, csvPath: csv,
                metricsTextfile: metrics.metricsTextfile)
            let frameMetrics = session.metrics
            let server = try metrics.startServer { frameMetrics.exposition() }
            defer { server?.stop() }
            let source: String
            if let path = fromTrace {
                try session.replay(path: path)
                source = path
            } else {
                let instance = try TraceInstance(root: tracefs ?? TraceInstance.findRoot())
                defer { instance.remove() }
                let stop = SignalStop()
                defer { stop.remove() }
                var copy: FileHandle?
                if let path = saveTrace {
                    guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
                        throw CLIFailure("cannot create \(path)")
                    }
                    copy = h
                }
                defer { try? copy?.close() }
                try session.observe(instance, seconds: duration, copy: copy, stop: { stop.isRequested })
                source = "\(instance.root) (instance \(instance.name); kprobes \(instance.kprobes ? "on" : "off"), event types \(instance.sendProbe ? "traced" : "inferred"))"
            }
            let result = session.finish()
            if json {
                let enc = JSONEncoder()
                enc.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try enc.encode(result), as: UTF8.self))
            } else {
                print(result.text(source: source))
            }
            if let status = StandardStreams.incompleteOutputStatus(result.incompleteOutputs.isEmpty ? nil : result.incompleteOutputs) {
                throw ExitCode(status)
            }
        }
    }
}

/// Connector names and mode refreshes of the card's CRTCs (by index), when the card can be read.
struct ObservedDisplays {
    var byCRTC: [Int32: (connector: String, refreshHz: Double)] = [:]

    init(devicePath: String) {
        guard let dev = try? DRMDevice.open(path: devicePath), let res = try? dev.resources() else { return }
        for c in (try? dev.connectors()) ?? [] where c.encoderID.rawValue != 0 {
            guard let enc = try? dev.encoder(c.encoderID), let i = res.crtcs.firstIndex(of: enc.crtcID) else { continue }
            let hz = (try? dev.crtc(enc.crtcID))?.mode?.refreshHz ?? 0
            byCRTC[Int32(i)] = (c.name, hz)
        }
    }

    func crtc(ofConnector name: String) -> Int32? { byCRTC.first { $0.value.connector == name }?.key }
    func connector(_ crtc: Int32) -> String { byCRTC[crtc]?.connector ?? "crtc-\(crtc)" }
}
