extension String {
    /// The string as a JSON string literal, quotes included: `"` and `\` escaped, newline, tab
    /// and carriage return as `\n`, `\t`, `\r`, every other control character as `\u00XX`.
    /// The one quoting of the hand-written JSON lines (observe's log, the CLI's `--json`).
    public var jsonQuoted: String {
        var out = "\""
        for u in unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
