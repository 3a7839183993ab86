import CadenceCore

extension FrameRecord {
    /// Decodes one frame line in the shape ``RunLogWriter`` writes it, without `JSONDecoder`:
    /// nil when the line is anything else, and then the caller decodes it as before.
    ///
    /// The shape: one JSON object without whitespace, the frame record's keys (in any order,
    /// each at most once, the optional ones present or absent, never `null`), integers written
    /// as plain integers within Int64, rates as plain decimals without an exponent, and
    /// strings of printable ASCII without escapes. Everything this accepts, `JSONDecoder`
    /// decodes to the same record; everything else (another record, an unknown key, a
    /// malformed or out-of-shape line) returns nil, so errors stay those of the decoder.
    public init?(logLine line: UnsafeBufferPointer<UInt8>) {
        guard let base = line.baseAddress, line.count > 2 else { return nil }
        var p = FastJSONCursor(base: base, end: line.count)
        guard let r = p.frameRecord(), p.i == p.end else { return nil }
        self = r
    }

    /// The same, for a line held in an array.
    public init?(logLine line: [UInt8]) {
        guard let r = line.withUnsafeBufferPointer({ FrameRecord(logLine: $0) }) else { return nil }
        self = r
    }
}

/// The frame record's keys, in the order the writer's sorted keys put them.
private let frameKeys: [StaticString] = [
    "busyRetries", "callbackNs", "cause", "commitNs", "connector", "copyEndNs", "crtc", "deadlineNs",
    "droppedRefreshes", "effectiveRateHz", "flipNs", "frame", "hitchNs", "id", "intent", "intervalNs",
    "intervalRefreshes", "lateRefreshes", "lateVBlankEvents", "latency", "outcome", "receivedNs", "renderEndNs",
    "renderStartNs", "schedulerDelayNs", "sequence", "vblanks", "version", "wakeNs"
]
/// Bits of the keys a frame record must have (all but cause, connector, copyEndNs,
/// lateVBlankEvents, schedulerDelayNs, vblanks).
private let frameRequired: UInt32 = {
    var m: UInt32 = (1 << 29) - 1
    for k in [2, 4, 5, 18, 24, 26] { m &= ~(1 << UInt32(k)) }
    return m
}()
private let intentKeys: [StaticString] = [
    "kind", "minDurationNs", "range", "requestedTimeNs", "targetSequence", "targetTimeNs"
]
private let intentRequired: UInt32 = 0b110101
private let rangeKeys: [StaticString] = ["maximum", "minimum", "preferred"]

/// A cursor over one line's bytes; every method returns nil (or false) at the first byte
/// outside the writer's shape.
private struct FastJSONCursor {
    let base: UnsafePointer<UInt8>
    let end: Int
    var i = 0

