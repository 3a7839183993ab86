// Long on purpose: one state machine over the trace stream (held flips, per-client cadence,
// per-CRTC content check, outputs written as flips are judged); splitting it would spread its
// private state across files. ObservedDisplays lives in its own file.

import CadenceCore
import CadenceMetrics
import CadenceReport
import DRM
import DRMTrace
import Foundation

/// Observing another program's flips (`cadence observe`, `cadence validate --observe`): the
/// kernel's DRM trace text in, accounting per CRTC and client, log, CSV and metrics out.
///
///     let session = try ObserveSession(onlyCRTC: nil, expectRate: nil,
///                                      displays: ObservedDisplays(devicePath: "/dev/dri/card0"),
///                                      logPath: "observe.jsonl", csvPath: nil, metricsTextfile: nil)
///     try session.replay(path: "saved.trace")
///     let result = session.finish()
public final class ObserveSession {
    /// One client on one CRTC: the CRTC's index and the client's drm_file (0: the kernel's own
    /// commits).
    public struct ClientKey: Hashable, Sendable {
        /// The CRTC's index on the card.
        public var crtc: Int32
        /// The drm_file, the kernel's pointer.
        public var file: UInt64
    }

    /// The Prometheus metrics of every judged flip (serve its exposition while observing).
    public let metrics = FrameMetrics()
    let onlyCRTC: Int32?
    let expectRate: Double?
    var displays: ObservedDisplays
    /// The card to read again when a client starts flipping on a CRTC it did not drive at the
    /// start (live only: a saved trace's machine is not this one).
    public var rereadDevice: String?
    var stream = TraceStream()
    var events: [FlipTracker.Event] = []
    var fits: [Int32: RefreshFit] = [:]
    var vblanks: [Int32: Int] = [:]
    var clients: [ClientKey: ObservedCadence] = [:]
    /// Each client's flips not judged yet (its cadence not known), oldest first.
    var heldFlips: [ClientKey: [FlipTracker.Flip]] = [:]
    var order: [ClientKey] = []
    var log: RotatingLineFile?
    var logFrames = 0
    var logFramesBefore = 0
    var csv: LineFile?
    let textfile: String?
    var incomplete: [String] = []
    var started = Date()
    var lastTextfile = Date()
    var seconds = 0.0
    /// The debugfs DRM directory the clients' process names come from (nil: the trace's only).
    let clientsRoot: String?
    /// The debugfs client of each drm_file (nil: none matched), looked up at its first flip.
    var identities: [UInt64: DRMClient?] = [:]
    /// The largest drop event of each client, in refreshes.
    var largest: [ClientKey: Int] = [:]
    /// The content check per CRTC (``verifyContent(crtcs:source:)``): every flip on the CRTC and
    /// every CRC line read for it.
    var contents: [Int32: ScanoutVerifier] = [:]
    var contentSource = "auto"
    /// Per CRTC, the CRC lines' 32-bit frame counter widened against the flips' 64-bit sequences
    /// (the trace's, unwrapped per CRTC): created at the CRTC's first traced vblank or flip.
    var crcWideners: [Int32: SequenceWidener] = [:]
    /// CRC samples read before the CRTC's first traced vblank or flip (their epoch is not known
    /// yet): the newest `heldCRCLimit`.
    var heldCRC: [Int32: [ScanoutVerifier.Sample]] = [:]
    static let heldCRCLimit = 600
    var crcReads = 0
    var crcReadNs: Int64 = 0
    /// Called after each read of the trace (live), to read CRC lines (``addCRC(crtc:_:readNs:)``).
    public var afterRead: (() -> Void)?
    /// Every flip's report per client, kept only when ``keepReports`` (validate's windows).
    public var keepReports = false
    /// Every judged flip's report per client (only with ``keepReports``).
    public internal(set) var reports: [ClientKey: [FrameReport]] = [:]

    /// Called about once a second while observing, with the status of ``statusClient`` (or
    /// the client with the most flips); not called before any client flipped.
    public var onStatus: ((RunStatus) -> Void)?
    /// The client (its name) the status line follows.
    public var statusClient: String?
    /// Called with one line when an output stops being written while observing goes on (the
    /// log: "logging stopped after N flips: …"); the failure is also in the result's
    /// `incompleteOutputs`.
    public var onNotice: (String) -> Void = { _ in }
    var lastStatus = Date()
    var lastStatusPresented: (key: ClientKey, presented: Int)?

