import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Size-based rotation of a JSON-lines log, as logrotate names the files: `PATH` is always the
/// file being written, `PATH.1` the one before it, … `PATH.keep` the oldest kept; an older one
/// is deleted when a new one starts.
public struct LogRotation: Equatable, Sendable {
    /// Start a new file before a line would make the current one larger than this (a file
    /// whose preamble and first record alone are larger holds just those). A compressed log's
    /// files count compressed bytes.
    public var maxBytes: Int64
    /// Earlier files kept besides the current one (0: only the current file).
    public var keep: Int

    /// The smallest `maxBytes` the command line accepts: 64 KiB (a run log's header is ~1 KiB
    /// and a frame line ~600 bytes).
    public static let minimumBytes: Int64 = 64 * 1024
    /// Earlier files kept when not told otherwise.
    public static let defaultKeep = 5
    /// The most earlier files that can be kept.
    public static let maximumKeep = 10_000

    public init(maxBytes: Int64, keep: Int = LogRotation.defaultKeep) {
        self.maxBytes = maxBytes
        self.keep = keep
    }

    /// Why a size or count is not usable: one line.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// Bytes from `10M`, `512K`, `1G` (powers of 1024; `KB`/`MB`/`GB`, `KiB`/`MiB`/`GiB` and
    /// lower case too) or a plain number of bytes.
    public static func parseSize(_ text: String) throws -> Int64 {
        let t = text.trimmingCharacters(in: .whitespaces)
        let digits = t.prefix { $0.isASCII && $0.isNumber }
        let unit = t.dropFirst(digits.count).lowercased()
        let scale: Int64
        switch unit {
        case "", "b": scale = 1
        case "k", "kb", "kib": scale = 1 << 10
        case "m", "mb", "mib": scale = 1 << 20
        case "g", "gb", "gib": scale = 1 << 30
        case "t", "tb", "tib": scale = 1 << 40
        default: throw Invalid("'\(text)' is not a size: give bytes or a number with K, M or G (10M, 512K, 1G)")
        }
        guard !digits.isEmpty, let n = Int64(digits), n <= Int64.max / scale else {
            throw Invalid("'\(text)' is not a size: give bytes or a number with K, M or G (10M, 512K, 1G)")
        }
        return n * scale
    }

    /// The file of `age` (0: the current one, `PATH`; k: `PATH.k`). A compressed log keeps its
    /// extension last, as logrotate's `compress` does: `run.jsonl.zst`, `run.jsonl.1.zst`, ….
    public static func path(_ base: String, age: Int) -> String {
        guard age > 0 else { return base }
        if base.hasSuffix(".zst") { return "\(base.dropLast(4)).\(age).zst" }
        return "\(base).\(age)"
    }
}

/// A ``LineFile`` that, with a ``LogRotation``, moves to a new file before a line would take
/// it past the size limit: always at a line boundary, so no line is ever split. Each new file
/// starts with the lines ``preamble`` returns (a run log's header and continuation record), and
/// each file left behind ends with the line ``trailer`` returns, so every file can be read on
/// its own.
///
/// A rotation that fails (a rename refused, the new file not creatable, the disk full while
/// writing its preamble) ends the log as a failed write does (see ``LineFile``): ``failure``
/// says why and later writes throw it. The files written so far stay.
public final class RotatingLineFile {
    /// The current file's path (`PATH`; earlier files are `PATH.1`, `PATH.2`, …).
    public let path: String
    public let rotation: LogRotation?
    private var file: any RotatingSink
    /// How the files are stored (``LogCompression/zstd``: each file one zstd stream).
    public let compression: LogCompression
    /// The current file's number, from 1 (the first file of the run).
    public private(set) var segment = 1
    /// Lines written in all files, preambles and trailers included.
    public private(set) var linesWritten = 0
    /// Lines of the current file after its preamble that hold records (``write(line:record:mayRotate:reserve:)``).
    public private(set) var recordsInSegment = 0
    /// The lines that start file `segment` (2, 3, …).
    public var preamble: ((_ segment: Int) throws -> [[UInt8]])?
    /// The last line of file `segment` when the next one starts (at most ``trailerReserve`` bytes).
    public var trailer: ((_ segment: Int) throws -> [UInt8])?
    /// Bytes kept free for the trailer when deciding to rotate.
    public static let trailerReserve: Int64 = 160
    private var failed: LineFile.Failure?

    /// Creates (truncating) `path`. Earlier files of the same name (`PATH.1`…) are left alone
    /// until rotation shifts them out.
    public init(path: String, rotation: LogRotation? = nil, compression: LogCompression = .none) throws {
        self.path = path
        self.rotation = rotation
        self.compression = compression
        file = try Self.open(path, compression)
    }

