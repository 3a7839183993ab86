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

extension ObserveResult {
    /// One line saying which client was picked and why.
    func pickNote(_ c: Client, command: String?) -> String {
        let who = "\(c.client) (pid \(c.pid.map(String.init) ?? "?"), \(c.nameSource == "debugfs" ? "name from debugfs" : "name from the trace"), crtc \(c.crtc) \(c.connector))"
        let others = clients.filter { $0.summary.presented > 0 }.count - 1
        if command != nil { return "client            \(who): \(c.summary.presented) flips, named by --client" }
        return "client            \(who): \(c.summary.presented) flips, the most of \(others + 1) client\(others == 0 ? "" : "s") flipping"
    }
}
