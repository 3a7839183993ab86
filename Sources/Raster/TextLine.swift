/// A fixed-capacity line of ASCII text built without heap allocation (for overlays drawn
/// every frame): append literals, integers and fixed-point decimals, then draw it.
public struct TextLine: Sendable {
    /// The most bytes a line holds; further appends are cut off.
    public static let capacity = 64
    @usableFromInline var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Bytes used.
    public private(set) var count = 0

    public init() {}

    /// A line holding `literal`.
    public init(_ literal: StaticString) { append(literal) }

    /// Appends one byte (dropped when full).
    public mutating func append(byte: UInt8) {
        guard count < Self.capacity else { return }
        let i = count
        withUnsafeMutableBytes(of: &storage) { $0[i] = byte }
        count += 1
    }

    /// Appends an ASCII literal.
    public mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { for b in $0 { append(byte: b) } }
    }

    /// Appends a decimal integer.
    public mutating func append(_ value: Int) {
        if value < 0 { append(byte: UInt8(ascii: "-")) }
        var v = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
        }
        withUnsafeBytes(of: digits) { d in
            for i in stride(from: n - 1, through: 0, by: -1) { append(byte: d[i]) }
        }
    }

    /// Appends `value` rounded to `fractionDigits` decimals (0...6); non-finite values as "-".
    public mutating func append(_ value: Double, fractionDigits: Int) {
        guard value.isFinite, abs(value) < 1e15 else {
            append(byte: UInt8(ascii: "-"))
            return
        }
        let digits = min(max(fractionDigits, 0), 6)
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        if value < 0 && scaled != 0 { append(byte: UInt8(ascii: "-")) }
        append(scaled / scale)
        if digits > 0 {
            append(byte: UInt8(ascii: "."))
            var frac = scaled % scale
            var div = scale / 10
            while div > 0 {
                append(byte: UInt8(ascii: "0") + UInt8(frac / div))
                frac %= div
                div /= 10
            }
        }
    }

    /// Calls `body` with the line's bytes.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }

    /// The line as a `String` (allocates; for tests and logs).
    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }
}

extension Canvas {
    /// Draws a ``TextLine``; see ``drawText(_:x:y:scale:_:)``.
    @discardableResult
    public func drawText(_ line: TextLine, x: Int, y: Int, scale: Int = 1, _ color: Color) -> Int {
        line.withBytes { drawText(bytes: $0, x: x, y: y, scale: scale, color) }
    }
}
