import CadenceCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes a run log's lines one at a time, in order: the checks and one-line errors of
/// ``RunLog/parse(_:name:allowPartialLastLine:)``, shared by it and ``RunLog/stream(path:allowPartialLastLine:frame:)``.
/// ``log`` collects every line but the frame records, which each call returns.
struct RunLogLineDecoder {
    typealias Invalid = RunLog.Invalid
    let name: String
    let fastFrames: Bool
    let decoder = JSONDecoder()
    /// Header, end, context, sessions, … (``RunLog/records`` stays empty).
    var log = RunLog(header: nil, records: [], end: nil)
    /// Lines read, and frame records among them.
    var lineNo = 0
    var frames = 0
    /// Whether context records are kept in ``log`` (they are checked either way).
    var keepsContext = true

    /// In a log that carries CRCs, keeps each shown frame's flip (``RunLog/crcFlips``): the
    /// scanout is judged from them and the CRC lines even when the records are streamed.
    mutating func noteScanoutFlip(_ r: FrameRecord) {
        guard log.header?.crcSource != nil, r.outcome == .onTime || r.outcome == .late else { return }
        log.crcFlips.append(
            RunLog.ShownFlip(frame: r.frame, flip: .init(frame: r.id, sequence: r.sequence, timestamp: r.flipNs)))
    }

    init(name: String, fastFrames: Bool = true) {
        self.name = name
        self.fastFrames = fastFrames
    }

    /// Decodes every complete line (ending in a newline) of `count` bytes at `base`, passing
    /// each frame record to `frame` (with whether the log has a header); returns how many bytes
    /// after the last newline are left.
    mutating func completeLines(
        _ base: UnsafePointer<UInt8>, count: Int, frame: (FrameRecord, Bool) throws -> Void
    ) throws -> Int {
        var start = 0
        while start < count {
            guard let nl = memchr(base + start, 0x0A, count - start) else { break }
            let end = base.distance(to: nl.assumingMemoryBound(to: UInt8.self))
            lineNo += 1
            if end == start { throw Invalid("\(name): line \(lineNo) is empty; not a Cadence run log") }
            if let r = try decode(UnsafeBufferPointer(start: base + start, count: end - start), number: lineNo) {
                try frame(r, log.header != nil)
            }
            start = end + 1
        }
        return count - start
    }

    /// Decodes the next complete line (without its newline); a frame record is returned.
    mutating func line(_ line: UnsafeBufferPointer<UInt8>) throws -> FrameRecord? {
        lineNo += 1
        if line.isEmpty { throw Invalid("\(name): line \(lineNo) is empty; not a Cadence run log") }
        return try decode(line, number: lineNo)
    }

