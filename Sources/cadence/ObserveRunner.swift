import CadenceSession
import Foundation

/// What one observation needs, whichever command asked for it (`observe`, `validate --observe`):
/// CadenceSession's `Observation`, with the CLI's options and stderr lines.
extension Observation {
    /// `--metrics-port`, `--metrics-address`, `--metrics-textfile`.
    var metrics: MetricsOptions {
        get {
            var m = MetricsOptions()
            m.metricsPort = metricsPort.map { UInt16($0) }
            m.metricsAddress = metricsAddress
            m.metricsTextfile = metricsTextfile
            return m
        }
        set {
            metricsPort = newValue.metricsPort.map { Int($0) }
            metricsAddress = newValue.metricsAddress
            metricsTextfile = newValue.metricsTextfile
        }
    }

    /// The live status line on stderr (once a second, run's format) for ``statusClient``; nil:
    /// the one with the most flips.
    var statusLine: Bool {
        get { onStatus != nil }
        set { onStatus = newValue ? { StandardStreams.errorLine(StatusSink.statusLine($0)) } : nil }
    }

    /// An observation whose notices are stderr lines after "cadence observe: ".
    static func onStandardError() -> Observation {
        var o = Observation()
        o.onNotice = { StandardStreams.errorLine("cadence observe: " + $0) }
        return o
    }
}
