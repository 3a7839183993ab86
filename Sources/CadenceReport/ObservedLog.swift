import CadenceCore
import Foundation

/// A `cadence observe --log` file read back: one ``RunLog`` per client (CRTC and drm_file), so
/// that `report` draws and sums an observed client exactly as it does a run.
///
/// The log is a `{"record":"observe","version":1}` line, one
/// `{"record":"frame","kind":"observed",…}` line per flip (each client's in flip order, written
/// once the client's cadence is known: its first flips are held until then) and, when
/// the observation ended cleanly, an `{"record":"end","observe":{…}}` line with each client's
/// summary. A rotated log's later files have a `{"record":"continuation",…}` second line, and a
/// file the observation went on from ends with `{"record":"rotated",…}` (each file reads alone).
public struct ObservedLog: Sendable {
    /// One client's flips as a run log (header backend "observed", no context records).
    public struct Client: Sendable {
        public var crtc: UInt32
        /// The drm_file, as logged (hex).
        public var file: String
        /// The process name as logged (debugfs or trace).
        public var client: String
        public var pid: Int
        public var log: RunLog
    }

    /// The clients in the order of their first flip.
    public var clients: [Client]
    /// True when the log has its end line.
    public var complete: Bool

    /// True when `data` starts with an observe log's first line.
    public static func isObserveLog(_ data: Data) -> Bool {
        let head = data.prefix(256)
        let firstLine = head.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? head
        guard let obj = try? JSONSerialization.jsonObject(with: Data(firstLine)) as? [String: Any] else { return false }
        return obj["record"] as? String == "observe"
    }

    /// The client with the most flips (the first of them on a tie) among processes, else among
    /// all; with `command`, among the clients of that name. Nil when none matches.
    public func mostFlips(command: String? = nil) -> Client? {
        let named = clients.filter { c in command.map { c.client == $0 } ?? true }
        let processes = command == nil ? named.filter { $0.file != "0" } : named
        let pool = processes.isEmpty ? named : processes
        return pool.max { $0.log.records.count < $1.log.records.count }
    }

    private struct Flip: Decodable {
        var crtc: UInt32
        var client: String
        var pid: Int
        var file: String
        var sequence: UInt64
        var flipNs: Int64
        var commitNs: Int64
        var deliveredNs: Int64
        var intervalNs: Int64
        var intervalRefreshes: Int
        var expectedRefreshes: Int
        var droppedRefreshes: Int
        var hitchNs: Int64
        var cause: DropCause?
        /// Absent in logs written before they were logged: then derived from the flip and its hitch.
        var targetNs: Int64?
        var targetSequence: UInt64?
    }

    private struct End: Decodable {
        struct Observe: Decodable { var clients: [EndClient] }
        struct EndClient: Decodable {
            var crtc: Int
            var file: String
            var summary: RunSummary
        }
        var observe: Observe
    }