    /// A session watching every CRTC, or only `onlyCRTC`; `expectRate` (Hz) fixes each client's
    /// expected interval (nil: each client's dominant interval). The log (`logPath`, rotated
    /// by `logRotation`) and CSV are created here (throws for an unwritable path); the metrics
    /// textfile is written every 10 s and at the end. `clientsRoot`: the debugfs DRM directory
    /// the clients' process names are read from (nil: the trace's names only).
    public init(
        onlyCRTC: Int32?, expectRate: Double?, displays: ObservedDisplays, logPath: String?, csvPath: String?,
        metricsTextfile: String?,
        clientsRoot: String? = nil, logRotation: LogRotation? = nil
    ) throws {
        self.clientsRoot = clientsRoot
        self.onlyCRTC = onlyCRTC
        self.expectRate = expectRate
        self.displays = displays
        textfile = metricsTextfile
        log = try logPath.map { path in
            try RotatingLineFile(path: path, rotation: logRotation, compression: try LogCompression.of(path: path))
        }
        csv = try csvPath.map { try LineFile(path: $0) }
        write(
            &csv, "csv",
            "crtc,client,pid,sequence,flip_ns,commit_ns,interval_refreshes,dropped_refreshes,hitch_ns,cause,exact")
        // A rotated log's every file starts with the header and a continuation record and the
        // file left behind ends with a rotated record (as a run log's, see RunLogWriter).
        let header = #"{"record":"observe","version":1}"#
        log?.preamble = { [unowned self] k in
            [
                Array(header.utf8),
                Array(#"{"framesBefore":\#(self.logFrames),"record":"continuation","segment":\#(k),"version":1}"#.utf8)
            ]
        }
        log?.trailer = { [unowned self] k in
            defer { self.logFramesBefore = self.logFrames }
            return Array(
                #"{"frames":\#(self.logFrames - self.logFramesBefore),"record":"rotated","segment":\#(k),"version":1}"#
                    .utf8)
        }
        writeLog(header, record: false)
    }

    /// Reads the live trace until `seconds` pass (0: until `stop`) or `stop()`.
    /// `copy`: a file that gets the trace text as read (to be analysed later with
    /// ``replay(path:)``).
    public func observe(
        _ instance: TraceInstance, seconds limit: Double, copy: FileHandle? = nil, stop: () -> Bool
    ) throws {
        started = Date()
        lastStatus = started
        stream = TraceStream(sendProbe: instance.sendProbe)
        cpuAtStart = Self.cpuSeconds()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while !stop() {
            let elapsed = Date().timeIntervalSince(started)
            if limit > 0 && elapsed >= limit { break }
            let n = try instance.read(into: buffer, timeoutMs: 100)
            if n > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                if let copy {
                    do { try copy.write(contentsOf: Data(bytes)) } catch { incomplete.append("save-trace: \(error)") }
                }
                feed(bytes)
            }
            afterRead?()
            if textfile != nil && Date().timeIntervalSince(lastTextfile) >= 10 { writeTextfile() }
            if onStatus != nil && Date().timeIntervalSince(lastStatus) >= 1 { emitStatus() }
        }
        seconds = Date().timeIntervalSince(started)
        cpuObserving = Self.cpuSeconds() - cpuAtStart
    }

    /// The status of the followed client: `run`'s figures from its accounting so far.
    func emitStatus() {
        let now = Date()
        let seconds = now.timeIntervalSince(lastStatus)
        lastStatus = now
        let followed = order.filter { k in
            (clients[k]?.accounting.presented ?? 0) > 0
                && (statusClient.map { clientName(k.file) == $0 } ?? (k.file != 0))
        }
        guard let key = followed.max(by: { clients[$0]!.accounting.presented < clients[$1]!.accounting.presented }),
            let c = clients[key], let onStatus
        else { return }
        let a = c.accounting
        let before = lastStatusPresented?.key == key ? lastStatusPresented!.presented : a.presented
        lastStatusPresented = (key, a.presented)
        let hz = 1e9 / periodNs(key.crtc)
        onStatus(
            RunStatus(
                elapsedSeconds: now.timeIntervalSince(started), fps: Double(a.presented - before) / seconds,
                effectiveRateHz: hz / Double(c.expectedInterval), droppedRefreshes: a.droppedRefreshes,
                dropEvents: a.dropEvents, hitchTimeRatio: a.hitchTimeRatio))
    }

    var cpuAtStart = 0.0
    var cpuObserving: Double?

