import CadenceCore
import Foundation

extension LogAnalysis {
    /// The fields in which a replayed summary differs from the recorded one, as
    /// ``differences(_:_:)``, except time statistics within a nanosecond a frame.
    ///
    /// A frame's target time is predicted from whichever vblank the pacer knew last, rounded
    /// to the nanosecond; a replay can know another vblank at that moment and predict the same
    /// target a nanosecond apart (every vblank, outcome and dropped refresh the same). So the
    /// on-time error and interval statistics compare within 1 ns, the hitch time ratio within
    /// a relative 10⁻⁶ (1 ns of hitch a drop event over a run of a second or more), and so does
    /// the measured rate where it is the mean interval's inverse (a run with session gaps: the
    /// last digit of a sum of doubles). Kernel timestamps carry microseconds. Every count, cause
    /// and vblank compares exactly.
    public static func replayDifferences(_ replayed: RunSummary, _ recorded: RunSummary) -> [String] {
        differences(replayed, recorded, tolerance: nanosecondTolerance)
    }

    /// Per summary field: (absolute, relative) tolerance of a nanosecond a frame.
    private static let nanosecondTolerance: [String: (Double, Double)] = [
        "onTimeErrorUs": (0.001, 0), "intervalUs": (0.001, 0), "intervalMs": (1e-6, 0), "hitchTimeRatio": (0, 1e-6),
        "measuredRateHz": (0, 1e-6)
    ]

    static func withinTolerance(_ a: Any, _ b: Any, _ t: (Double, Double)) -> Bool {
        if let x = a as? [String: Any], let y = b as? [String: Any] {
            return Set(x.keys) == Set(y.keys) && x.keys.allSatisfy { withinTolerance(x[$0]!, y[$0]!, t) }
        }
        guard let x = (a as? NSNumber)?.doubleValue, let y = (b as? NSNumber)?.doubleValue else { return false }
        return abs(x - y) <= t.0 + t.1 * max(abs(x), abs(y))
    }
}
