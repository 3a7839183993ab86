/// The DRM kernel trace events `cadence observe` reads, parsed from tracefs' text format
/// (`trace_pipe` of a trace instance with `trace_clock` mono and hash-ptr off).
///
/// A line looks like
///
///     cadence-128     [000] d.h2.     5.071468: drm_vblank_event: crtc=0, seq=59, time=5097460919, high-prec=true
///
/// that is `COMM-PID [CPU] FLAGS SECONDS.MICROS: EVENT: FIELDS`. The parser works on the UTF-8
/// bytes of one line, allocates nothing, and returns nil for anything it does not know
/// (headers, other events, lost-event markers, truncated or garbage lines).

/// One parsed trace line.
public enum TraceRecord: Equatable, Sendable {
    /// `drm:drm_vblank_event`: a vblank on `crtc` (the CRTC's index, "pipe"), its 32-bit
    /// counter and its kernel timestamp (CLOCK_MONOTONIC ns).
    case vblank(crtc: Int32, sequence: UInt32, timestamp: Int64)
    /// `drm:drm_vblank_event_queued`: the client `file` asked for a vblank event
    /// (drmWaitVBlank with DRM_VBLANK_EVENT) at `sequence`.
    case vblankRequest(file: UInt64, crtc: Int32, sequence: UInt32, task: TraceTask)
    /// `drm:drm_vblank_event_delivered`: an event (a vblank request, a CRTC-sequence request
    /// or a page-flip completion) reached `file` for vblank `sequence`.
    case delivered(file: UInt64, crtc: Int32, sequence: UInt32, traceTime: Int64)
    /// Cadence's kprobe on drm_crtc_queue_sequence_ioctl: `file` asked for a CRTC-sequence
    /// event (drmCrtcQueueSequence), which the kernel delivers without a `queued` event.
    case sequenceRequest(file: UInt64, sequence: UInt64, flags: UInt32, task: TraceTask)
    /// Cadence's kprobes on drm_mode_atomic_ioctl and drm_mode_page_flip_ioctl: `file`
    /// submitted a commit asking for a completion event, at `traceTime` (mono ns).
    case commit(file: UInt64, flags: UInt32, task: TraceTask, traceTime: Int64)
    /// Cadence's kprobe on drm_send_event_timestamp_locked (called right after
    /// `drm_vblank_event_delivered` for the same event): the event's own `type`
    /// (DRM_EVENT_VBLANK 1, DRM_EVENT_FLIP_COMPLETE 2, DRM_EVENT_CRTC_SEQUENCE 3), the CRTC
    /// index, the vblank sequence and the kernel timestamp (CLOCK_MONOTONIC ns) it carries.
    case sent(file: UInt64, crtc: Int32, sequence: UInt32, type: UInt32, timestamp: Int64)
}

/// `type` values of ``TraceRecord/sent(file:crtc:sequence:type:timestamp:)`` (uapi drm.h).
public enum DRMEventType {
    public static let vblank: UInt32 = 1
    public static let flipComplete: UInt32 = 2
    public static let crtcSequence: UInt32 = 3
}

/// The process a trace line was recorded in.
public struct TraceTask: Equatable, Sendable {
    public var pid: Int32
    /// The kernel's `comm` (at most 15 bytes).
    public var command: String
    public init(pid: Int32, command: String) { self.pid = pid; self.command = command }
}

/// Event names Cadence's trace instance enables.
public enum TraceEventName {
    public static let vblank = "drm_vblank_event"
    public static let queued = "drm_vblank_event_queued"
    public static let delivered = "drm_vblank_event_delivered"
    /// kprobe event names (in the instance's own kprobe group).
    public static let sequenceProbe = "cadence_seq"
    public static let atomicProbe = "cadence_atomic"
    public static let pageFlipProbe = "cadence_flip"
    public static let sendProbe = "cadence_send"
}

