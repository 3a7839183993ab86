import ArgumentParser
import CadenceMetrics

/// `--metrics-port`, `--metrics-address` and `--metrics-textfile`: the Prometheus outputs of
/// `run`, `validate` and `observe`.
struct MetricsOptions: ParsableArguments {
    @Option(help: "Serve Prometheus metrics at http://ADDRESS:PORT/metrics during the run.")
    var metricsPort: UInt16?
    @Option(help: "Address for --metrics-port (IPv4 or IPv6, e.g. 0.0.0.0 or ::1).")
    var metricsAddress = "127.0.0.1"
    @Option(help: "Write Prometheus metrics to FILE (node_exporter textfile format), atomically every 10 s and at the end.")
    var metricsTextfile: String?

    /// Fails at once (one line) when --metrics-port is asked of a build without HTTP.
    func checkAvailable() throws {
        if metricsPort != nil && !MetricsServer.isAvailable { throw CLIFailure(MetricsError.httpUnavailable.description) }
    }

    /// Serves `body()` at /metrics when --metrics-port is given (nil otherwise).
    func startServer(_ body: @escaping @Sendable () -> [UInt8]) throws -> MetricsServer? {
        guard let port = metricsPort else { return nil }
        try checkAvailable()
        return try MetricsServer(address: metricsAddress, port: Int(port), body: body)
    }
}
