import CadenceCore
import Foundation

/// What `cadence observe` prints without `--json`.
extension ObserveResult {
    /// The content check of a CRTC's flips: how many changed the picture, how many changed
    /// nothing, changes without a flip, the flips not judged, and the longest frozen stretch.
    private static func contentLine(_ v: ScanoutSummary, refreshHz: Double) -> String {
        var line =
            "content (crc \(v.source ?? "auto")): \(v.frames) flips, \(v.verified) changed the picture, \(v.stale) changed nothing"
        line +=
            ", \(v.changesWithoutFlip) changes without a flip, \(v.inexact) not judged (missing lines \(v.missingLines), catch-up \(v.catchUpLines))"
        if let f = v.longestFrozen {
            line += "; " + f.text(refreshHz: refreshHz)
        } else {
            line += "; never frozen"
        }
        if let reads = v.reads, reads > 0, let us = v.readMicroseconds, v.lines > 0 {
            line += String(format: "; read %.1f µs/vblank", us / Double(v.lines))
        }
        return line
    }

    /// The summary `cadence observe` prints: the duration and where the flips came from, each
    /// CRTC with its content check, each client's flips, drops and intervals, and the trace's
    /// cost (no newline at the end).
    public func text(source: String) -> String {
        var lines = ["observe  \(String(format: "%.1f", durationSeconds)) s from \(source)"]
        for c in crtcs {
            let mode = c.modeRefreshHz.map { String(format: ", mode %.4f Hz", $0) } ?? ""
            lines.append(
                "crtc \(c.crtc) (\(c.connector)): \(c.vblanks) vblanks, refresh \(String(format: "%.4f", c.refreshHz)) Hz measured\(mode)"
            )
            if let v = c.scanout { lines.append("  " + Self.contentLine(v, refreshHz: c.refreshHz)) }
        }
        if noFlips { lines.append("no flips observed") }
        for c in clients {
            let s = c.summary
            var about = c.pid.map { ["pid \($0)"] } ?? []
            if c.file != "0" { about.append("name from \(c.nameSource)") }
            if c.master == true { about.append("DRM master") }
            let who = about.isEmpty ? c.client : "\(c.client) (\(about.joined(separator: ", ")))"
            lines.append(
                "client \(who) on crtc \(c.crtc): \(s.presented) flips, expected every \(c.expectedRefreshes) refresh\(c.expectedRefreshes == 1 ? "" : "es") (\(String(format: "%.4f", s.effectiveRateHz)) Hz), measured rate \(String(format: "%.4f", s.measuredRateHz)) Hz"
            )
            lines.append(
                "  dropped refreshes \(s.droppedRefreshes), drop events \(s.dropEvents), hitch \(String(format: "%.2f", s.hitchTimeRatio)) ms/s"
                    + (s.causesByName.isEmpty
                        ? ""
                        : ", causes "
                            + s.causesByName.map { "\($0.cause.rawValue) \($0.frames)" }.joined(separator: ", ")))
            let units = s.intervalRefreshCounts.map { "\($0.key)×\($0.intervals)" }.joined(separator: " ")
            lines.append(
                "  intervals (refreshes) \(units.isEmpty ? "none" : units); ms mean \(String(format: "%.3f", s.intervalMs.mean)) p99 \(String(format: "%.3f", s.intervalMs.p99)) max \(String(format: "%.3f", s.intervalMs.max))"
            )
        }
        var cost =
            "trace: \(traceLines) lines, \(lostEvents) lost events, \(inexactFlips) flips without their vblank event, \(requestDeliveries) request deliveries, \(typedDeliveries) deliveries typed by the kernel\(sendProbeMismatch ? " (send probe disagreed with the deliveries: ignored)" : ""); cpu \(String(format: "%.3f", cpuSeconds)) s"
        if let c = cpuObservingSeconds, let us = cpuPerVBlankUs {
            cost += String(format: ", %.3f s observing (%.1f µs per vblank)", c, us)
        }
        lines.append(cost)
        for i in incompleteOutputs { lines.append("incomplete: \(i)") }
        return lines.joined(separator: "\n")
    }

    /// One line saying which client was picked and why (`command`: the client the user named).
    public func pickNote(_ c: Client, command: String?) -> String {
        let who =
            "\(c.client) (pid \(c.pid.map(String.init) ?? "?"), \(c.nameSource == "debugfs" ? "name from debugfs" : "name from the trace"), crtc \(c.crtc) \(c.connector))"
        let others = clients.filter { $0.summary.presented > 0 }.count - 1
        if command != nil { return "client            \(who): \(c.summary.presented) flips, named by --client" }
        return
            "client            \(who): \(c.summary.presented) flips, the most of \(others + 1) client\(others == 0 ? "" : "s") flipping"
    }

    /// One line per CRTC of ``frozenCRTCs``: its stale flips and its longest frozen stretch.
    public var frozenLines: [String] {
        frozenCRTCs.map { c in
            let what = c.scanout!.longestFrozen!.text(refreshHz: c.refreshHz)
            return "crtc \(c.crtc) (\(c.connector)): \(c.scanout!.stale) flips changed nothing; \(what)"
        }
    }

    /// The result as `cadence observe --json` prints it: pretty-printed, keys sorted; throws
    /// the encoder's error.
    public func json() throws -> String { try JSON.sortedText(self, pretty: true) }
}
