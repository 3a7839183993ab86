import CadenceCore
import CadenceReport
import Foundation

/// The run's summary as printed: text lines, or one JSON object with `--json`.
extension RunCommand {
    func printSummary(_ s: RunSummary) throws {
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            print(String(decoding: try enc.encode(s), as: UTF8.self))
            return
        }
        let f = { (v: Double) in String(format: "%.3f", v) }
        // Under VRR the refresh follows the frames: say the range, not its maximum alone.
        let refresh =
            s.vrrRangeHz.map { r in "refresh VRR \(f(r.first ?? 0))–\(f(r.last ?? 0)) Hz" }
            ?? "refresh \(f(s.refreshHz)) Hz"
        print(
            "backend           \(JUnitReport.displayName(s.backend))  \(refresh)  effective \(f(s.effectiveRateHz)) Hz  latency \(s.latency)"
        )
        print(
            "frames            \(s.frames)  presented \(s.presented) (on time \(s.onTime), late \(s.late))  discarded \(s.discarded)  failed \(s.failed)  unconfirmed \(s.unconfirmed)"
        )
        print(
            "dropped           \(s.droppedRefreshes) refreshes in \(s.dropEvents) events  hitch \(f(s.hitchTimeRatio)) ms/s"
        )
        if let e = s.onTimeErrorUs {
            print("on-time error µs  p50 \(f(e.p50))  p99 \(f(e.p99))  max \(f(e.max))")
        }
        if let n = s.rateSwitches { print("rate switches     \(n)") }
        print(
            "interval ms       mean \(f(s.intervalMs.mean))  stddev \(f(s.intervalMs.stddev))  p50 \(f(s.intervalMs.p50))  p99 \(f(s.intervalMs.p99))  max \(f(s.intervalMs.max))"
        )
        let units = s.intervalRefreshCounts
        // Under VRR a "refresh" here is the range's shortest interval (1/maximum), not a vblank.
        let unit = s.vrrRangeHz == nil ? "" : "(of \(String(format: "%.3f", 1000 / s.refreshHz)) ms) "
        print("interval refr.    " + unit + units.map { "\($0.key)×: \($0.intervals)" }.joined(separator: "  "))
        let causes = s.causesByName
        if !causes.isEmpty {
            print("causes            " + causes.map { "\($0.cause.rawValue) \($0.frames)" }.joined(separator: "  "))
        }
        if let n = s.sessionGaps, let t = s.sessionGapSeconds {
            print("session gaps      \(n)  (\(f(t)) s away; no drops counted inside)")
        }
        print("end               \(s.endReason)  (\(f(s.durationSeconds)) s shown, \(f(s.measuredRateHz)) Hz measured)")
        if let v = s.scanout { print("scanout           " + Self.scanoutLine(v)) }
        for o in s.incompleteOutputs ?? [] { print("INCOMPLETE        \(o)") }
    }
}
