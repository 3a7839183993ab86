import CadenceCore
import CadenceMetrics
import CadenceReport
import DRM
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
    /// Check every flip's content against the CRTC's CRC (debugfs `crc/data`, source `auto`):
    /// live only. Starting a capture throws its `CRCError` (no debugfs, a driver without CRC).
    public var verifyCRC = false

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
        var captures: [(crtc: Int32, capture: CRCCapture)] = []
        if verifyCRC {
            guard fromTrace == nil else {
                throw SessionError("the CRC check needs the live kernel: a saved trace holds no CRC lines")
            }
            let crtcs = onlyCRTC.map { [$0] } ?? displays.byCRTC.keys.sorted()
            guard !crtcs.isEmpty else { throw SessionError("no CRTC is driven on \(device): no content to check") }
            let dev = try DRMDevice.open(path: device, readOnly: true)
            // The first open of a card with no master makes the opener master (even read-only):
            // give it up, or the program to observe could not set its mode or flip (EACCES).
            try? dev.dropMaster()
            captures = try crtcs.map { c throws(CRCError) in (c, try CRCCapture(device: dev, crtcIndex: Int(c))) }
            session.verifyContent(crtcs: crtcs, source: "auto")
            var lines: [CRCLine] = []
            var stopped = Set<Int32>()
            session.afterRead = { [onNotice] in
                for (crtc, capture) in captures where !stopped.contains(crtc) {
                    lines.removeAll(keepingCapacity: true)
                    let t0 = dev.monotonicNow()
                    do {
                        try capture.readAvailable(into: &lines)
                    } catch {
                        stopped.insert(crtc)
                        onNotice("CRC reading on crtc \(crtc) stopped: \(error); the lines read still count")
                    }
                    let t1 = dev.monotonicNow()
                    // The kernel's 32-bit frame as it is: the session widens it against the flips.
                    let samples = lines.compactMap { l in
                        l.frame.map {
                            ScanoutVerifier.Sample(
                                sequence: UInt64($0), crc: ScanoutVerifier.fold(l.values), receivedAt: t1)
                        }
                    }
                    session.addCRC(crtc: crtc, samples, readNs: t1 - t0)
                }
            }
        }
        defer { captures.removeAll() }
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
            if !captures.isEmpty {
                // The line of the vblank after the last flips (3 refreshes at 60 Hz).
                Thread.sleep(forTimeInterval: 0.05)
                session.afterRead?()
            }
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
