import CadenceCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a rotated run log read in order as one run (`report run.jsonl*`).
extension RunLog {
    /// The files of the rotated log written at `path`: `path` itself and every `path.N` beside
    /// it (all N present, gaps included, so that a missing file is noticed), in no particular order.
    /// For a compressed log `run.jsonl.zst` they are `run.jsonl.N.zst` (``LogRotation/path(_:age:)``).
    public static func rotationFiles(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        let suffix = path.hasSuffix(".zst") ? ".zst" : ""
        let base = String(url.lastPathComponent.dropLast(suffix.count))
        let prefix = (path as NSString).deletingLastPathComponent
        var out = [path]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        where name.hasPrefix(base + ".") && name.hasSuffix(suffix) && name.count > base.count + suffix.count + 1 {
            let n = name.dropFirst(base.count + 1).dropLast(suffix.count)
            if !n.isEmpty, n.allSatisfy({ $0.isASCII && $0.isNumber }), Int(n) != nil {
                out.append(prefix.isEmpty ? name : prefix + "/" + name)
            }
        }
        return out
    }

    /// Reads the files of one rotated run log, given in any order, as one run in one pass:
    /// ordered by segment (each later file's continuation line), every frame record to `frame`
    /// in order, and the log returned is the run's: the first file's header, every file's
    /// context, rate switches and sessions (not those a file repeats from the one before), the
    /// last file's end line. A single file reads as ``stream(path:allowPartialLastLine:frame:)``.
    ///
    /// Refused in one line: a missing segment between two given (named with the files around
    /// it), two files of the same segment, a file of another run (another header, or frames
    /// before it that the files before do not hold), and a file before the last that does not
    /// end with its rotated line. `allowPartialLastLine` applies to the last file.
    public static func stream(
        paths: [String], allowPartialLastLine: Bool = false, frame: (FrameRecord) throws -> Void
    ) throws -> RunLog {
        try stream(paths: paths, allowPartialLastLine: allowPartialLastLine, fastFrames: true) { r, _ in try frame(r) }
    }

    /// ``stream(paths:allowPartialLastLine:frame:)`` keeping every record.
    public static func read(paths: [String], allowPartialLastLine: Bool = false) throws -> RunLog {
        var records: [FrameRecord] = []
        var log = try stream(paths: paths, allowPartialLastLine: allowPartialLastLine) { records.append($0) }
        log.records = records
        return log
    }

    static func stream(
        paths: [String], allowPartialLastLine: Bool, fastFrames: Bool, frame: (FrameRecord, Bool) throws -> Void
    ) throws -> RunLog {
        guard paths.count > 1 else {
            return try stream(
                path: paths.first ?? "", allowPartialLastLine: allowPartialLastLine, fastFrames: fastFrames,
                frame: frame)
        }
        let files = try paths.map { (path: $0, segment: try segment(of: $0)) }.sorted { $0.segment < $1.segment }
        for (a, b) in zip(files, files.dropFirst()) {
            if a.segment == b.segment {
                throw Invalid("\(a.path) and \(b.path) are both segment \(a.segment): not the files of one rotated log")
            }
            if b.segment > a.segment + 1 {
                let missing =
                    b.segment - a.segment == 2
                    ? "segment \(a.segment + 1) is" : "segments \(a.segment + 1)–\(b.segment - 1) are"
                throw Invalid(
                    "\(missing) missing from the rotated log: between \(a.path) (segment \(a.segment)) and \(b.path) (segment \(b.segment))"
                )
            }
        }
        var run: RunLog? = nil
        var frames = 0
        var lo = Int.max, hi = Int.min
        for (k, f) in files.enumerated() {
            let last = k == files.count - 1
            var n = 0
            let log = try stream(
                path: f.path, allowPartialLastLine: last && allowPartialLastLine, fastFrames: fastFrames
            ) { r, h in
                n += 1
                try frame(r, h)
            }
            if let span = log.frameSpan { lo = Swift.min(lo, span.lowerBound); hi = Swift.max(hi, span.upperBound) }
            guard var r = run else {
                frames = n + (log.continuation?.framesBefore ?? 0)
                run = log
                if !last && log.rotated == nil {
                    throw Invalid(
                        "\(f.path): segment \(f.segment) does not end with its rotated line (a cut-off file), but later segments follow"
                    )
                }
                continue
            }
            if log.header != r.header {
                throw Invalid("\(f.path): another run's file (its header differs from \(files[0].path)'s)")
            }
            if let c = log.continuation, c.framesBefore != frames {
                throw Invalid(
                    "\(f.path): segment \(f.segment) follows \(c.framesBefore) frames, but the files before it hold \(frames)"
                )
            }
            if !last && log.rotated == nil {
                throw Invalid(
                    "\(f.path): segment \(f.segment) does not end with its rotated line (a cut-off file), but later segments follow"
                )
            }
            frames += n
            r.context += log.context
            r.crcSamples += log.crcSamples
            r.crcFlips += log.crcFlips
            r.rateSwitches += log.rateSwitches
            r.sessions += log.sessions.dropFirst(log.carriedSessions)
            r.rotated = log.rotated
            r.end = log.end
            r.skippedPartialBytes = log.skippedPartialBytes
            r.frameCount += log.frameCount
            run = r
        }
        var r = run!
        r.frameSpan = lo <= hi ? lo...hi : nil
        return r
    }

    /// A file's segment in its rotated log: its continuation line's, else 1 (the first file, or
    /// a log never rotated). Reads the file's first two lines only (decompressing as much of a
    /// compressed one as they need).
    static func segment(of path: String) throws -> Int {
        guard let source = try? LogByteSource(path: path) else {
            return try stream(path: path, allowPartialLastLine: false) { _ in }.segment ?? 1  // its error
        }
        var head: [UInt8] = []
        var newlines = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while newlines < 2 {
            let n =
                (try? chunk.withUnsafeMutableBufferPointer { try source.read(into: $0.baseAddress!, count: $0.count) })
                ?? 0
            if n == 0 { break }
            newlines += chunk[0..<n].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            head += chunk[0..<n]
        }
        var lines = RunLogLineDecoder(name: path)
        do {
            try head.withUnsafeBufferPointer { b in
                var start = 0
                while lines.lineNo < 2, let nl = b[start...].firstIndex(of: 0x0A) {
                    lines.lineNo += 1
                    if nl == start { throw Invalid("\(path): line \(lines.lineNo) is empty; not a Cadence run log") }
                    _ = try lines.decode(UnsafeBufferPointer(rebasing: b[start..<nl]), number: lines.lineNo)
                    start = nl + 1
                }
            }
        } catch {
            // The error reading the whole file gives (the same, or an earlier one).
            _ = try stream(path: path, allowPartialLastLine: false) { _ in }
            throw error
        }
        return lines.log.continuation?.segment ?? 1
    }
}

extension ReportChart {
    /// ``read(path:allowPartialLastLine:width:height:)`` for the files of one rotated log, read
    /// as one run (``RunLog/stream(paths:allowPartialLastLine:frame:)``).
    public static func read(
        paths: [String], allowPartialLastLine: Bool = false, width: Int = 1200, height: Int = 720
    ) throws -> (chart: ReportChart, log: RunLog) {
        var b: Builder? = nil
        let log = try RunLog.stream(paths: paths, allowPartialLastLine: allowPartialLastLine, fastFrames: true) {
            r, hasHeader in
            if b == nil { b = Builder(estimatesRefresh: !hasHeader, width: width) }
            b!.add(r)
        }
        let builder = b.take()!
        return (ReportChart(consume builder, log: log, width: width, height: height), log)
    }
}
