import CadenceCore
import CadenceSession
import Foundation

/// What `cadence observe` prints without `--json`.
extension ObserveResult {
    func text(source: String) -> String {
        var lines = ["observe  \(String(format: "%.1f", durationSeconds)) s from \(source)"]
        for c in crtcs {
            let mode = c.modeRefreshHz.map { String(format: ", mode %.4f Hz", $0) } ?? ""
            lines.append("crtc \(c.crtc) (\(c.connector)): \(c.vblanks) vblanks, refresh \(String(format: "%.4f", c.refreshHz)) Hz measured\(mode)")
        }
        if noFlips { lines.append("no flips observed") }
        for c in clients {
            let s = c.summary
            var about = c.pid.map { ["pid \($0)"] } ?? []
            if c.file != "0" { about.append("name from \(c.nameSource)") }
            if c.master == true { about.append("DRM master") }
            let who = about.isEmpty ? c.client : "\(c.client) (\(about.joined(separator: ", ")))"
            lines.append("client \(who) on crtc \(c.crtc): \(s.presented) flips, expected every \(c.expectedRefreshes) refresh\(c.expectedRefreshes == 1 ? "" : "es") (\(String(format: "%.4f", s.effectiveRateHz)) Hz), measured rate \(String(format: "%.4f", s.measuredRateHz)) Hz")
            lines.append("  dropped refreshes \(s.droppedRefreshes), drop events \(s.dropEvents), hitch \(String(format: "%.2f", s.hitchTimeRatio)) ms/s" + (s.causesByName.isEmpty ? "" : ", causes " + s.causesByName.map { "\($0.cause.rawValue) \($0.frames)" }.joined(separator: ", ")))
            let units = s.intervalRefreshCounts.map { "\($0.key)×\($0.intervals)" }.joined(separator: " ")
            lines.append("  intervals (refreshes) \(units.isEmpty ? "none" : units); ms mean \(String(format: "%.3f", s.intervalMs.mean)) p99 \(String(format: "%.3f", s.intervalMs.p99)) max \(String(format: "%.3f", s.intervalMs.max))")
        }
        var cost = "trace: \(traceLines) lines, \(lostEvents) lost events, \(inexactFlips) flips without their vblank event, \(requestDeliveries) request deliveries, \(typedDeliveries) deliveries typed by the kernel\(sendProbeMismatch ? " (send probe disagreed with the deliveries: ignored)" : ""); cpu \(String(format: "%.3f", cpuSeconds)) s"
        if let c = cpuObservingSeconds, let us = cpuPerVBlankUs { cost += String(format: ", %.3f s observing (%.1f µs per vblank)", c, us) }
        lines.append(cost)
        for i in incompleteOutputs { lines.append("incomplete: \(i)") }
        return lines.joined(separator: "\n")
    }
}