    /// A last line without newline: complete JSON is accepted, a cut-off record is not (unless
    /// `allowPartialLastLine`: then it is skipped and counted in ``RunLog/skippedPartialBytes``).
    mutating func lastLine(_ t: UnsafeBufferPointer<UInt8>, allowPartialLastLine: Bool) throws -> FrameRecord? {
        lineNo += 1
        do {
            return try decode(t, number: lineNo)
        } catch {
            if lineNo == 1 { throw error }
            if allowPartialLastLine {
                log.skippedPartialBytes = t.count
                return nil
            }
            throw Invalid(
                "\(name): line \(lineNo) is cut off (truncated log); --allow-partial analyses the complete lines")
        }
    }

    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, number: Int) throws -> FrameRecord? {
        // Frame lines as the writer writes them: without JSONDecoder (FrameRecordParser.swift);
        // anything else, the decoder below decides (and words the error).
        if fastFrames, let record = FrameRecord(logLine: line), record.version == FrameRecord.currentVersion {
            try checkAfterEnd(number)
            return try accept(record, number: number)
        }
        let d = Data(line)
        guard let obj = try? JSONSerialization.jsonObject(with: d), let dict = obj as? [String: Any] else {
            throw Invalid("\(name): line \(number) is not a JSON object; not a Cadence run log")
        }
        if let kind = dict["record"] as? String {
            guard let v = dict["version"] as? Int, RunLogHeader.readableVersions.contains(v) else {
                let found = dict["version"].map { "\($0)" } ?? "(none)"
                let known = RunLogHeader.readableVersions
                let reads = "this build reads \(known.lowerBound) to \(known.upperBound)"
                throw Invalid("\(name): line \(number): unknown log version \(found) (\(reads))")
            }
            switch kind {
            case "run":
                guard number == 1 else { throw Invalid("\(name): line \(number): a second run header") }
                do { log.header = try decoder.decode(RunLogHeader.self, from: d) } catch {
                    throw Invalid("\(name): line \(number): malformed run header")
                }
                if let h = log.header, !(h.refreshIntervalNs > 0 && h.refreshIntervalNs <= 1e12 && h.refreshHz.isFinite)
                {
                    throw Invalid(
                        "\(name): line \(number): run header: refreshIntervalNs \(h.refreshIntervalNs) is out of range")
                }
            case "rate-switch":
                if log.end != nil || log.rotated != nil {
                    throw Invalid("\(name): line \(number): rate switch after the end record")
                }
                do { log.rateSwitches.append(try decoder.decode(RateSwitch.self, from: d)) } catch {
                    throw Invalid("\(name): line \(number): malformed rate-switch record")
                }
            case "session":
                if log.end != nil { throw Invalid("\(name): line \(number): session record after the end record") }
                do { log.sessions.append(try decoder.decode(SessionChange.self, from: d)) } catch {
                    throw Invalid("\(name): line \(number): malformed session record")
                }
                // Right after the continuation line (and the ones repeated before it): repeated from
                // the file before, as many as it says. Not a session line after a context line, nor
                // the one that started this file (a pause right after the cut: `report` of all the
                // files lost the gap, `sessionGaps` 0 against 1).
                // (Line 1 is the header, 2 the continuation: a session line at 3 + the count so far
                // follows only repeated ones.)
                if let c = log.continuation, number == 3 + log.carriedSessions,
                    log.carriedSessions < (c.sessions ?? .max)
                {
                    log.carriedSessions += 1
                }
            case "crc":
                if log.end != nil || log.rotated != nil {
                    throw Invalid("\(name): line \(number): crc record after the end record")
                }
                guard log.header?.crcSource != nil, let c = try? decoder.decode(CRCRecord.self, from: d),
                    let sample = c.sample
                else {
                    throw Invalid("\(name): line \(number): malformed crc record (or no crcSource in the header)")
                }
                log.crcSamples.append(sample)
            case "context":
                if log.end != nil || log.rotated != nil {
                    throw Invalid("\(name): line \(number): context record after the end record")
                }
                do {
                    let c = try decoder.decode(ContextRecord.self, from: d)
                    if keepsContext { log.context.append(c) }
                } catch {
                    throw Invalid("\(name): line \(number): malformed context record")
                }
            case "continuation":
                guard number == 2, log.header != nil else {
                    throw Invalid("\(name): line \(number): a continuation record not right after the run header")
                }
                do { log.continuation = try decoder.decode(LogContinuation.self, from: d) } catch {
                    throw Invalid("\(name): line \(number): malformed continuation record")
                }
                if let c = log.continuation {
                    if !(2...Int(1 << 40)).contains(c.segment) || !(0...RunLog.maxIndex).contains(c.framesBefore) {
                        throw Invalid(
                            "\(name): line \(number): continuation record: segment \(c.segment) or framesBefore \(c.framesBefore) is out of range"
                        )
                    }
                    if c.carried.count > 64 {
                        throw Invalid(
                            "\(name): line \(number): continuation record carries \(c.carried.count) frames (at most 64)"
                        )
                    }
                    for r in c.carried {
                        if let field = RunLog.outOfRange(r) {
                            throw Invalid(
                                "\(name): line \(number): carried frame record field \(field) is out of range")
                        }
                    }
                    let vblanks = c.vblanks ?? []
                    if vblanks.count > 64
                        || !vblanks.allSatisfy({
                            $0.count == 2 && (0...Int64(RunLog.maxIndex)).contains($0[0])
                                && (0...RunLog.maxTimeNs).contains($0[1])
                        })
                    {
                        throw Invalid(
                            "\(name): line \(number): continuation record: vblanks out of range (at most 64 [sequence, ns] pairs)"
                        )
                    }
                }
            case "rotated":
                guard log.end == nil, log.rotated == nil else {
                    throw Invalid("\(name): line \(number): a rotated record after the end")
                }
                do { log.rotated = try decoder.decode(LogRotated.self, from: d) } catch {
                    throw Invalid("\(name): line \(number): malformed rotated record")
                }
            case "end":
                guard log.end == nil else { throw Invalid("\(name): line \(number): a second end record") }
                if log.rotated != nil {
                    throw Invalid("\(name): line \(number): an end record after the rotated record")
                }
                do { log.end = try decoder.decode(RunLogEnd.self, from: d) } catch {
                    throw Invalid("\(name): line \(number): malformed end record")
                }
            default:
                throw Invalid("\(name): line \(number): unknown record '\(kind)'")
            }
            return nil
        }
        guard dict["frame"] != nil, dict["outcome"] != nil, let v = dict["version"] as? Int else {
            throw Invalid("\(name): line \(number) is not a frame record; not a Cadence run log")
        }
        guard v == FrameRecord.currentVersion else {
            throw Invalid(
                "\(name): line \(number): unknown frame record version \(v) (this build reads \(FrameRecord.currentVersion))"
            )
        }
        try checkAfterEnd(number)
        let record: FrameRecord
        do {
            record = try decoder.decode(FrameRecord.self, from: d)
        } catch {
            throw Invalid("\(name): line \(number): malformed frame record (\(RunLog.shortReason(error)))")
        }
        return try accept(record, number: number)
    }

    /// Refuses a frame record on line `number` after the log's end (or rotation) record.
    private func checkAfterEnd(_ number: Int) throws {
        if log.end != nil || log.rotated != nil {
            throw Invalid("\(name): line \(number): frame record after the end record")
        }
    }

    /// A decoded frame record (either parser): its fields within range, counted, its flip noted.
    private mutating func accept(_ record: FrameRecord, number: Int) throws -> FrameRecord {
        if let field = RunLog.outOfRange(record) {
            throw Invalid("\(name): line \(number): frame record field \(field) is out of range")
        }
        frames += 1
        noteScanoutFlip(record)
        return record
    }
}

