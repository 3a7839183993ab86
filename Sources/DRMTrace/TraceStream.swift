/// Trace text as it arrives (from `trace_pipe` or a saved `trace` file) into flips and vblanks:
/// splits lines across reads, parses them and feeds a ``FlipTracker``.
public struct TraceStream {
    public private(set) var tracker: FlipTracker
    /// Lines read, and those that carried a record Cadence uses.
    public private(set) var lines = 0
    public private(set) var records = 0
    /// Events the kernel dropped because the ring was full (`CPU:N [LOST M EVENTS]` lines).
    public private(set) var lostEvents = 0
    private var partial: [UInt8] = []
    /// A line longer than this is garbage; it is skipped whole.
    static let maxLine = 4096

    /// `sendProbe`: see ``FlipTracker/init(sendProbe:)``.
    public init(sendProbe: Bool? = nil) { tracker = FlipTracker(sendProbe: sendProbe) }

    /// Feeds raw bytes; appends the completed events to `out`.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, into out: inout [FlipTracker.Event]) {
        var start = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0A {
                if partial.isEmpty {
                    line(UnsafeRawBufferPointer(rebasing: bytes[start..<i]), into: &out)
                } else {
                    partial.append(contentsOf: bytes[start..<i])
                    let whole = partial
                    partial.removeAll(keepingCapacity: true)
                    whole.withUnsafeBytes { line($0, into: &out) }
                }
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count {
            if partial.count + (bytes.count - start) > Self.maxLine {
                partial.removeAll(keepingCapacity: true)   // garbage: drop until the next newline
                partial.append(0x20)
            } else {
                partial.append(contentsOf: bytes[start..<bytes.count])
            }
        }
    }

    /// The end of the input: a last line without a newline, then the flips still waiting.
    public mutating func finish(into out: inout [FlipTracker.Event]) {
        if !partial.isEmpty {
            let whole = partial
            partial.removeAll()
            whole.withUnsafeBytes { line($0, into: &out) }
        }
        tracker.finish(into: &out)
    }

    private mutating func line(_ b: UnsafeRawBufferPointer, into out: inout [FlipTracker.Event]) {
        guard !b.isEmpty, b[0] != UInt8(ascii: "#") else { return }
        lines += 1
        if let r = TraceLineParser.parse(b) {
            records += 1
            tracker.add(r, into: &out)
        } else if let n = Self.lost(b) {
            lostEvents += n
        }
    }

    /// M in "CPU:N [LOST M EVENTS]".
    static func lost(_ b: UnsafeRawBufferPointer) -> Int? {
        let marker = Array("[LOST ".utf8)
        guard b.count > marker.count else { return nil }
        var i = 0
        while i + marker.count <= b.count {
            var match = true
            for k in 0..<marker.count where b[i + k] != marker[k] { match = false; break }
            if match {
                var j = i + marker.count, v = 0, digits = 0
                while j < b.count, b[j] >= 0x30, b[j] <= 0x39, digits < 12 { v = v * 10 + Int(b[j] - 0x30); j += 1; digits += 1 }
                return digits > 0 ? v : nil
            }
            i += 1
        }
        return nil
    }
}
