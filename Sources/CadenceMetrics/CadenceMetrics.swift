import CadenceCore
import Prometheus

#if canImport(Glibc)
import Glibc
#endif

/// Prometheus metrics of observed (or paced) frames, per display and client, through
/// swift-prometheus' registry (the exposition format of swift-server/swift-prometheus 2.x):
///
/// | metric | type | |
/// |---|---|---|
/// | `cadence_flips_observed_total` | counter | page flips seen (observe: series with a client) |
/// | `cadence_frames_total` | counter | frames completed, shown or not (run: series without a client) |
/// | `cadence_frames_presented_total` | counter | frames that reached the panel |
/// | `cadence_dropped_refreshes_total` | counter | refreshes that showed a stale frame |
/// | `cadence_drop_events_total{cause}` | counter | shown frames that followed dropped refreshes, by cause (every cause from 0; "unknown" without commit times) |
/// | `cadence_refresh_hz` | gauge | measured refresh (least squares over the vblank timestamps) |
/// | `cadence_effective_rate_hz` | gauge | the rate frames are meant to be shown at |
/// | `cadence_hitch_time_ratio` | gauge | hitch time ratio (ms per s) over the last minute |
/// | `cadence_frame_interval_refreshes` | histogram | interval between shown frames in refreshes |
/// | `cadence_frame_interval_seconds` | histogram | interval between shown frames in seconds |
/// | `cadence_scanout_frames_verified_total` | counter | frames whose CRC changed at the vblank their flip names (with the CRC check) |
/// | `cadence_scanout_mismatches_total{kind}` | counter | `stale` (a flip that changed nothing) and `change-without-flip` |
/// | `cadence_scanout_inexact_frames_total` | counter | frames the CRC lines cannot judge (missing, repeated, catch-up lines) |
/// | `cadence_scanout_repeated_refreshes_total` | counter | refreshes whose CRC equals the one before: a frame shown again |
/// | `cadence_writeback_captures_total{result}` | counter | writeback captures: `equal`, `mismatched`, `skipped`, `timed-out` |
///
/// The scanout and writeback series exist only when the check ran; the verdict is reached at
/// the end of the run (the CRC of a frame is judged against the flips around it), so they are
/// set once then, in the last textfile and scrape.
///
/// Labels: `connector`, `crtc` (the CRTC's index) and, for observed clients, `client` (the
/// flipping process' command).
public final class FrameMetrics: @unchecked Sendable {
    /// Each series' labels.
    public struct Labels: Hashable, Sendable {
        public var connector: String
        public var crtc: Int
        /// The flipping process (observe); nil for Cadence's own frames (run, validate).
        public var client: String?
        public init(connector: String, crtc: Int, client: String? = nil) {
            self.connector = connector; self.crtc = crtc; self.client = client
        }
        var pairs: [(String, String)] {
            [("connector", connector), ("crtc", String(crtc))] + (client.map { [("client", $0)] } ?? [])
        }
    }

    private final class Series {
        let frames, presented, dropped: Counter
        /// Drop events by `DropCause.allCases` index, then "unknown" (made when first needed).
        var drops: [Counter]
        var unknownDrops: Counter?
        let refresh, rate, hitch: Gauge
        let refreshes, micros: ValueHistogram
        /// (presented time, hitch) of the last minute's frames with drops, and the first frame's time.
        var recent: [(Int64, Int64)] = []
        var first: Int64 = 0
        init(_ r: PrometheusCollectorRegistry, _ l: [(String, String)], observed: Bool) {
            func d(_ n: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
                MetricNameDescriptor(namespace: "cadence", metricName: n, unitName: unit, helpText: help)
            }
            frames = observed
                ? r.makeCounter(descriptor: d("flips_observed", "total", "Page flips seen."), labels: l)
                : r.makeCounter(descriptor: d("frames", "total", "Frames completed: shown, discarded, failed or unconfirmed."), labels: l)
            presented = r.makeCounter(descriptor: d("frames_presented", "total", "Frames that reached the panel."), labels: l)
            dropped = r.makeCounter(descriptor: d("dropped_refreshes", "total", "Refreshes that showed a stale frame."), labels: l)
            drops = DropCause.allCases.map { r.makeCounter(descriptor: Self.dropEvents, labels: l + [("cause", $0.rawValue)]) }
            refresh = r.makeGauge(descriptor: d("refresh", "hz", "Measured refresh (least squares over the kernel's vblank timestamps)."), labels: l)
            rate = r.makeGauge(descriptor: d("effective_rate", "hz", "The rate frames are meant to be shown at (refresh divided by the expected interval in refreshes)."), labels: l)
            hitch = r.makeGauge(descriptor: d("hitch_time", "ratio", "Hitch time ratio over the last minute: ms of hitch per s of presentation (MetricKit's)."), labels: l)
            refreshes = r.makeValueHistogram(descriptor: d("frame_interval", "refreshes", "Interval between shown frames in refreshes."),
                                             labels: l, buckets: [1, 2, 3, 4, 6, 8, 16])
            micros = r.makeValueHistogram(descriptor: d("frame_interval", "seconds", "Interval between shown frames in seconds."),
                                          labels: l, buckets: [0.004, 0.008, 0.012, 0.017, 0.020, 0.034, 0.050, 0.100, 0.250, 1])
        }
        static var dropEvents: MetricNameDescriptor {
            MetricNameDescriptor(namespace: "cadence", metricName: "drop_events", unitName: "total",
                                 helpText: "Shown frames that followed dropped refreshes, by cause.")
        }
    }

