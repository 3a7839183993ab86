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

    /// `--inject-late` given once or more, each `[NAME=]FRAME:K[,[NAME=]FRAME:K…]`: the frames
    /// made late on every output, and those on named outputs only.
    public struct InjectLatePlan: Equatable, Sendable {
        /// Frame → K on every output (entries without a name).
        public var everyOutput: [Int: Int] = [:]
        /// Output name → (frame → K) on that output only.
        public var outputs: [String: [Int: Int]] = [:]
        /// The output names, in the order first given.
        public var names: [String] = []
        public init() {}

        /// The frames of one output: every output's, plus those of each name `names(_:)` says
        /// is this output. A frame given twice for it with different K is refused in one line.
        public func frames(of output: String, named isThisOutput: (String) -> Bool) throws -> [Int: Int] {
            var out = everyOutput
            var from: [Int: String] = [:]
            for f in everyOutput.keys { from[f] = "\(f):\(everyOutput[f]!)" }
            for name in names where isThisOutput(name) {
                for (f, k) in outputs[name]!.sorted(by: { $0.key < $1.key }) {
                    if let had = out[f], had != k {
                        throw Invalid("--inject-late: frame \(f) of \(output) is given twice, as \(from[f]!) and \(name)=\(f):\(k)")
                    }
                    out[f] = k
                    from[f] = from[f] ?? "\(name)=\(f):\(k)"
                }
            }
            return out
        }
    }

    /// Parses every `--inject-late` given: `[NAME=]FRAME:K[,…]` each. Inside one list, `NAME=`
    /// names the output of its entry and of the entries after it up to the next `NAME=`
    /// (`DP-1=100:2,250:3` makes both late on DP-1; `DP-1=100:2,eDP-1=50:1` one frame on each);
    /// entries before any name are on every output. A frame given twice for the same output in
    /// one list keeps its last K (as ``injectLate(_:)``); the same frame for the same output
    /// from two lists with different K is refused in one line, as is an empty name.
    public static func injectLate(_ specs: [String]) throws -> InjectLatePlan {
        var plan = InjectLatePlan()
        for spec in specs {
            var target: String? = nil
            var groups: [(name: String?, text: String)] = []
            for item in spec.split(separator: ",", omittingEmptySubsequences: false) {
                var body = Substring(item)
                if let eq = item.firstIndex(of: "=") {
                    let name = String(item[..<eq])
                    guard !name.isEmpty else { throw Invalid("--inject-late '\(item)': an empty output name before '='") }
                    target = name
                    body = item[item.index(after: eq)...]
                }
                if let last = groups.last, last.name == target {
                    groups[groups.count - 1].text += "," + body
                } else {
                    groups.append((target, String(body)))
                }
            }
            var lists: [String?: [Int: Int]] = [:]
            var order: [String?] = []
            for g in groups {
                if !order.contains(g.name) { order.append(g.name) }
                lists[g.name, default: [:]].merge(try injectLate(g.text)) { _, new in new }
            }
            for name in order {
                let frames = lists[name]!
                var had = name.map { plan.outputs[$0] ?? [:] } ?? plan.everyOutput
                for (f, k) in frames.sorted(by: { $0.key < $1.key }) {
                    if let old = had[f], old != k {
                        let who = name.map { "\($0)=" } ?? ""
                        throw Invalid("--inject-late: \(who)\(f) is given twice, with K \(old) and \(k)")
                    }
                    had[f] = k
                }
                if let n = name {
                    if plan.outputs[n] == nil { plan.names.append(n) }
                    plan.outputs[n] = had
                } else {
                    plan.everyOutput = had
                }
            }
        }
        return plan
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