extension RunLog {
    /// Reads `path` in one pass in bounded memory (a buffer of about a megabyte, more only for
    /// a longer line), decompressing a zstd-compressed log (`--log FILE.zst`) chunk by chunk
    /// (a stream cut short reads up to its last flush; see `LogByteSource`): every frame record
    /// goes to `frame` as it is read, in log order, and the
    /// log returned holds everything else (its ``records`` are empty; ``frameCount`` and
    /// ``frameSpan`` say what was read). The checks and errors are those of
    /// ``read(path:allowPartialLastLine:)``, which is this with every record kept.
    public static func stream(
        path: String, allowPartialLastLine: Bool = false, frame: (FrameRecord) throws -> Void
    ) throws -> RunLog {
        try stream(path: path, allowPartialLastLine: allowPartialLastLine, fastFrames: true) { r, _ in try frame(r) }
    }

    /// ``stream(path:allowPartialLastLine:frame:)``; `frame` is also told whether the log has
    /// a header (known from the first frame record on).
    static func stream(
        path: String, allowPartialLastLine: Bool, fastFrames: Bool, frame: (FrameRecord, Bool) throws -> Void
    ) throws -> RunLog {
        let source = try LogByteSource(path: path)
        var lines = RunLogLineDecoder(name: path, fastFrames: fastFrames)
        var capacity = 1 << 20
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0
        var total = 0
        var minFrame = Int.max, maxFrame = Int.min
        func each(_ r: FrameRecord, _ hasHeader: Bool) throws {
            minFrame = Swift.min(minFrame, r.frame)
            maxFrame = Swift.max(maxFrame, r.frame)
            try frame(r, hasHeader)
        }
        while true {
            // One line longer than the buffer: make room for it.
            if filled == capacity { RunLog.doubleLineBuffer(&buffer, capacity: &capacity, filled: filled) }
            let n = try source.read(into: buffer + filled, count: capacity - filled)
            if n == 0 { break }
            total += n
            let before = filled
            filled += n
            // Only the new bytes can hold a newline that ends a line.
            if memchr(buffer + before, 0x0A, n) == nil { continue }
            let rest = try lines.completeLines(buffer, count: filled, frame: each)
            if rest > 0 && rest < filled { memmove(buffer, buffer + filled - rest, rest) }
            filled = rest
        }
        if total == 0 { throw Invalid("\(path): empty file, not a Cadence run log") }
        if filled > 0,
            let r = try lines.lastLine(
                UnsafeBufferPointer(start: buffer, count: filled), allowPartialLastLine: allowPartialLastLine)
        {
            try each(r, lines.log.header != nil)
        }
        var log = lines.log
        if lines.frames == 0 { throw Invalid("\(path): no frame records") }
        log.frameCount = lines.frames
        log.frameSpan = minFrame...maxFrame
        return log
    }
}