/// Parses one line of trace text.
public enum TraceLineParser {
    /// The record in `line` (without its newline), or nil.
    public static func parse(_ line: String) -> TraceRecord? {
        var copy = line
        return copy.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    /// The record in the bytes of one line (without its newline), or nil.
    public static func parse(_ b: UnsafeRawBufferPointer) -> TraceRecord? {
        let n = b.count
        // The CPU field "[ddd]": the first ']' whose '[' is preceded by spaces and "-PID".
        guard let close = index(of: UInt8(ascii: "]"), in: b, from: 0), close > 0,
              let open = lastIndex(of: UInt8(ascii: "["), in: b, before: close) else { return nil }
        var i = open - 1
        while i >= 0 && b[i] == 0x20 { i -= 1 }
        let pidEnd = i + 1
        while i >= 0 && isDigit(b[i]) { i -= 1 }
        guard i >= 0, i + 1 < pidEnd, b[i] == UInt8(ascii: "-"),
              let pid = decimal(b, i + 1, pidEnd) else { return nil }
        var commStart = 0
        while commStart < i && b[commStart] == 0x20 { commStart += 1 }
        // Flags then the timestamp "S.UUUUUU:".
        var p = close + 1
        while p < n && b[p] == 0x20 { p += 1 }
        while p < n && b[p] != 0x20 { p += 1 }          // flags
        while p < n && b[p] == 0x20 { p += 1 }
        guard let colon = index(of: UInt8(ascii: ":"), in: b, from: p),
              let traceTime = seconds(b, p, colon) else { return nil }
        p = colon + 1
        while p < n && b[p] == 0x20 { p += 1 }
        guard let nameEnd = index(of: UInt8(ascii: ":"), in: b, from: p) else { return nil }
        let fields = nameEnd + 1
        let task = { TraceTask(pid: Int32(truncatingIfNeeded: pid), command: String(decoding: UnsafeRawBufferPointer(rebasing: b[commStart..<i]), as: UTF8.self)) }
        switch name(b, p, nameEnd) {
        case .vblank:
            guard let crtc = field(b, fields, "crtc"), let seq = field(b, fields, "seq"),
                  let time = signedField(b, fields, "time") else { return nil }
            return .vblank(crtc: Int32(truncatingIfNeeded: crtc), sequence: UInt32(truncatingIfNeeded: seq), timestamp: time)
        case .queued, .delivered:
            guard let file = field(b, fields, "file", hex: true), let crtc = field(b, fields, "crtc"),
                  let seq = field(b, fields, "seq"), seq <= UInt64(UInt32.max) else { return nil }
            if name(b, p, nameEnd) == .queued {
                return .vblankRequest(file: file, crtc: Int32(truncatingIfNeeded: crtc), sequence: UInt32(seq), task: task())
            }
            return .delivered(file: file, crtc: Int32(truncatingIfNeeded: crtc), sequence: UInt32(seq), traceTime: traceTime)
        case .sequenceProbe:
            guard let file = field(b, fields, "file", hex: true), let seq = field(b, fields, "seq"),
                  let flags = field(b, fields, "flags") else { return nil }
            return .sequenceRequest(file: file, sequence: seq, flags: UInt32(truncatingIfNeeded: flags), task: task())
        case .commitProbe:
            guard let file = field(b, fields, "file", hex: true), let flags = field(b, fields, "flags") else { return nil }
            return .commit(file: file, flags: UInt32(truncatingIfNeeded: flags), task: task(), traceTime: traceTime)
        case .sendProbe:
            guard let file = field(b, fields, "file", hex: true), let crtc = field(b, fields, "crtc"),
                  let seq = field(b, fields, "seq"), seq <= UInt64(UInt32.max), let type = field(b, fields, "type"),
                  let time = signedField(b, fields, "time") else { return nil }
            return .sent(file: file, crtc: Int32(truncatingIfNeeded: crtc), sequence: UInt32(seq), type: UInt32(truncatingIfNeeded: type), timestamp: time)
        case nil:
            return nil
        }
    }

    private enum Name { case vblank, queued, delivered, sequenceProbe, commitProbe, sendProbe }

    private static func name(_ b: UnsafeRawBufferPointer, _ s: Int, _ e: Int) -> Name? {
        let len = e - s
        func equals(_ text: StaticString) -> Bool {
            guard text.utf8CodeUnitCount == len else { return false }
            let t = text.utf8Start
            for k in 0..<len where b[s + k] != t[k] { return false }
            return true
        }
        switch len {
        case 16: return equals("drm_vblank_event") ? .vblank : nil
        case 23: return equals("drm_vblank_event_queued") ? .queued : nil
        case 26: return equals("drm_vblank_event_delivered") ? .delivered : nil
        case 11: return equals("cadence_seq") ? .sequenceProbe : nil
        case 14: return equals("cadence_atomic") ? .commitProbe : nil
        case 12: return equals("cadence_flip") ? .commitProbe : equals("cadence_send") ? .sendProbe : nil
        default: return nil
        }
    }

    @inline(__always) private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private static func index(of c: UInt8, in b: UnsafeRawBufferPointer, from: Int) -> Int? {
        var i = from
        while i < b.count { if b[i] == c { return i }; i += 1 }
        return nil
    }

    private static func lastIndex(of c: UInt8, in b: UnsafeRawBufferPointer, before: Int) -> Int? {
        var i = before - 1
        while i >= 0 { if b[i] == c { return i }; i -= 1 }
        return nil
    }

    /// Decimal digits in s..<e (at most 19), nil when empty or anything else.
    private static func decimal(_ b: UnsafeRawBufferPointer, _ s: Int, _ e: Int) -> UInt64? {
        guard e > s, e - s <= 19 else { return nil }
        var v: UInt64 = 0
        for k in s..<e {
            guard isDigit(b[k]) else { return nil }
            v = v &* 10 &+ UInt64(b[k] - 0x30)
        }
        return v
    }

    /// "S.UUUUUU" (any number of fraction digits up to 9) in ns.
    private static func seconds(_ b: UnsafeRawBufferPointer, _ s: Int, _ e: Int) -> Int64? {
        guard let dot = index(of: UInt8(ascii: "."), in: UnsafeRawBufferPointer(rebasing: b[s..<e]), from: 0).map({ $0 + s }),
              let whole = decimal(b, s, dot), whole < 9_000_000_000, e - dot - 1 <= 9,
              let frac = decimal(b, dot + 1, e) else { return nil }
        var scale: UInt64 = 1
        for _ in 0..<(9 - (e - dot - 1)) { scale *= 10 }
        return Int64(whole * 1_000_000_000 + frac * scale)
    }

    /// The value of `key=` in the fields from `start` (fields are separated by spaces or
    /// ", "), decimal, or hexadecimal (with or without 0x) when `hex`.
    private static func field(_ b: UnsafeRawBufferPointer, _ start: Int, _ key: StaticString, hex: Bool = false) -> UInt64? {
        guard let (s, e) = value(b, start, key) else { return nil }
        if !hex { return decimal(b, s, e) }
        var i = s
        if e - s > 2 && b[s] == UInt8(ascii: "0") && (b[s + 1] | 0x20) == UInt8(ascii: "x") { i += 2 }
        guard e > i, e - i <= 16 else { return nil }
        var v: UInt64 = 0
        while i < e {
            let c = b[i]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x61...0x66: d = c - 0x61 + 10
            case 0x41...0x46: d = c - 0x41 + 10
            default: return nil
            }
            v = v << 4 | UInt64(d)
            i += 1
        }
        return v
    }