    private static func open(_ path: String, _ compression: LogCompression) throws -> any RotatingSink {
        switch compression {
        case .none: return try LineFile(path: path)
        case .zstd: return try CompressedLineFile(path: path)
        }
    }

    /// Bytes of complete lines in the current file (compressed: bytes written to it so far).
    public var bytesWritten: Int64 { file.bytesWritten }
    /// The compressed file being written (nil for plain text): to flush it.
    public var compressedFile: CompressedLineFile? { file as? CompressedLineFile }
    /// Why writing stopped (nil while it goes on).
    public var failure: LineFile.Failure? { failed ?? file.failure }

    /// Appends `bytes` plus a newline with one write(2), first moving to a new file when
    /// `mayRotate`, the line would take the current one past the limit, and the current file
    /// holds a record already. `record` false: a line that does not make a file worth reading
    /// on its own (a log's context line), which never leaves a file without records behind.
    /// `reserve`: bytes a line that must follow this one in the same file will need (it is
    /// written with `mayRotate` false), so that the file still stays within the limit.
    public func write(line bytes: [UInt8], record: Bool = true, mayRotate: Bool = true, reserve: Int = 0) throws {
        if let f = failure { throw f }
        if let r = rotation, mayRotate, recordsInSegment > 0, try !fits(bytes.count + 1 + reserve, r) {
            try rotate(r)
        }
        try file.write(line: bytes)
        linesWritten += 1
        if record { recordsInSegment += 1 }
    }


    /// Whether `count` more bytes of line and the trailer keep the current file within the
    /// limit. A compressed file counts compressed bytes: the bound of what its unflushed lines
    /// can add, and when that is too much, what a flush finds.
    private func fits(_ count: Int, _ r: LogRotation) throws -> Bool {
        guard let z = file as? CompressedLineFile else {
            return file.bytesWritten + Int64(count) + Self.trailerReserve <= r.maxBytes
        }
        if z.sizeBound(adding: count + Int(Self.trailerReserve)) <= r.maxBytes { return true }
        guard z.unflushedBytes > 0 else { return false }
        try z.flush()
        return z.sizeBound(adding: count + Int(Self.trailerReserve)) <= r.maxBytes
    }

    private func rotate(_ r: LogRotation) throws {
        do {
            if r.keep == 0 {
                // Nothing is kept: the trailer is not written (its counters still move on).
                _ = try trailer?(segment)
                try file.finish()
                try Self.unlink(path)
            } else {
                // Shift the names first: a refused rename leaves the current file as it was (it
                // reads as a killed run's log). The open file follows its rename, so the trailer
                // goes to the file now named PATH.1.
                try Self.unlink(LogRotation.path(path, age: r.keep))
                for age in stride(from: r.keep - 1, through: 0, by: -1) {
                    try Self.rename(LogRotation.path(path, age: age), LogRotation.path(path, age: age + 1))
                }
                if let t = trailer {
                    try file.write(line: try t(segment))
                    linesWritten += 1
                }
                try file.finish()
            }
            file = try Self.open(path, compression)
            segment += 1
            recordsInSegment = 0
            for line in try preamble?(segment) ?? [] {
                try file.write(line: line)
                linesWritten += 1
            }
        } catch let f as LineFile.Failure {
            failed = f
            throw f
        } catch {
            let f = LineFile.Failure("cannot rotate \(path): \(error)")
            failed = f
            throw f
        }
    }

    private static func unlink(_ p: String) throws {
        if Glibc.unlink(p) != 0 && errno != ENOENT {
            throw LineFile.Failure("cannot rotate: cannot remove \(p): \(String(cString: strerror(errno)))")
        }
    }

    private static func rename(_ from: String, _ to: String) throws {
        if Glibc.rename(from, to) != 0 && errno != ENOENT {
            throw LineFile.Failure("cannot rotate: cannot rename \(from) to \(to): \(String(cString: strerror(errno)))")
        }
    }

    /// Closes the current file.
    public func close() { file.close() }

    /// Completes and closes the current file (a compressed one: flushes and ends its stream),
    /// throwing a one-line ``LineFile/Failure`` when that fails.
    public func finish() throws {
        do { try file.finish() } catch let f as LineFile.Failure {
            failed = f
            throw f
        }
    }

    /// Removes the current file (a run refused after its outputs were opened: it never rotated).
    public func discard() { file.discard() }
}

/// A file ``RotatingLineFile`` writes lines to: plain (``LineFile``) or compressed
/// (``CompressedLineFile``).
protocol RotatingSink: AnyObject {
    var bytesWritten: Int64 { get }
    var failure: LineFile.Failure? { get }
    func write(line bytes: [UInt8]) throws
    /// Completes and closes the file (a compressed one: ends its stream), throwing why not.
    func finish() throws
    func close()
    func discard()
}

extension LineFile: RotatingSink {
    func finish() throws { close() }
}

extension CompressedLineFile: RotatingSink {}
