import CadenceCore
import CadenceMetrics

/// Prometheus metrics of a run (`--metrics-port`, `--metrics-textfile`): each frame is pushed
/// to the `MetricsFeed` without allocating or blocking; the feed counts, writes the textfile
/// and serves `/metrics` on threads of its own.
///
/// Failure rule: nothing stops during the run; at the end, a textfile that could not be
/// written, or frames the metrics thread could not keep up with, are each an incomplete
/// output (no line at once).
public final class MetricsSink: FrameSink {
    private let feed: MetricsFeed
    private let server: MetricsServer?
    private let textfile: String?
    private var context: SinkContext?
    private var nominalRefreshHz = 0.0
    /// The run's intended rate (the summary's effective rate), read again at each rate switch.
    private var intendedRateHz = 0.0

    /// Feeds `feed`, written to `textfile` (its path, for the failure) and served by `server`
    /// (stopped at the end).
    public init(feed: MetricsFeed, server: MetricsServer?, textfile: String?) {
        self.feed = feed
        self.server = server
        self.textfile = textfile
    }

    /// Starts counting frames for the series `labels` (the connector and CRTC).
    public func start(labels: FrameMetrics.Labels) throws { try feed.start(labels: labels) }

    /// Notes the display's refresh and the run's rate.
    public func open(_ context: SinkContext) {
        let backend = context.run.backend
        nominalRefreshHz = backend.refreshInterval > 0 ? 1e9 / backend.refreshInterval : 0
        intendedRateHz = context.run.intendedRateHz
        self.context = context
    }

    /// Pushes the frame with the measured refresh (the nominal one until it is known).
    public func frame(_ report: FrameReport) {
        feed.push(
            FrameSample(
                report, refreshHz: context?.measuredRefreshHz ?? nominalRefreshHz, effectiveRateHz: intendedRateHz))
    }

    /// Reads the run's new intended rate.
    public func rateSwitch(_ change: RateSwitch) {
        if let run = context?.run { intendedRateHz = run.intendedRateHz }
    }

    /// Sets the scanout counters (when the run verified its scanout), writes the textfile a
    /// last time and stops the server.
    public func close(_ summary: RunSummary) {
        if let v = summary.scanout { feed.setScanout(v) }
        if let e = feed.finish() {
            context?.fail(SinkFailure(incompleteOutput: "metrics textfile \(textfile ?? ""): \(e)", notice: nil))
        }
        if feed.lostSamples > 0 {
            context?.fail(
                SinkFailure(
                    incompleteOutput:
                        "metrics: \(feed.lostSamples) frames not counted (the metrics thread fell behind)", notice: nil)
            )
        }
        server?.stop()
    }

    /// Stops the server and the feed (the run never started).
    public func discard() {
        server?.stop()
        _ = feed.finish()
    }
}

extension SessionSinks {
    /// Adds the Prometheus outputs of a run, as a ``MetricsSink``: a textfile at `textfile`
    /// (written now, then every 10 s and at the end) and /metrics served at `address`:`port`;
    /// nothing when neither is given. Throws one line for a build without HTTP metrics when a
    /// port is given, an unwritable textfile or a port that cannot be bound.
    public func addMetrics(port: Int?, address: String, textfile: String?) throws {
        if port != nil && !MetricsServer.isAvailable { throw SessionError(MetricsError.httpUnavailable.description) }
        guard port != nil || textfile != nil else { return }
        let feed = MetricsFeed(textfile: textfile)
        try feed.writeTextfileNow()
        let server = try port.map { try MetricsServer(address: address, port: $0, body: { feed.exposition() }) }
        add(MetricsSink(feed: feed, server: server, textfile: textfile))
    }
}
