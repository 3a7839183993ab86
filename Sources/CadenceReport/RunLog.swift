import CadenceCore
import Foundation

/// The first line of a run log: what was run, on which display and machine. Frame lines follow
/// (``FrameRecord``, one per frame), with a ``ContextRecord`` line about once a second, and a
/// clean end adds one ``RunLogEnd`` line.
///
/// Header, context and end lines carry a `record` key ("run" / "context" / "end"); frame lines
/// never do, so a reader tells them apart without guessing. Logs written before `system` and
/// context records existed are read as before.
public struct RunLogHeader: Codable, Equatable, Sendable {
    /// Format version of header and end lines (frame lines carry their own `version`).
    /// Version 2 changed what some logged verdicts mean (the frame lines' shape is unchanged):
    /// under VRR a frame shown after its target is late by any lateness over the tolerance (in
    /// version 1, only from half a frame interval on, in whole frame intervals); a frame rendered
    /// in time but committed after its deadline is flip-late only when the flip completion it
    /// waited for came late while vblank events came on time (in version 1, when its own flip
    /// event did). Frame lines may carry `lateVBlankEvents`.
    public static let currentVersion = 2
    /// The version of a log that carries the CRTC's CRC per vblank (``crcSource``, with
    /// ``CRCRecord`` lines): version 2 plus those lines. Its header and CRC lines say 3; its
    /// other lines keep version 2's shape and say 2. A build that predates it refuses the log in
    /// one line naming the version rather than skipping the CRCs.
    public static let scanoutVersion = 3
    /// The versions this build reads: version 1 logs still report and replay (a replay judges
    /// them by version 2's rules and says so).
    public static let readableVersions = 1...3
    /// Always "run".
    public var record: String = "run"
    public var version: Int = RunLogHeader.currentVersion
    /// "kms", "fake" (or "replay").
    public var backend: String
    /// Nominal refresh in Hz and the exact refresh interval in ns.
    public var refreshHz: Double
    public var refreshIntervalNs: Double
    public var vrrRangeHz: [Double]?
    /// Under VRR: the kernel timestamp of the display's last refresh when the run began, the
    /// vblank its link counts the first frame's minimum duration from. `KMSDisplay` makes it with
    /// the flips that learn the panel's response, some µs before the first callback; a replay
    /// starts the panel there. Absent without VRR and in older logs (a replay then takes the
    /// first callback's time).
    public var vrrLastRefreshNs: Int64?
    public var hasHardwareVBlank: Bool
    public var crtc: UInt32
    /// The connector, in runs over several outputs (absent otherwise and in older logs).
    public var connector: String?
    /// The card's node (`/dev/dri/card1`), in runs over outputs on several cards (absent
    /// otherwise and in older logs).
    public var card: String?
    /// Finished frames the backend could hold besides the one on screen and the one in flight.
    public var queueCapacity: Int
    /// The run's configuration, enough to run it again (`RunConfiguration`).
    public var range: FrameRateRange
    public var latency: Int
    public var minDurationNs: Int64?
    public var contentRateHz: Double?
    public var frames: Int?
    public var durationNs: Int64?
    public var commitMarginNs: Int64
    /// Frame index → K of `--inject-late`.
    public var injectLate: [String: Int]
    /// `--adapt` (absent in logs written before it existed, and when off).
    public var adapt: Bool?
    /// `--render-cost` spans (absent when none).
    public var renderCost: [RenderCost]?
    /// Wall-clock start, ISO 8601.
    public var startedAt: String
    /// Kernel, driver, CPU model and governor (nil in older logs).
    public var system: SystemInfo?
    /// The CRC source whose lines the log carries (``CRCRecord``), when the run verified its
    /// scanout with the CRTC's CRC; nil otherwise. Set it with ``carryCRCs(source:)``.
    public var crcSource: String?

    /// Marks the log as carrying the CRTC's CRC per vblank from `source`: version 3.
    public mutating func carryCRCs(source: String) {
        crcSource = source
        version = Self.scanoutVersion
    }

    /// Describes a run about to start on `backend`, on the machine `system` describes.
    public init(
        backend: any DisplayBackend, configuration c: RunConfiguration, startedAt: Date = Date(),
        system: SystemInfo? = nil
    ) {
        self.backend = backend.name
        refreshIntervalNs = backend.refreshInterval
        refreshHz = 1e9 / backend.refreshInterval
        vrrRangeHz = backend.vrrRange.map { [$0.lowerBound, $0.upperBound] }
        if backend.vrrRange != nil { vrrLastRefreshNs = try? backend.lastVBlank().timestamp }
        hasHardwareVBlank = backend.hasHardwareVBlank
        crtc = backend.crtcID
        queueCapacity = backend.queueCapacity
        range = c.range
        latency = c.latency
        minDurationNs = c.minimumDuration
        contentRateHz = c.contentRate
        frames = c.frames
        durationNs = c.duration
        commitMarginNs = c.commitMargin
        var inj: [String: Int] = [:]
        for (f, k) in c.injectLate { inj[String(f)] = k }
        injectLate = inj
        adapt = c.adapt ? true : nil
        renderCost = c.renderCost.isEmpty ? nil : c.renderCost
        self.startedAt = ISO8601DateFormatter().string(from: startedAt)
        self.system = system
    }

