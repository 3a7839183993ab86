import CadenceCore

/// The command line's spellings of a run's scripted faults, `--inject-late FRAME:K[,…]` and
/// `--render-cost FROM-TO:MS[,…]`, parsed into `RunConfiguration` values. Here rather than in
/// the CLI so that the fuzz targets (tools/fuzz) reach the same parsers.
public enum RunSpec {
    /// A spec that does not parse: one line for the user, naming the flag.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// Parses `FRAME:K[,FRAME:K…]` (`RunConfiguration.injectLate`): FRAME ≥ 0, K 1 to
    /// `RunConfiguration.maxInjectedLateness`; a frame given twice keeps its last K.
    public static func injectLate(_ text: String) throws -> [Int: Int] {
        let maxK = RunConfiguration.maxInjectedLateness
        var out: [Int: Int] = [:]
        for item in text.split(separator: ",") {
            let p = item.split(separator: ":", omittingEmptySubsequences: false)
            guard p.count == 2, let f = Int(p[0]), let k = Int(p[1]), f >= 0, k >= 1, k <= maxK else {
                throw Invalid("--inject-late '\(item)' must be FRAME:K with FRAME ≥ 0 and K 1 to \(maxK)")
            }
            out[f] = k
        }
        if out.isEmpty { throw Invalid("--inject-late needs FRAME:K") }
        return out
    }

    /// Parses `FROM-TO:MS[,…]` (`RunConfiguration.renderCost`): `FROM-:MS` to the end,
    /// `FRAME:MS` one frame; MS 0 to 60,000.
    public static func renderCost(_ text: String) throws -> [RenderCost] {
        var out: [RenderCost] = []
        for item in text.split(separator: ",") {
            let p = item.split(separator: ":", omittingEmptySubsequences: false)
            let bad = Invalid("--render-cost '\(item)' must be FROM-TO:MS, FROM-:MS or FRAME:MS (frames ≥ 0, MS ≥ 0)")
            guard p.count == 2, let ms = Double(p[1]), ms.isFinite, ms >= 0, ms <= 60_000 else { throw bad }
            let span = p[0].split(separator: "-", omittingEmptySubsequences: false)
            guard let first = Int(span[0]), first >= 0, span.count <= 2 else { throw bad }
            var last: Int? = first
            if span.count == 2 {
                if span[1].isEmpty { last = nil } else {
                    guard let l = Int(span[1]), l >= first else { throw bad }
                    last = l
                }
            }
            out.append(RenderCost(first: first, last: last, costNs: Nanoseconds((ms * 1e6).rounded())))
        }
        if out.isEmpty { throw Invalid("--render-cost needs FROM-TO:MS") }
        return out
    }
}