    public let registry = PrometheusCollectorRegistry()
    private var series: [Labels: Series] = [:]
    private let lock = Lock()

    public init() {}

    /// Creates the series of `labels` (every counter at 0) if it does not exist yet.
    public func declare(_ labels: Labels) {
        lock.withLock { _ = series(labels) }
    }

    private func series(_ labels: Labels) -> Series {
        if let s = series[labels] { return s }
        let s = Series(registry, labels.pairs, observed: labels.client != nil)
        series[labels] = s
        return s
    }

    /// Counts one flip's report for `labels` (`refreshHz`: the CRTC's measured refresh so far,
    /// `expectedInterval`: the refreshes the client's rate asks for).
    public func record(_ r: FrameReport, labels: Labels, refreshHz: Double, expectedInterval: Int) {
        record(FrameSample(r, refreshHz: refreshHz, effectiveRateHz: refreshHz / Double(max(1, expectedInterval))), labels: labels)
    }

    /// Counts one frame's sample for `labels`.
    public func record(_ r: FrameSample, labels: Labels) {
        lock.withLock {
            let s = series(labels)
            s.frames.increment()
            if r.refreshHz > 0 { s.refresh.set(to: r.refreshHz) }
            if r.effectiveRateHz > 0 { s.rate.set(to: r.effectiveRateHz) }
            guard r.wasPresented else { return }
            s.presented.increment()
            if s.first == 0 { s.first = r.presentedTime }
            if r.droppedRefreshes > 0 {
                s.dropped.increment(by: Int64(r.droppedRefreshes))
                if let c = r.cause {
                    s.drops[c.index].increment()
                } else {
                    let c = s.unknownDrops ?? registry.makeCounter(descriptor: Series.dropEvents, labels: labels.pairs + [("cause", "unknown")])
                    s.unknownDrops = c
                    c.increment()
                }
                s.recent.append((r.presentedTime, r.hitch))
            }
            if r.interval > 0 {
                s.refreshes.record(Double(r.intervalRefreshes))
                s.micros.record(Double(r.interval) / 1e9)
            }
            // Hitch ratio over the last minute (or since the first frame, when shorter).
            let now = r.presentedTime
            let from = now &- 60_000_000_000
            if let k = s.recent.firstIndex(where: { $0.0 > from }) { s.recent.removeFirst(k) } else { s.recent.removeAll() }
            let span = Double(now &- max(from, s.first)) / 1e9
            let hitchMs = s.recent.reduce(0.0) { $0 + Double($1.1) / 1e6 }
            s.hitch.set(to: span > 0 ? hitchMs / span : 0)
        }
    }