    init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
    }

    @inline(__always) mutating func eat(_ b: UInt8) -> Bool {
        guard i < end, base[i] == b else { return false }
        i += 1
        return true
    }

    /// A quoted key or string of printable ASCII without escapes: its bytes' offset and length.
    @inline(__always) mutating func rawString() -> (Int, Int)? {
        guard eat(0x22) else { return nil }
        let start = i
        while i < end {
            let b = base[i]
            if b == 0x22 {
                i += 1
                return (start, i - 1 - start)
            }
            if b < 0x20 || b >= 0x7F || b == 0x5C { return nil }
            i += 1
        }
        return nil
    }

    /// The index in `keys` of the next key (and its colon), trying `expected` first.
    @inline(__always) mutating func key(_ keys: [StaticString], expected: Int) -> Int? {
        guard let (start, n) = rawString(), eat(0x3A) else { return nil }
        let at = base + start
        func matches(_ k: StaticString) -> Bool {
            k.utf8CodeUnitCount == n && memcmpEqual(k.utf8Start, at, n)
        }
        if expected < keys.count, matches(keys[expected]) { return expected }
        for j in keys.indices where matches(keys[j]) { return j }
        return nil
    }

    @inline(__always) mutating func string() -> String? {
        guard let (start, n) = rawString() else { return nil }
        return String(decoding: UnsafeBufferPointer(start: base + start, count: n), as: UTF8.self)
    }

    /// A JSON integer of 1–19 digits within Int64 (no leading zero, no "-0"), then not a
    /// fraction or exponent.
    @inline(__always) mutating func int64() -> Int64? {
        let negative = eat(0x2D)
        let start = i
        var v: UInt64 = 0
        while i < end {
            let d = base[i] &- 0x30
            if d > 9 { break }
            v = v &* 10 &+ UInt64(d)
            i += 1
        }
        let n = i - start
        // 19 digits cannot overflow a UInt64; the value must also fit an Int64.
        guard n >= 1, n <= 19, v <= UInt64(Int64.max), !(n > 1 && base[start] == 0x30), !(negative && v == 0) else {
            return nil
        }
        if i < end, base[i] == 0x2E || base[i] == 0x65 || base[i] == 0x45 { return nil }
        return negative ? -Int64(v) : Int64(v)
    }

    @inline(__always) mutating func int() -> Int? { int64().map { Int($0) } }

    @inline(__always) mutating func uint64() -> UInt64? {
        guard i < end, base[i] != 0x2D, let v = int64() else { return nil }
        return UInt64(v)
    }

    /// A JSON number without an exponent, as the nearest Double (the decoder's too).
    mutating func double() -> Double? {
        let start = i
        _ = eat(0x2D)
        let intStart = i
        while i < end, base[i] &- 0x30 <= 9 { i += 1 }
        let intDigits = i - intStart
        guard intDigits >= 1, !(intDigits > 1 && base[intStart] == 0x30) else { return nil }
        var fraction = false
        if eat(0x2E) {
            let f = i
            while i < end, base[i] &- 0x30 <= 9 { i += 1 }
            guard i > f else { return nil }
            fraction = true
        }
        if i < end, base[i] == 0x65 || base[i] == 0x45 { return nil }
        if !fraction && intDigits <= 15 {
            // Exact in a Double: the integer itself.
            i = start
            guard let v = int64() else { return nil }
            return Double(v)
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        guard let v = Double(text), v.isFinite else { return nil }
        return v
    }

    /// An array of arrays of integers (`[[1,2],[3,4]]`, any lengths, empty ones too).
    mutating func int64Arrays() -> [[Int64]]? {
        guard eat(0x5B) else { return nil }
        var outer: [[Int64]] = []
        if eat(0x5D) { return outer }
        while true {
            guard eat(0x5B) else { return nil }
            var inner: [Int64] = []
            if !eat(0x5D) {
                while true {
                    guard let v = int64() else { return nil }
                    inner.append(v)
                    if eat(0x5D) { break }
                    guard eat(0x2C) else { return nil }
                }
            }
            outer.append(inner)
            if eat(0x5D) { return outer }
            guard eat(0x2C) else { return nil }
        }
    }

    /// `,` then more, or the closing `}` (true: the object ended).
    @inline(__always) mutating func next() -> Bool? {
        if eat(0x2C) { return false }
        if eat(0x7D) { return true }
        return nil
    }

    mutating func range() -> FrameRateRange? {
        guard eat(0x7B) else { return nil }
        var values = (0.0, 0.0, 0.0)
        var seen: UInt32 = 0
        var expected = 0
        while true {
            guard let k = key(rangeKeys, expected: expected), seen & (1 << UInt32(k)) == 0, let v = double() else {
                return nil
            }
            seen |= 1 << UInt32(k)
            expected = k + 1
            switch k {
            case 0: values.0 = v
            case 1: values.1 = v
            default: values.2 = v
            }
            guard let done = next() else { return nil }
            if done { break }
        }
        guard seen == 0b111 else { return nil }
        return FrameRateRange(minimum: values.1, maximum: values.0, preferred: values.2)
    }

    mutating func intent() -> FrameRecord.Intent? {
        guard eat(0x7B) else { return nil }
        var kind = FrameRecord.IntentKind.next
        var range = FrameRateRange.default
        var targetTime: Int64 = 0, targetSequence: UInt64 = 0
        var minDuration: Int64? = nil, requested: Int64? = nil
        var seen: UInt32 = 0
        var expected = 0
        while true {
            guard let k = key(intentKeys, expected: expected), seen & (1 << UInt32(k)) == 0 else { return nil }
            seen |= 1 << UInt32(k)
            expected = k + 1
            switch k {
            case 0: guard let v = string(), let k = FrameRecord.IntentKind(rawValue: v) else { return nil }; kind = k
            case 1: guard let v = int64() else { return nil }; minDuration = v
            case 2: guard let v = self.range() else { return nil }; range = v
            case 3: guard let v = int64() else { return nil }; requested = v
            case 4: guard let v = uint64() else { return nil }; targetSequence = v
            default: guard let v = int64() else { return nil }; targetTime = v
            }
            guard let done = next() else { return nil }
            if done { break }
        }
        guard seen & intentRequired == intentRequired else { return nil }
        return FrameRecord.Intent(
            kind: kind, range: range, targetTimeNs: targetTime, targetSequence: targetSequence,
            minDurationNs: minDuration, requestedTimeNs: requested)
    }

    mutating func frameRecord() -> FrameRecord? {
        guard eat(0x7B) else { return nil }
        var r = FrameRecord.blank
        var seen: UInt32 = 0
        var expected = 0
        while true {
            guard let k = key(frameKeys, expected: expected), seen & (1 << UInt32(k)) == 0 else { return nil }
            seen |= 1 << UInt32(k)
            expected = k + 1
            switch k {
            case 0: guard let v = int() else { return nil }; r.busyRetries = v
            case 1: guard let v = int64() else { return nil }; r.callbackNs = v
            case 2: guard let s = string(), let v = DropCause(rawValue: s) else { return nil }; r.cause = v
            case 3: guard let v = int64() else { return nil }; r.commitNs = v
            case 4: guard let v = string() else { return nil }; r.connector = v
            case 5: guard let v = int64() else { return nil }; r.copyEndNs = v
            case 6: guard let v = uint64(), v <= UInt64(UInt32.max) else { return nil }; r.crtc = UInt32(v)
            case 7: guard let v = int64() else { return nil }; r.deadlineNs = v
            case 8: guard let v = int() else { return nil }; r.droppedRefreshes = v
            case 9: guard let v = double() else { return nil }; r.effectiveRateHz = v
            case 10: guard let v = int64() else { return nil }; r.flipNs = v
            case 11: guard let v = int() else { return nil }; r.frame = v
            case 12: guard let v = int64() else { return nil }; r.hitchNs = v
            case 13: guard let v = uint64() else { return nil }; r.id = v
            case 14: guard let v = intent() else { return nil }; r.intent = v
            case 15: guard let v = int64() else { return nil }; r.intervalNs = v
            case 16: guard let v = int() else { return nil }; r.intervalRefreshes = v
            case 17: guard let v = int() else { return nil }; r.lateRefreshes = v
            case 18: guard let v = int64Arrays() else { return nil }; r.lateVBlankEvents = v
            case 19: guard let v = int() else { return nil }; r.latency = v
            case 20: guard let s = string(), let v = FrameOutcome(rawValue: s) else { return nil }; r.outcome = v
            case 21: guard let v = int64() else { return nil }; r.receivedNs = v
            case 22: guard let v = int64() else { return nil }; r.renderEndNs = v
            case 23: guard let v = int64() else { return nil }; r.renderStartNs = v
            case 24: guard let v = int64() else { return nil }; r.schedulerDelayNs = v
            case 25: guard let v = uint64() else { return nil }; r.sequence = v
            case 26: guard let v = int64Arrays() else { return nil }; r.vblanks = v
            case 27: guard let v = int() else { return nil }; r.version = v
            default: guard let v = int64() else { return nil }; r.wakeNs = v
            }
            guard let done = next() else { return nil }
            if done { break }
        }
        guard seen & frameRequired == frameRequired else { return nil }
        return r
    }
}

@inline(__always) private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    var j = 0
    while j < n {
        if a[j] != b[j] { return false }
        j += 1
    }
    return true
}

extension FrameRecord {
    /// A record every field of which the fast parser sets before returning it.
    fileprivate static var blank: FrameRecord { FrameRecord(zeroed: ()) }

    fileprivate init(zeroed: Void) {
        version = 0; frame = 0; id = 0
        intent = Intent(
            kind: .next, range: .default, targetTimeNs: 0, targetSequence: 0, minDurationNs: nil, requestedTimeNs: nil)
        latency = 0; effectiveRateHz = 0; callbackNs = 0; wakeNs = 0; schedulerDelayNs = nil; deadlineNs = 0
        renderStartNs = 0; renderEndNs = 0; copyEndNs = nil; commitNs = 0; busyRetries = 0; flipNs = 0; sequence = 0
        receivedNs = 0; crtc = 0; connector = nil; outcome = .onTime; lateRefreshes = 0; droppedRefreshes = 0
        hitchNs = 0; intervalNs = 0; intervalRefreshes = 0; cause = nil; lateVBlankEvents = nil; vblanks = nil
    }
}
