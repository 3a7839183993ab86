import Foundation

/// A JSON value with ordered object keys, rendered compactly: `measure --json`'s objects,
/// whose keys keep the order they were written in.
enum MeasureReportJSON {
    case null
    case bool(Bool)
    case int(Int)
    case number(Double, decimals: Int)
    case string(String)
    case array([MeasureReportJSON])
    case object([(String, MeasureReportJSON)])
    /// A value encoded by JSONEncoder (sorted keys), rendered as it is.
    case raw(String)

    /// `value` as JSONEncoder writes it (sorted keys); null when it cannot be encoded.
    static func encoded(_ value: some Encodable) -> MeasureReportJSON {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        guard let d = try? e.encode(value) else { return .null }
        return .raw(String(decoding: d, as: UTF8.self))
    }

    /// The compact text: numbers rounded to their decimals (whole ones without a fraction),
    /// non-finite numbers as null.
    var rendered: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .number(let d, let decimals):
            guard d.isFinite else { return "null" }
            var scale = 1.0
            for _ in 0..<decimals { scale *= 10 }
            let r = (d * scale).rounded() / scale
            if r == r.rounded(), abs(r) < 1e15 { return String(Int(r)) }
            return "\(r)"
        case .string(let s): return s.jsonQuoted
        case .array(let a): return "[" + a.map(\.rendered).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.map { $0.0.jsonQuoted + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        case .raw(let text): return text
        }
    }
}

extension String {
    /// `value` with four decimals (`measure`'s numbers).
    init(measureFormat4 value: Double) {
        guard value.isFinite else {
            self = "\(value)"
            return
        }
        let scaled = (abs(value) * 10000).rounded()
        let whole = Int(scaled / 10000)
        var frac = String(Int(scaled - Double(whole) * 10000))
        while frac.count < 4 { frac = "0" + frac }
        self = (value < 0 ? "-" : "") + "\(whole).\(frac)"
    }
}