    private static func signedField(_ b: UnsafeRawBufferPointer, _ start: Int, _ key: StaticString) -> Int64? {
        guard let (s, e) = value(b, start, key) else { return nil }
        if e > s && b[s] == UInt8(ascii: "-") {
            return decimal(b, s + 1, e).flatMap { $0 <= UInt64(Int64.max) ? -Int64($0) : nil }
        }
        return decimal(b, s, e).flatMap { $0 <= UInt64(Int64.max) ? Int64($0) : nil }
    }

    /// The byte range of the value of `key=`: the key must start a field (after the event
    /// name's ':' or a space) and the value ends at ',', a space or the end.
    private static func value(_ b: UnsafeRawBufferPointer, _ start: Int, _ key: StaticString) -> (Int, Int)? {
        let k = key.utf8Start, kl = key.utf8CodeUnitCount
        var i = start
        while i + kl < b.count {
            if b[i] == 0x20 || b[i] == UInt8(ascii: ":") {
                var match = b[i + 1 + kl - 1] == k[kl - 1] && i + 1 + kl < b.count && b[i + 1 + kl] == UInt8(ascii: "=")
                if match { for j in 0..<kl where b[i + 1 + j] != k[j] { match = false; break } }
                if match {
                    let s = i + 2 + kl
                    var e = s
                    while e < b.count && b[e] != 0x20 && b[e] != UInt8(ascii: ",") { e += 1 }
                    return (s, e)
                }
            }
            i += 1
        }
        return nil
    }
}
