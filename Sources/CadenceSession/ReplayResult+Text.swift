import CadenceCore
import CadenceReport
import Foundation

/// What `cadence replay` prints: the replayed summary and whether it equals the recorded one.
extension ReplayResult {
    /// The lines `cadence replay` prints (each ends in a newline): what was replayed, the
    /// replayed frames, drops, intervals and causes, whether the summary equals the recorded
    /// one (and the differences), and the divergences when there were any.
    public var text: String {
        let s = replayed
        let f = { (v: Double) in String(format: "%.3f", v) }
        var lines = [
            "replayed          \(log?.frameCount ?? 0) logged frames of a \(log?.header?.backend ?? "?") run at \(f(s.refreshHz)) Hz"
        ]
        if let n = note { lines.append("file              \(n)") }
        lines.append(
            "frames            \(s.frames)  presented \(s.presented) (on time \(s.onTime), late \(s.late))  discarded \(s.discarded)"
        )
        lines.append(RunReport.droppedLine(s))
        lines.append(
            "interval ms       mean \(f(s.intervalMs.mean))  p50 \(f(s.intervalMs.p50))  p99 \(f(s.intervalMs.p99))  max \(f(s.intervalMs.max))"
        )
        if let c = RunReport.causesLine(s) { lines.append(c) }
        lines.append(
            isEqual
                ? "summary           equals the recorded one"
                : "summary           DIFFERS from the recorded one: " + differences.joined(separator: "; "))
        if divergences > 0 { lines.append("divergences       \(divergences) frames could not follow the recording") }
        return lines.map { $0 + "\n" }.joined()
    }

    /// `report` as `cadence replay --json` prints it: one line, keys sorted; throws the
    /// encoder's error.
    public func json() throws -> String { try JSON.sortedText(report) }
}
