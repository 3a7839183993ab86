import Foundation

/// A JSON value with ordered object keys, rendered compactly: the hand-written JSON the
/// command line prints (`list --json`, `edid --json`, `measure --json`), whose keys come in the
/// order they are given rather than sorted.
public enum JSON: Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer.
    case int(Int)
    /// A number rounded to `decimals` decimals, written without a fraction when it is whole;
    /// a non-finite number is `null`.
    case number(Double, decimals: Int)
    /// A string, quoted as `String.jsonQuoted` quotes it.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object whose keys are written in this order.
    case object([(String, JSON)])
    /// A value encoded by JSONEncoder (sorted keys), rendered as it is.
    case raw(String)

    /// `value` as JSONEncoder writes it (sorted keys); null when it cannot be encoded.
    public static func encoded(_ value: some Encodable) -> JSON {
        guard let text = try? sortedText(value) else { return .null }
        return .raw(text)
    }

    /// `value` encoded by JSONEncoder with its keys sorted (`pretty`: indented, on several
    /// lines): the JSON the command line prints of its results and writes to summary files.
    public static func sortedText(_ value: some Encodable, pretty: Bool = false) throws -> String {
        String(decoding: try sortedData(value, pretty: pretty), as: UTF8.self)
    }

    /// `value` encoded by JSONEncoder with its keys sorted, as bytes.
    public static func sortedData(_ value: some Encodable, pretty: Bool = false) throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return try e.encode(value)
    }

    /// The value as compact JSON text (no spaces, no newline).
    public var rendered: String {
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
        case .string(let s): return JSON.quote(s)
        case .array(let a): return "[" + a.map(\.rendered).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.map { JSON.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        case .raw(let text): return text
        }
    }

    /// `s` as a JSON string literal, quotes included.
    public static func quote(_ s: String) -> String { s.jsonQuoted }

    /// `s` as a string, or null.
    public static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }

    /// `v` as an integer, or null.
    public static func optional(_ v: Int?) -> JSON { v.map(JSON.int) ?? .null }
}
