import CadenceCore
import CadenceReport
import DRM
import Foundation
import KMSDisplay

/// `cadence run`'s report of what its outputs did (an ``OutputGroupRun``'s results): for one
/// output its summary, as text lines or one JSON object; for several, each output's line and
/// summary and the total, or one JSON object `{"outputs": […], "total": {…}}`.
///
///     let report = RunReport(try group.run())
///     print(report.several ? try report.json() : report.text())
public struct RunReport {
    /// One output run.
    public struct Output {
        /// Its name: its connector, or `cardN-NAME` when the outputs are on several cards (for
        /// one output, its connector or the display's name).
        public let name: String
        /// What it did.
        public let summary: RunSummary
        /// Its display, when it is a KMS output.
        public let display: KMSDisplay?

        /// The output's line in summaries: its name, CRTC and mode ("" without a KMS display).
        public var line: String {
            guard let d = display else { return "" }
            let m = d.output.mode
            return
                "\(name)  CRTC \(d.output.crtc.rawValue) (index \(d.output.crtcIndex))  \(m.hdisplay)x\(m.vdisplay)@\(ModeInfo.formatHz(m.refreshHz))"
        }

        /// Its `output` line among several: the name, CRTC and mode.
        public var headerLine: String { "output            \(line)" }

        /// Its `--json` object among several: its summary plus `connector`, `output`, `card`,
        /// `crtc` and `crtcIndex`.
        public func jsonObject() throws -> [String: Any] {
            var o = try JSONSerialization.jsonObject(with: JSON.sortedData(summary)) as? [String: Any] ?? [:]
            if let d = display {
                o["connector"] = d.output.connector.name
                o["output"] = name
                o["card"] = d.device.path
                o["crtc"] = Int(d.output.crtc.rawValue)
                o["crtcIndex"] = d.output.crtcIndex
            }
            return o
        }
    }

    /// The outputs, in the order run (for several, only the KMS ones).
    public let outputs: [Output]
    /// True when the run was over several outputs at once (each has a name).
    public let several: Bool

    /// The report of `results`.
    public init(_ results: [OutputGroupRun.Result]) {
        several = results.first?.name != nil
        if several {
            outputs = results.compactMap { r in
                (r.display as? KMSDisplay).map {
                    Output(name: r.name?.name ?? $0.output.connector.name, summary: r.summary, display: $0)
                }
            }
        } else {
            outputs = results.map {
                Output(name: $0.display.name, summary: $0.summary, display: $0.display as? KMSDisplay)
            }
        }
    }

    /// The counts of every output added up (`RunSummary.total(_:)`).
    public var total: [String: Int] { RunSummary.total(outputs.map(\.summary)) }

    /// The text: one output's summary lines; for several, per output its `output` line and
    /// summary, a blank line between them, then a blank line and the total.
    public func text() -> String {
        guard several else { return outputs.map { Self.summaryText($0.summary) }.joined(separator: "\n") }
        var lines: [String] = []
        for (i, o) in outputs.enumerated() {
            if i > 0 { lines.append("") }
            lines.append(o.headerLine)
            lines.append(Self.summaryText(o.summary))
        }
        let t = total
        lines.append("")
        lines.append(
            "total             \(outputs.count) outputs  frames \(t["frames"] ?? 0)  presented \(t["presented"] ?? 0)  discarded \(t["discarded"] ?? 0)  dropped \(t["droppedRefreshes"] ?? 0) refreshes in \(t["dropEvents"] ?? 0) events"
        )
        return lines.joined(separator: "\n")
    }