    /// Parses an observe log; `name` is used in messages. A cut-off last line is an error unless
    /// `allowPartialLastLine` (then it is dropped).
    public static func parse(_ data: Data, name: String, allowPartialLastLine: Bool = false) throws -> ObservedLog {
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        let decoder = JSONDecoder()
        var order: [String] = []
        var flips: [String: [Flip]] = [:]
        var end: End?
        // A rotated observe log (`--log-max-size`): line 2 of a later file says which segment it
        // is; a file the observation went on from ends with a rotated line instead of the end line.
        var continuation: LogContinuation?
        var rotated: LogRotated?
        for (i, line) in lines.enumerated() {
            let number = i + 1
            let isLast = number == lines.count && data.last != 0x0A
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                if isLast && number > 1 {
                    if allowPartialLastLine { break }
                    throw RunLog.Invalid("\(name): line \(number) is cut off (truncated log); --allow-partial analyses the complete lines")
                }
                throw RunLog.Invalid("\(name): line \(number) is not a JSON object; not a Cadence observe log")
            }
            let record = obj["record"] as? String
            if number == 1 {
                guard record == "observe" else { throw RunLog.Invalid("\(name): line 1 is not an observe header") }
                guard obj["version"] as? Int == 1 else {
                    throw RunLog.Invalid("\(name): line 1: unknown observe log version \(obj["version"].map { "\($0)" } ?? "(none)") (this build reads 1)")
                }
                continue
            }
            switch record {
            case "continuation":
                guard number == 2, let k = obj["segment"] as? Int, k >= 2, let before = obj["framesBefore"] as? Int, before >= 0 else {
                    throw RunLog.Invalid("\(name): line \(number): a continuation record not right after the observe header, or malformed")
                }
                continuation = LogContinuation(segment: k, framesBefore: before, carried: [])
            case "rotated":
                guard end == nil, rotated == nil, let k = obj["segment"] as? Int, let n = obj["frames"] as? Int else {
                    throw RunLog.Invalid("\(name): line \(number): a rotated record after the end, or malformed")
                }
                rotated = LogRotated(segment: k, frames: n)
            case "frame":
                if end != nil || rotated != nil { throw RunLog.Invalid("\(name): line \(number): frame record after the end record") }
                let f: Flip
                do { f = try decoder.decode(Flip.self, from: Data(line)) } catch {
                    throw RunLog.Invalid("\(name): line \(number): malformed observed frame record")
                }
                let key = "\(f.crtc)/\(f.file)"
                if flips[key] == nil { order.append(key) }
                flips[key, default: []].append(f)
            case "end":
                guard end == nil, rotated == nil else { throw RunLog.Invalid("\(name): line \(number): a second end record") }
                do { end = try decoder.decode(End.self, from: Data(line)) } catch {
                    throw RunLog.Invalid("\(name): line \(number): malformed end record")
                }
            default:
                throw RunLog.Invalid("\(name): line \(number): unknown record '\(record ?? "(none)")' in an observe log")
            }
        }
        if order.isEmpty { throw RunLog.Invalid("\(name): no observed flips (nothing flipped while it was observed)") }
        // A client's lines come once its cadence is known (its first flips are held until then),
        // so the order of first lines is not the order of first flips: sort by the first flip.
        let firstFlip = Dictionary(uniqueKeysWithValues: order.map { ($0, flips[$0]!.map(\.flipNs).min() ?? 0) })
        order = order.enumerated()
            .sorted { (firstFlip[$0.element]!, $0.offset) < (firstFlip[$1.element]!, $1.offset) }
            .map(\.element)
        var clients: [Client] = []
        for key in order {
            let fs = flips[key]!
            let summary = end?.observe.clients.first { "\($0.crtc)/\($0.file)" == key }?.summary
            var c = Self.client(fs, summary: summary)
            c.log.continuation = continuation
            c.log.rotated = rotated
            clients.append(c)
        }
        return ObservedLog(clients: clients, complete: end != nil)
    }

    /// One client's flips as a run log whose summary is the accounting `observe` made.
    private static func client(_ fs: [Flip], summary: RunSummary?) -> Client {
        let first = fs[0]
        var records: [FrameRecord] = []
        records.reserveCapacity(fs.count)
        for (i, f) in fs.enumerated() {
            var r = FrameReport()
            r.frameIndex = i
            r.id = FrameID(i)
            r.sequence = f.sequence
            r.presentedTime = f.flipNs
            r.commitTime = f.commitNs
            r.receivedTime = f.deliveredNs
            r.crtc = f.crtc
            r.outcome = f.droppedRefreshes > 0 ? .late : .onTime
            r.lateRefreshes = f.droppedRefreshes
            r.droppedRefreshes = f.droppedRefreshes
            r.hitch = f.hitchNs
            r.interval = f.intervalNs
            r.intervalRefreshes = f.intervalRefreshes
            r.cause = f.cause
            r.targetTime = f.targetNs ?? (f.flipNs &- f.hitchNs)
            r.targetSequence = f.targetSequence ?? f.sequence &- UInt64(max(0, f.droppedRefreshes))
            records.append(FrameRecord(r))
        }
        let refreshHz = summary?.refreshHz ?? LogAnalysis.estimatedRefreshHz(records)
        for i in records.indices {
            records[i].effectiveRateHz = refreshHz / Double(max(1, fs[i].expectedRefreshes))
            records[i].latency = 0
        }
        var header = RunLogHeader(observedRefreshHz: refreshHz, crtc: first.crtc)
        header.latency = summary?.latency ?? 0
        var log = RunLog(header: header, records: records, end: summary.map { RunLogEnd(summary: $0) })
        log.rateSwitches = []
        return Client(crtc: first.crtc, file: first.file, client: first.client, pid: first.pid, log: log)
    }
}

extension RunLogHeader {
    /// The header of an observed client's log: backend "observed", the measured refresh.
    init(observedRefreshHz hz: Double, crtc: UInt32) {
        record = "run"
        version = RunLogHeader.currentVersion
        backend = "observed"
        refreshHz = hz
        refreshIntervalNs = hz > 0 ? 1e9 / hz : 16_666_666.667
        vrrRangeHz = nil
        hasHardwareVBlank = true
        self.crtc = crtc
        queueCapacity = 0
        range = .default
        latency = 0
        minDurationNs = nil
        contentRateHz = nil
        frames = nil
        durationNs = nil
        commitMarginNs = 0
        injectLate = [:]
        adapt = nil
        renderCost = nil
        startedAt = ""
        system = nil
    }
}
