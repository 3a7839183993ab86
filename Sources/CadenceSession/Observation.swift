import CadenceCore
import CadenceMetrics
import CadenceReport
import DRMTrace
import Foundation
import KMSDisplay

/// One observation of another program's flips, whichever command asked for it (`observe`,
/// `validate --observe`): the live kernel trace for ``duration`` seconds (or until SIGINT,
/// SIGTERM or SIGHUP), or a saved trace, through an ``ObserveSession``.
///
///     var observation = Observation()
///     observation.fromTrace = "saved.trace"
///     let (result, source, _) = try observation.run()
public struct Observation {
    /// The DRM card, for connector names and mode refresh.
    public var device = "/dev/dri/card0"
    /// Only this CRTC index (nil: every CRTC).
    public var crtc: Int?
    /// Only the CRTC this connector drives.
    public var connector: String?
    /// Seconds; 0 = until SIGINT/SIGTERM.
    public var duration: Double = 10
    /// The rate the clients are meant to flip at, Hz (nil: each client's dominant interval).
    public var expectRate: Double?
    /// One JSON line per observed flip.
    public var log: String?
    /// When the log rotates (nil: one file).
    public var logRotation: LogRotation?
    /// One CSV row per observed flip.
    public var csv: String?
    /// Serve Prometheus metrics on this port while observing (nil: no server).
    public var metricsPort: Int?
    /// The address the metrics server listens on.
    public var metricsAddress = "127.0.0.1"
    /// Write Prometheus metrics to this file every 10 s and at the end.
    public var metricsTextfile: String?
    /// Analyse this saved trace instead of the live kernel.
    public var fromTrace: String?
    /// The tracefs mount point (nil: found).
    public var tracefs: String?
    /// Also save the live trace text as read, to this file.
    public var saveTrace: String?
    /// Called about once a second while observing live with the status of ``statusClient`` (or
    /// the client with the most flips); nil: no status.
    public var onStatus: ((RunStatus) -> Void)?
    /// The client (its name) the status follows.
    public var statusClient: String?
    /// Keep every flip's report (`frames` of ``run()``).
    public var keepFrames = false
    /// Gets one line when an output stops being written while observing goes on.
    public var onNotice: (String) -> Void = { _ in }

    /// The defaults: card0, 10 s, no outputs, no status.
    public init() {}

    /// Observes (or analyses ``fromTrace``) and returns the result, a line naming the source,
    /// and (with ``keepFrames``) each client's flips by ``ObserveResult/Client/key``. Throws
    /// one-line errors (no tracefs access, a connector not driving a CRTC, …).
    public func run() throws -> (result: ObserveResult, source: String, frames: [String: [FrameReport]]) {
        let displays = ObservedDisplays(devicePath: device)
        var onlyCRTC = crtc.map { Int32($0) }
        if let name = connector {
            guard let c = displays.crtc(ofConnector: name) else {
                throw SessionError("connector \(name) is not driving a CRTC on \(device)")
            }
            onlyCRTC = c
        }
        if metricsPort != nil && !MetricsServer.isAvailable {
            throw SessionError(MetricsError.httpUnavailable.description)
        }
        let session = try ObserveSession(
            onlyCRTC: onlyCRTC, expectRate: expectRate, displays: displays, logPath: log, csvPath: csv,
            metricsTextfile: metricsTextfile, clientsRoot: fromTrace == nil ? DRMClients.defaultRoot : nil,
            logRotation: logRotation)
        session.keepReports = keepFrames
        session.onNotice = onNotice
        if fromTrace == nil { session.rereadDevice = device }
        let frameMetrics = session.metrics
        let server = try metricsPort.map {
            try MetricsServer(address: metricsAddress, port: $0, body: { frameMetrics.exposition() })
        }
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
                guard FileManager.default.createFile(atPath: path, contents: nil),
                    let h = FileHandle(forWritingAtPath: path)
                else {
                    throw SessionError("cannot create \(path)")
                }
                copy = h
            }
            defer { try? copy?.close() }
            if let onStatus {
                session.statusClient = statusClient
                session.onStatus = onStatus
            }
            try session.observe(instance, seconds: duration, copy: copy, stop: { stop.isRequested })
            source =
                "\(instance.root) (instance \(instance.name); kprobes \(instance.kprobes ? "on" : "off"), event types \(instance.sendProbe ? "traced" : "inferred"))"
        }
        let result = session.finish()
        var frames: [String: [FrameReport]] = [:]
        for (k, r) in session.reports {
            frames[ObserveResult.Client.key(crtc: Int(k.crtc), file: String(k.file, radix: 16))] = r
        }
        return (result, source, frames)
    }
}
