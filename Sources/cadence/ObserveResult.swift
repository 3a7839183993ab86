import CadenceCore

/// What `cadence observe` prints (`--json`: this structure; otherwise ``text(source:)``).
struct ObserveResult: Codable {
    struct CRTC: Codable {
        var crtc: Int
        var connector: String
        var vblanks: Int
        /// 1e9 / slope of the least-squares fit of vblank timestamp against sequence.
        var refreshHz: Double
        var modeRefreshHz: Double?
    }
    struct Client: Codable {
        var crtc: Int
        var connector: String
        /// The flipping process' command ("(kernel)" for commits no client asked an event for).
        var client: String
        var pid: Int?
        /// The drm_file, as the kernel's pointer in hex (identifies the client within a boot).
        var file: String
        /// Where `client` and `pid` come from: "debugfs" (the DRM debugfs `clients` file, matched
        /// by pid) or "trace" (the traced task's comm and pid).
        var nameSource: String
        /// Whether the client's file is DRM master (debugfs only).
        var master: Bool?
        /// The interval judged normal, in refreshes.
        var expectedRefreshes: Int
        /// The most refreshes one drop event dropped.
        var largestDropEvent: Int
        var summary: RunSummary
    }
    var durationSeconds = 0.0
    var crtcs: [CRTC] = []
    var clients: [Client] = []
    var traceLines = 0
    var lostEvents = 0
    var inexactFlips = 0
    /// Deliveries that answered vblank or CRTC-sequence requests (not flips).
    var requestDeliveries = 0
    /// Deliveries told apart by the event's own type (send probe); the rest were inferred.
    var typedDeliveries = 0
    var sendProbeMismatch = false
    /// CPU time of the whole process (start-up included).
    var cpuSeconds = 0.0
    /// CPU time spent in the observing loop (reading, parsing, accounting, outputs).
    var cpuObservingSeconds: Double?
    /// ``cpuObservingSeconds`` per traced vblank, µs.
    var cpuPerVBlankUs: Double?
    var incompleteOutputs: [String] = []

    var noFlips: Bool { clients.allSatisfy { $0.summary.presented == 0 } }

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
