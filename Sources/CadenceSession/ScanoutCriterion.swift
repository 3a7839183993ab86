import CadenceCore
import CadenceReport

extension CriterionResult {
    /// The criterion `max-scanout-mismatches`: the run's scanout mismatches against `limit`
    /// (whole run only: windows and the warm-up do not split the CRC verdict); failed when the
    /// scanout was not verified (`summary` nil).
    public static func scanoutMismatches(_ summary: ScanoutSummary?, limit: Int) -> CriterionResult {
        guard let v = summary else {
            return CriterionResult(
                name: "max-scanout-mismatches", passed: false, detail: "the scanout was not verified", value: .infinity)
        }
        var detail = "scanout mismatches \(v.mismatches) (stale \(v.stale)"
        if !v.staleFrames.isEmpty { detail += " at frame " + v.staleFrames.map(String.init).joined(separator: ",") }
        detail += ", changes without flip \(v.changesWithoutFlip)), inexact frames \(v.inexact) (limit \(limit))"
        return CriterionResult(
            name: "max-scanout-mismatches", passed: v.mismatches <= limit, detail: detail, value: Double(v.mismatches))
    }
}