    /// The configuration the run used.
    public var configuration: RunConfiguration {
        var inj: [Int: Int] = [:]
        for (f, k) in injectLate { if let i = Int(f) { inj[i] = k } }
        return RunConfiguration(
            range: range, minimumDuration: minDurationNs, contentRate: contentRateHz, latency: latency, frames: frames,
            duration: durationNs, injectLate: inj, commitMargin: commitMarginNs, adapt: adapt ?? false,
            renderCost: renderCost ?? [])
    }
}

/// The last line of a run log that ended cleanly: the run's summary as `cadence run` printed it.
public struct RunLogEnd: Codable, Equatable, Sendable {
    /// Always "end".
    public var record: String = "end"
    public var version: Int = RunLogHeader.currentVersion
    public var summary: RunSummary
    public init(summary: RunSummary) { self.summary = summary }
}

/// A run log read back: header, frames in completion order, `--adapt` rate switches, and the
/// end line when present.
public struct RunLog: Sendable {
    public var header: RunLogHeader?
    public var records: [FrameRecord]
    /// `{"record":"rate-switch",…}` lines (`RateSwitch`), in order.
    public var rateSwitches: [RateSwitch] = []
    /// `{"record":"session",…}` lines (`SessionChange`: seat session paused/resumed), in order.
    public var sessions: [SessionChange] = []
    /// In a rotated log's later file: how many of the first ``sessions`` are repeated from the
    /// file before (they follow the continuation line, for replay); the rest are this file's.
    public var carriedSessions = 0
    public var end: RunLogEnd?
    /// The context records (temperature, frequency), in log order; empty in older logs.
    public var context: [ContextRecord] = []
    /// The CRTC's CRC lines (``CRCRecord``) of a log that verified its scanout, in log order;
    /// empty otherwise.
    public var crcSamples: [ScanoutVerifier.Sample] = []
    /// In a log that carries CRCs: every shown frame's flip with its frame index, in log
    /// order (kept as the log is read, also when its records are streamed and not kept).
    public var crcFlips: [ShownFlip] = []

    /// A shown frame's flip and its frame index (``crcFlips``).
    public struct ShownFlip: Equatable, Sendable {
        public var frame: Int
        public var flip: ScanoutVerifier.Flip
    }
    /// Line 2 of a rotated log's later files: which segment of the run this is (nil otherwise).
    public var continuation: LogContinuation?
    /// The last line of a rotated log's file that the run continued in the next one.
    public var rotated: LogRotated?
    /// Bytes of an incomplete last line that was skipped (only with `allowPartialLastLine`).
    public var skippedPartialBytes: Int = 0
    /// Frame records read: ``records``' count, also when they were streamed and not kept
    /// (``stream(path:allowPartialLastLine:frame:)``).
    public internal(set) var frameCount: Int {
        get { records.isEmpty ? streamedFrames : records.count }
        set { streamedFrames = newValue }
    }
    private var streamedFrames = 0
    /// The lowest and highest frame number of the records (nil without records).
    public internal(set) var frameSpan: ClosedRange<Int>? {
        get {
            if records.isEmpty { return streamedSpan }
            var lo = Int.max, hi = Int.min
            for r in records { lo = Swift.min(lo, r.frame); hi = Swift.max(hi, r.frame) }
            return lo...hi
        }
        set { streamedSpan = newValue }
    }
    private var streamedSpan: ClosedRange<Int>? = nil

    public init(header: RunLogHeader?, records: [FrameRecord], end: RunLogEnd?) {
        self.header = header
        self.records = records
        self.end = end
    }

    /// Why a file is not a usable run log: one line naming the file and the line.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// Reads and checks `path`.
    ///
    /// Rejects an empty or unreadable file, a file that is not a Cadence run log, an unknown
    /// version, and a log whose last line was cut off mid-record (unless
    /// `allowPartialLastLine`, which drops that line: a `kill -9` can leave one).
    public static func read(path: String, allowPartialLastLine: Bool = false) throws -> RunLog {
        var records: [FrameRecord] = []
        var log = try stream(path: path, allowPartialLastLine: allowPartialLastLine) { records.append($0) }
        log.records = records
        return log
    }