    /// User + system CPU time of the process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
            usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Analyses a saved trace file; throws a ``SessionError`` when it cannot be read.
    public func replay(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw SessionError("cannot read \(path)") }
        stream = TraceStream(sendProbe: data.range(of: Data((TraceEventName.sendProbe + ": ").utf8)) != nil)
        data.withUnsafeBytes { feed($0) }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        events.removeAll(keepingCapacity: true)
        stream.feed(bytes, into: &events)
        handle()
    }

    func handle() {
        for e in events {
            switch e {
            case .vblank(let crtc, let seq, let time):
                guard onlyCRTC == nil || onlyCRTC == crtc else { continue }
                noteSequence(crtc: crtc, seq)
                fits[crtc, default: RefreshFit()].add(sequence: seq, timestamp: time)
                vblanks[crtc, default: 0] += 1
                judgeIdleClients(crtc: crtc, at: time)
            case .flip(let f):
                guard onlyCRTC == nil || onlyCRTC == f.crtc else { continue }
                noteSequence(crtc: f.crtc, f.sequence)
                if let n = contents[f.crtc]?.flipCount {
                    // In place: a copy of the verifier would copy its window at every flip.
                    contents[f.crtc]!.add(
                        ScanoutVerifier.Flip(frame: FrameID(n), sequence: f.sequence, timestamp: f.timestamp))
                }
                let key = ClientKey(crtc: f.crtc, file: f.file)
                let period = periodNs(f.crtc)
                let fixed = expectRate.map { ObservedCadence.interval(rateHz: $0, refreshHz: 1e9 / period) }
                if clients[key] == nil, let path = rereadDevice, (displays.byCRTC[f.crtc]?.refreshHz ?? 0) <= 0 {
                    displays = ObservedDisplays(devicePath: path)
                }
                var c =
                    clients[key]
                    ?? {
                        order.append(key); return ObservedCadence(fixedInterval: fixed)
                    }()
                // Held until the client's cadence is known; then judged in flip order.
                heldFlips[key, default: []].append(f)
                let judged = c.add(
                    sequence: f.sequence, timestamp: f.timestamp, committedAt: f.committedAt, periodNs: period,
                    crtc: UInt32(f.crtc))
                clients[key] = c
                emit(judged, key: key, period: period)
            }
        }
    }

    /// A client that stopped flipping before its cadence was known (the kernel's few commits
    /// when a program exits, say) is judged a second after its last flip against its dominant
    /// interval, rather than at the end: a scrape or status after the flips stopped counts them.
    func judgeIdleClients(crtc: Int32, at time: Int64) {
        for (key, held) in heldFlips where key.crtc == crtc {
            guard let last = held.last, time &- last.timestamp > 1_000_000_000, var c = clients[key] else { continue }
            let judged = c.flush()
            clients[key] = c
            emit(judged, key: key, period: periodNs(key.crtc))
        }
    }

    /// Logs, writes and counts the judged flips of `key` (the oldest of its held flips each).
    func emit(_ judged: [FrameReport], key: ClientKey, period: Double) {
        guard !judged.isEmpty else { return }
        let flips = heldFlips[key, default: []].prefix(judged.count)
        heldFlips[key]?.removeFirst(flips.count)
        for (r, f) in zip(judged, flips) {
            if r.droppedRefreshes > largest[key, default: 0] { largest[key] = r.droppedRefreshes }
            if keepReports { reports[key, default: []].append(r) }
            let task = stream.tracker.tasks[f.file]
            let name = clientName(f.file)
            metrics.record(r, labels: labels(key), refreshHz: 1e9 / period, expectedInterval: r.cadenceRefreshes)
            let cause = r.cause?.rawValue ?? ""
            write(
                &csv, "csv",
                "\(f.crtc),\(name),\(task?.pid ?? 0),\(f.sequence),\(f.timestamp),\(f.committedAt ?? 0),\(r.intervalRefreshes),\(r.droppedRefreshes),\(r.hitch),\(cause),\(f.exact)"
            )
            writeLog(
                #"{"record":"frame","kind":"observed","crtc":\#(f.crtc),"client":\#(name.jsonQuoted),"pid":\#(task?.pid ?? 0),"file":"\#(String(f.file, radix: 16))","sequence":\#(f.sequence),"flipNs":\#(f.timestamp),"commitNs":\#(f.committedAt ?? 0),"deliveredNs":\#(f.deliveredAt),"intervalNs":\#(r.interval),"intervalRefreshes":\#(r.intervalRefreshes),"expectedRefreshes":\#(r.cadenceRefreshes),"targetNs":\#(r.targetTime),"targetSequence":\#(r.targetSequence),"droppedRefreshes":\#(r.droppedRefreshes),"hitchNs":\#(r.hitch),"cause":\#(r.cause.map { "\"\($0.rawValue)\"" } ?? "null"),"exact":\#(f.exact)}"#
            )
        }
    }

    /// ns per refresh on `crtc`: the fit of its vblanks, else its mode, else 60 Hz.
    func periodNs(_ crtc: Int32) -> Double {
        if let s = fits[crtc]?.periodNs { return s }
        if let hz = displays.byCRTC[crtc]?.refreshHz, hz > 0 { return 1e9 / hz }
        return 1e9 / 60
    }

    func clientName(_ file: UInt64) -> String {
        file == 0
            ? "(kernel)"
            : identity(file)?.command ?? stream.tracker.tasks[file]?.command ?? "file-\(String(file, radix: 16))"
    }

    /// The debugfs `clients` entry of the process that flips on `file`, matched by the traced
    /// task's pid (or its thread group); read once per file, while the process is alive.
    func identity(_ file: UInt64) -> DRMClient? {
        if let known = identities[file] { return known }
        guard file != 0, let root = clientsRoot, let task = stream.tracker.tasks[file] else { return nil }
        let found = DRMClients.match(
            pid: task.pid, tgid: DRMClients.threadGroup(of: task.pid), in: DRMClients.read(root: root))
        identities[file] = .some(found)
        return found
    }

    func labels(_ k: ClientKey) -> FrameMetrics.Labels {
        FrameMetrics.Labels(connector: displays.connector(k.crtc), crtc: Int(k.crtc), client: clientName(k.file))
    }
}
