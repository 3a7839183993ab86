import CadenceCore
import CadenceReport
import Foundation

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

    /// The criterion `max-frozen`: the longest time an observed CRTC's flips kept coming without
    /// changing the picture (first to last unchanged flip of a stretch), in seconds, against
    /// `limit`; failed when the content was not checked (`crtc` or its scanout nil).
    public static func frozen(_ crtc: ObserveResult.CRTC?, limit: Double) -> CriterionResult {
        guard let crtc, let v = crtc.scanout else {
            return CriterionResult(
                name: "max-frozen", passed: false, detail: "the content was not checked", value: .infinity)
        }
        guard let f = v.longestFrozen else {
            return CriterionResult(
                name: "max-frozen", passed: true,
                detail:
                    "every judged flip of \(v.frames) changed the picture (\(v.inexact) not judged; "
                    + "limit \(String(format: "%g", limit)) s)",
                value: 0)
        }
        let seconds = crtc.refreshHz > 0 ? Double(f.flippingRefreshes) / crtc.refreshHz : .infinity
        return CriterionResult(
            name: "max-frozen", passed: seconds <= limit,
            detail: "picture " + f.text(refreshHz: crtc.refreshHz)
                + " on crtc \(crtc.crtc) (\(crtc.connector)) (limit \(String(format: "%g", limit)) s)",
            value: seconds)
    }
}

extension FrozenContent {
    /// "frozen 8.116 s (487 refreshes from vblank 715), 3.966 s of it while 76 flips changed
    /// nothing" at `refreshHz`.
    public func text(refreshHz: Double) -> String {
        func s(_ r: Int) -> String { String(format: "%.3f s", refreshHz > 0 ? Double(r) / refreshHz : 0) }
        let from = "\(refreshes) refreshes from vblank \(fromSequence)\(sinceFirstLine ? ", the first line read" : "")"
        return
            "frozen \(s(refreshes)) (\(from)), \(s(flippingRefreshes)) of it while \(flips) flip\(flips == 1 ? "" : "s") changed nothing"
    }
}
