import ArgumentParser

/// `--metrics-port`, `--metrics-address` and `--metrics-textfile`: the Prometheus outputs of
/// `run`, `validate` and `observe`.
struct MetricsOptions: ParsableArguments {
    @Option(help: "Serve Prometheus metrics at http://ADDRESS:PORT/metrics during the run.")
    var metricsPort: UInt16?
    @Option(help: "Address for --metrics-port (IPv4 or IPv6, e.g. 0.0.0.0 or ::1).")
    var metricsAddress = "127.0.0.1"
    @Option(help: "Write Prometheus metrics to FILE (node_exporter textfile format), atomically every 10 s and at the end.")
    var metricsTextfile: String?
}