/// A run log read record by record on demand (``RunLog/stream(path:allowPartialLastLine:frame:)``
/// turned around: the reader asks for the next record): the same buffer, checks and errors.
/// ``log`` holds what has been read besides the frame records.
final class RunLogCursor {
    private let path: String
    private let allowPartialLastLine: Bool
    private let source: LogByteSource
    private var lines: RunLogLineDecoder
    private var capacity = 1 << 20
    private var buffer: UnsafeMutablePointer<UInt8>
    private var start = 0
    private var filled = 0
    private var total = 0
    private var atEnd = false
    private var finished = false
    private var minFrame = Int.max, maxFrame = Int.min

    /// Opens `path` (its errors as ``RunLog/stream(path:allowPartialLastLine:frame:)``'s);
    /// `keepsContext` false skips keeping context records (they are still checked).
    init(path: String, allowPartialLastLine: Bool, keepsContext: Bool = true) throws {
        self.path = path
        self.allowPartialLastLine = allowPartialLastLine
        source = try LogByteSource(path: path)
        lines = RunLogLineDecoder(name: path)
        lines.keepsContext = keepsContext
        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// What has been read besides frame records (all of it once ``next()`` returned nil).
    var log: RunLog {
        var l = lines.log
        l.frameCount = lines.frames
        if minFrame <= maxFrame { l.frameSpan = minFrame...maxFrame }
        return l
    }

    /// The next frame record, nil after the last (then the log's end is checked as a stream's).
    func next() throws -> FrameRecord? {
        while true {
            // A complete line in the buffer.
            if start < filled, let nl = memchr(buffer + start, 0x0A, filled - start) {
                let end = buffer.distance(to: nl.assumingMemoryBound(to: UInt8.self))
                let from = start
                start = end + 1
                if let r = try lines.line(UnsafeBufferPointer(start: buffer + from, count: end - from)) {
                    return seen(r)
                }
                continue
            }
            if atEnd {
                if finished { return nil }
                finished = true
                if total == 0 { throw RunLog.Invalid("\(path): empty file, not a Cadence run log") }
                var last: FrameRecord? = nil
                if filled > start {
                    last = try lines.lastLine(
                        UnsafeBufferPointer(start: buffer + start, count: filled - start),
                        allowPartialLastLine: allowPartialLastLine)
                    start = filled
                }
                if let r = last { return seen(r) }
                if lines.frames == 0 { throw RunLog.Invalid("\(path): no frame records") }
                return nil
            }
            // Keep the partial line, then read more.
            if start > 0 {
                if filled > start { memmove(buffer, buffer + start, filled - start) }
                filled -= start
                start = 0
            }
            if filled == capacity { RunLog.doubleLineBuffer(&buffer, capacity: &capacity, filled: filled) }
            let n = try source.read(into: buffer + filled, count: capacity - filled)
            if n == 0 {
                atEnd = true
            } else {
                total += n
                filled += n
            }
        }
    }

    private func seen(_ r: FrameRecord) -> FrameRecord {
        minFrame = Swift.min(minFrame, r.frame)
        maxFrame = Swift.max(maxFrame, r.frame)
        return r
    }
}

extension RunLog {
    /// Doubles a line buffer holding `filled` bytes: a line longer than the buffer (both readers).
    static func doubleLineBuffer(_ buffer: inout UnsafeMutablePointer<UInt8>, capacity: inout Int, filled: Int) {
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
        bigger.update(from: buffer, count: filled)
        buffer.deallocate()
        buffer = bigger
        capacity *= 2
    }
}