    /// Sets the scanout verification's counters of `labels` from its verdict (once, at the end
    /// of a run): the CRC counters when the CRC check ran, the writeback ones when captures ran.
    public func setScanout(_ v: ScanoutSummary, labels: Labels) {
        func d(_ n: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "cadence", metricName: n, unitName: "total", helpText: help)
        }
        let l = labels.pairs
        lock.withLock {
            if v.crcRan {
                let verified = d("scanout_frames_verified", "Frames whose CRC changed at the vblank their flip names.")
                registry.makeCounter(descriptor: verified, labels: l).increment(by: Int64(v.verified))
                let mismatches = d("scanout_mismatches", "Scanout mismatches: stale flips and changes without a flip.")
                registry.makeCounter(descriptor: mismatches, labels: l + [("kind", "stale")])
                    .increment(by: Int64(v.stale))
                registry.makeCounter(descriptor: mismatches, labels: l + [("kind", "change-without-flip")])
                    .increment(by: Int64(v.changesWithoutFlip))
                let inexact = d("scanout_inexact_frames", "Frames the CRC lines cannot judge.")
                registry.makeCounter(descriptor: inexact, labels: l).increment(by: Int64(v.inexact))
                let repeated = d("scanout_repeated_refreshes", "Refreshes whose CRC equals the one before.")
                registry.makeCounter(descriptor: repeated, labels: l).increment(by: Int64(v.repeatedRefreshes))
            }
            if let w = v.writeback {
                let captures = d("writeback_captures", "Writeback captures by result.")
                var results = [("equal", w.equal), ("mismatched", w.captures - w.equal)]
                results += [("skipped", w.skipped), ("timed-out", w.timedOut)]
                for (result, n) in results {
                    registry.makeCounter(descriptor: captures, labels: l + [("result", result)]).increment(by: Int64(n))
                }
            }
        }
    }

    /// Sets the refresh gauges of `labels` (the final fit at the end of a run).
    public func setRefresh(_ hz: Double, expectedInterval: Int, labels: Labels) {
        lock.withLock {
            guard let s = series[labels] else { return }
            s.refresh.set(to: hz)
            s.rate.set(to: hz / Double(max(1, expectedInterval)))
        }
    }

    /// The exposition text.
    public func exposition() -> [UInt8] {
        var b: [UInt8] = []
        registry.emit(into: &b)
        return b
    }

    /// Writes the exposition to `path` in node_exporter's textfile-collector way: a temporary
    /// file in the same directory, then rename(2), so a scrape never reads half a file.
    public func writeTextfile(_ path: String) throws {
        let tmp = path + ".tmp.\(getpid())"
        let bytes = exposition()
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MetricsError("cannot write \(path): \(String(cString: strerror(errno)))") }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let why = String(cString: strerror(errno))
                close(fd); unlink(tmp)
                throw MetricsError("cannot write \(path): \(why)")
            }
            off += n
        }
        close(fd)
        guard rename(tmp, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(tmp)
            throw MetricsError("cannot rename \(tmp) to \(path): \(why)")
        }
    }
}

/// A metrics output failure (one line).
public struct MetricsError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ d: String) { description = d }

    /// This build has no HTTP server (built without the package trait `MetricsHTTP`).
    public static let httpUnavailable = MetricsError("this build has no HTTP server: built without the MetricsHTTP trait; use --metrics-textfile")

    /// The server could not listen on `address:port`.
    public static func listen(address: String, port: Int, _ why: String) -> MetricsError {
        MetricsError("cannot serve metrics on \(address.contains(":") ? "[\(address)]" : address):\(port): \(why)")
    }
}

/// What the metrics keep of one completed frame: a plain value, copied without allocating (see
/// ``MetricsFeed``).
public struct FrameSample: Sendable, Equatable {
    public var outcome: FrameOutcome = .onTime
    public var presentedTime: Nanoseconds = 0
    public var droppedRefreshes = 0
    public var hitch: Nanoseconds = 0
    public var interval: Nanoseconds = 0
    public var intervalRefreshes = 0
    public var cause: DropCause?
    /// The refresh (Hz) and the rate frames were meant to be shown at (Hz) when the frame completed.
    public var refreshHz = 0.0
    public var effectiveRateHz = 0.0

    public init() {}

    /// The sample of `r`.
    public init(_ r: FrameReport, refreshHz: Double, effectiveRateHz: Double) {
        outcome = r.outcome
        presentedTime = r.presentedTime
        droppedRefreshes = r.droppedRefreshes
        hitch = r.hitch
        interval = r.interval
        intervalRefreshes = r.intervalRefreshes
        cause = r.cause
        self.refreshHz = refreshHz
        self.effectiveRateHz = effectiveRateHz
    }

    /// True when the frame reached the screen.
    public var wasPresented: Bool { outcome == .onTime || outcome == .late }
}