    /// The `--json` text: one output's summary object; for several
    /// `{"outputs": [summary + connector, output, card, crtc, crtcIndex], "total": {…}}`
    /// (keys sorted).
    public func json() throws -> String {
        guard several else { return try outputs.map { try Self.summaryJSON($0.summary) }.joined(separator: "\n") }
        let doc: [String: Any] = ["outputs": try outputs.map { try $0.jsonObject() }, "total": total]
        return String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The stderr line of each output unplugged mid-run.
    public var unpluggedLines: [String] {
        outputs.compactMap { o in
            guard case .disconnected = o.summary.end else { return nil }
            return several
                ? "cadence run: \(o.name) was unplugged mid-run (\(o.summary.endReason))"
                : "cadence run: the output was unplugged mid-run (\(o.summary.endReason))"
        }
    }

    /// True when a display failed mid-run (lost, unplugged): exit status 1.
    public var displayFailed: Bool { outputs.contains { $0.summary.end.isDisplayFailure } }

    /// Every output's files that stopped being written (nil when none did).
    public var incompleteOutputs: [String]? {
        let all = outputs.flatMap { $0.summary.incompleteOutputs ?? [] }
        return all.isEmpty ? nil : all
    }

    /// `summary` as one JSON object (keys sorted).
    public static func summaryJSON(_ summary: RunSummary) throws -> String { try JSON.sortedText(summary) }

    /// `summary` as ``summaryJSON(_:)`` (with `json`) or ``summaryText(_:)``.
    public static func summary(_ summary: RunSummary, json: Bool) throws -> String {
        json ? try summaryJSON(summary) : summaryText(summary)
    }

    /// `summary` as text lines: backend and refresh, frames, drops, on-time error, rate
    /// switches, intervals, causes, session gaps, the end, the scanout check and the incomplete
    /// outputs.
    public static func summaryText(_ s: RunSummary) -> String {
        let f = { (v: Double) in String(format: "%.3f", v) }
        var lines: [String] = []
        // Under VRR the refresh follows the frames: say the range, not its maximum alone.
        let refresh =
            s.vrrRangeHz.map { r in "refresh VRR \(f(r.first ?? 0))–\(f(r.last ?? 0)) Hz" }
            ?? "refresh \(f(s.refreshHz)) Hz"
        lines.append(
            "backend           \(JUnitReport.displayName(s.backend))  \(refresh)  effective \(f(s.effectiveRateHz)) Hz  latency \(s.latency)"
        )
        lines.append(
            "frames            \(s.frames)  presented \(s.presented) (on time \(s.onTime), late \(s.late))  discarded \(s.discarded)  failed \(s.failed)  unconfirmed \(s.unconfirmed)"
        )
        lines.append(droppedLine(s))
        if let e = s.onTimeErrorUs {
            lines.append("on-time error µs  p50 \(f(e.p50))  p99 \(f(e.p99))  max \(f(e.max))")
        }
        if let n = s.rateSwitches { lines.append("rate switches     \(n)") }
        let i = s.intervalMs
        lines.append(
            "interval ms       mean \(f(i.mean))  stddev \(f(i.stddev))  p50 \(f(i.p50))  p99 \(f(i.p99))  max \(f(i.max))"
        )
        // Under VRR a "refresh" here is the range's shortest interval (1/maximum), not a vblank.
        let unit = s.vrrRangeHz == nil ? "" : "(of \(String(format: "%.3f", 1000 / s.refreshHz)) ms) "
        lines.append(
            "interval refr.    " + unit
                + s.intervalRefreshCounts.map { "\($0.key)×: \($0.intervals)" }.joined(separator: "  "))
        if let c = causesLine(s) { lines.append(c) }
        if let n = s.sessionGaps, let t = s.sessionGapSeconds {
            lines.append("session gaps      \(n)  (\(f(t)) s away; no drops counted inside)")
        }
        lines.append(
            "end               \(s.endReason)  (\(f(s.durationSeconds)) s shown, \(f(s.measuredRateHz)) Hz measured)")
        if let v = s.scanout { lines.append("scanout           " + scanoutLine(v)) }
        for o in s.incompleteOutputs ?? [] { lines.append("INCOMPLETE        \(o)") }
        return lines.joined(separator: "\n")
    }

    /// The summary's `dropped` line: dropped refreshes, drop events, hitch time ratio.
    public static func droppedLine(_ s: RunSummary) -> String {
        "dropped           \(s.droppedRefreshes) refreshes in \(s.dropEvents) events  hitch "
            + String(format: "%.3f", s.hitchTimeRatio) + " ms/s"
    }

    /// The summary's `causes` line (nil when nothing was dropped): frames per cause.
    public static func causesLine(_ s: RunSummary) -> String? {
        let causes = s.causesByName
        guard !causes.isEmpty else { return nil }
        return "causes            " + causes.map { "\($0.cause.rawValue) \($0.frames)" }.joined(separator: "  ")
    }

    /// The writeback part of the scanout line: captures, decoded, equal, the mismatched
    /// frames, skipped and timed-out captures, and the cost of a capture.
    public static func writebackText(_ w: WritebackSummary) -> String {
        if let m = w.onMismatch { return onMismatchText(w, m) }
        var s = "writeback: captures \(w.captures), decoded \(w.decoded), equal \(w.equal)"
        if !w.mismatchedFrames.isEmpty {
            s += " (mismatched frames " + w.mismatchedFrames.map(String.init).joined(separator: ",") + ")"
        }
        if w.skipped > 0 { s += ", skipped \(w.skipped)" }
        if w.timedOut > 0 { s += ", timed out \(w.timedOut)" }
        if w.captures > 0 { s += String(format: ", read %.1f µs/capture", w.readMicroseconds / Double(w.captures)) }
        return s
    }

    /// The writeback part when capturing on a mismatch: jobs attached, captures read (each
    /// flagged frame with the frame its capture shows), buffers recycled unread.
    private static func onMismatchText(_ w: WritebackSummary, _ m: OnMismatchCaptures) -> String {
        var s = "writeback on-mismatch: jobs \(m.jobs), captures \(w.captures)"
        if !m.flagged.isEmpty { s += " (" + m.flagged.map(\.description).joined(separator: "; ") + ")" }
        s += ", recycled unread \(m.recycledUnread)"
        if m.recycledUnjudged > 0 { s += " (\(m.recycledUnjudged) before their verdict)" }
        if m.withoutJob > 0 { s += ", flips without a job \(m.withoutJob)" }
        if w.skipped > 0 { s += ", flagged too late \(w.skipped)" }
        if w.timedOut > 0 { s += ", timed out \(w.timedOut)" }
        if w.captures > 0 { s += String(format: ", read %.1f µs/capture", w.readMicroseconds / Double(w.captures)) }
        return s
    }

    /// The summary's scanout line: the CRC verdict (frames verified, mismatches, inexact
    /// frames, the refreshes repeated) and the cost of reading the lines, then the writeback
    /// captures.
    public static func scanoutLine(_ v: ScanoutSummary) -> String {
        guard v.crcRan || v.writeback == nil else { return writebackText(v.writeback!) }
        var line = v.crcVerdict
        if (v.reads ?? 0) > 0, let us = v.readMicroseconds {
            line += String(format: "  read %.1f µs/vblank", v.lines > 0 ? us / Double(v.lines) : 0)
        }
        if let f = v.failure { line += "  (reading stopped: \(f))" }
        if let w = v.writeback { line += "  " + writebackText(w) }
        return line
    }
}