    /// Parses log text (see ``read(path:allowPartialLastLine:)``); `name` is used in messages.
    public static func parse(_ data: Data, name: String, allowPartialLastLine: Bool = false) throws -> RunLog {
        try parse(data, name: name, allowPartialLastLine: allowPartialLastLine, fastFrames: true)
    }

    /// ``parse(_:name:allowPartialLastLine:)``, with `fastFrames` false decoding every line
    /// with `JSONDecoder` (the tests compare the two).
    static func parse(_ data: Data, name: String, allowPartialLastLine: Bool, fastFrames: Bool) throws -> RunLog {
        if data.isEmpty { throw Invalid("\(name): empty file, not a Cadence run log") }
        var lines = RunLogLineDecoder(name: name, fastFrames: fastFrames)
        var records: [FrameRecord] = []
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            guard let base = bytes.baseAddress else { return }
            let rest = try lines.completeLines(base, count: bytes.count) { r, _ in records.append(r) }
            if rest > 0,
                let r = try lines.lastLine(
                    UnsafeBufferPointer(start: base + bytes.count - rest, count: rest),
                    allowPartialLastLine: allowPartialLastLine)
            {
                records.append(r)
            }
        }
        var log = lines.log
        log.records = records
        if records.isEmpty { throw Invalid("\(name): no frame records") }
        return log
    }

    /// Largest time a frame record may carry: 2^62 ns (146 years of CLOCK_MONOTONIC).
    public static let maxTimeNs: Int64 = 1 << 62
    /// Largest frame number and vblank sequence: 2^53 (exact in a Double).
    public static let maxIndex = 1 << 53
    /// Largest refresh count (late, dropped, interval) and busy retries: 2^31.
    public static let maxCount = 1 << 31

    /// The first field of `r` outside what a run can write (nil when all are inside): times
    /// 0…``maxTimeNs`` (0 = did not happen), signed durations within ±``maxTimeNs``, frame and
    /// sequences 0…``maxIndex``, counts 0…``maxCount``, latency 0…16, rates finite. Found by
    /// fuzzing: the readers' arithmetic must never see numbers a log cannot hold.
    static func outOfRange(_ r: FrameRecord) -> String? {
        let times: [(String, Int64)] = [
            ("callbackNs", r.callbackNs), ("wakeNs", r.wakeNs), ("deadlineNs", r.deadlineNs),
            ("renderStartNs", r.renderStartNs), ("renderEndNs", r.renderEndNs), ("commitNs", r.commitNs),
            ("flipNs", r.flipNs), ("receivedNs", r.receivedNs), ("intent.targetTimeNs", r.intent.targetTimeNs),
            ("intent.requestedTimeNs", r.intent.requestedTimeNs ?? 0)
        ]
        for (k, v) in times where !(0...maxTimeNs).contains(v) { return k }
        // [sequence, time] pairs.
        for (name, pairs) in [("lateVBlankEvents", r.lateVBlankEvents), ("vblanks", r.vblanks)] {
            for e in pairs ?? [] {
                guard e.count == 2, (0...Int64(maxIndex)).contains(e[0]), (0...maxTimeNs).contains(e[1]) else {
                    return name
                }
            }
        }
        let spans: [(String, Int64)] = [
            ("intervalNs", r.intervalNs), ("hitchNs", r.hitchNs), ("schedulerDelayNs", r.schedulerDelayNs ?? 0),
            ("intent.minDurationNs", r.intent.minDurationNs ?? 0)
        ]
        for (k, v) in spans where !(-maxTimeNs...maxTimeNs).contains(v) { return k }
        if !(0...maxIndex).contains(r.frame) { return "frame" }
        if r.sequence > UInt64(maxIndex) { return "sequence" }
        if r.intent.targetSequence > UInt64(maxIndex) { return "intent.targetSequence" }
        let counts: [(String, Int)] = [
            ("lateRefreshes", r.lateRefreshes), ("droppedRefreshes", r.droppedRefreshes),
            ("intervalRefreshes", r.intervalRefreshes), ("busyRetries", r.busyRetries)
        ]
        for (k, v) in counts where !(0...maxCount).contains(v) { return k }
        if !(0...16).contains(r.latency) { return "latency" }
        if !r.effectiveRateHz.isFinite { return "effectiveRateHz" }
        let range = r.intent.range
        if !(range.minimum.isFinite && range.maximum.isFinite && range.preferred.isFinite) { return "intent.range" }
        return nil
    }

    static func shortReason(_ error: Error) -> String {
        if let e = error as? DecodingError {
            switch e {
            case .keyNotFound(let k, _): return "missing \(k.stringValue)"
            case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
                return "bad \(c.codingPath.map(\.stringValue).joined(separator: "."))"
            @unknown default: return "undecodable"
            }
        }
        return "undecodable"
    }
}
