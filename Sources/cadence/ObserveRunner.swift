import CadenceCore
import CadenceMetrics
import CadenceReport
import CadenceSession
import DRMTrace
import Foundation
import KMSDisplay

/// What one observation needs, whichever command asked for it (`observe`, `validate --observe`).
struct ObserveSettings {
    var device = "/dev/dri/card0"
    var crtc: Int?
    var connector: String?
    /// Seconds; 0 = until SIGINT/SIGTERM.
    var duration: Double = 10
    var expectRate: Double?
    var log: String?
    /// `--log-max-size`/`--log-keep`: the log rotates (nil: one file).
    var logRotation: LogRotation?
    var csv: String?
    /// `--metrics-port`, `--metrics-address`, `--metrics-textfile`.
    var metrics = MetricsOptions()
    var fromTrace: String?
    var tracefs: String?
    var saveTrace: String?
    /// The live status line on stderr (once a second, run's format) for this client; nil: the
    /// one with the most flips.
    var statusLine = true
    var statusClient: String?
    /// Keep every flip's report (`frames` of ``run()``), for validate's --warmup/--window.
    var keepFrames = false

    /// Observes (or analyses `fromTrace`) and returns the result and a line naming the source.
    /// Throws one-line errors (no tracefs access, a connector not driving a CRTC, …).
    func run() throws -> (result: ObserveResult, source: String, frames: [String: [FrameReport]]) {
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
            metricsTextfile: metrics.metricsTextfile, clientsRoot: fromTrace == nil ? DRMClients.defaultRoot : nil, logRotation: logRotation)
        session.keepReports = keepFrames
        session.onNotice = { StandardStreams.errorLine("cadence observe: " + $0) }
        if fromTrace == nil { session.rereadDevice = device }
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
            if statusLine {
                session.statusClient = statusClient
                session.onStatus = { StandardStreams.errorLine(StatusSink.statusLine($0)) }
            }
            try session.observe(instance, seconds: duration, copy: copy, stop: { stop.isRequested })
            source = "\(instance.root) (instance \(instance.name); kprobes \(instance.kprobes ? "on" : "off"), event types \(instance.sendProbe ? "traced" : "inferred"))"
        }
        let result = session.finish()
        var frames: [String: [FrameReport]] = [:]
        for (k, r) in session.reports { frames[ObserveResult.Client.key(crtc: Int(k.crtc), file: String(k.file, radix: 16))] = r }
        return (result, source, frames)
    }
}

extension ObserveResult {
    /// One line saying which client was picked and why.
    func pickNote(_ c: Client, command: String?) -> String {
        let who = "\(c.client) (pid \(c.pid.map(String.init) ?? "?"), \(c.nameSource == "debugfs" ? "name from debugfs" : "name from the trace"), crtc \(c.crtc) \(c.connector))"
        let others = clients.filter { $0.summary.presented > 0 }.count - 1
        if command != nil { return "client            \(who): \(c.summary.presented) flips, named by --client" }
        return "client            \(who): \(c.summary.presented) flips, the most of \(others + 1) client\(others == 0 ? "" : "s") flipping"
    }
}
