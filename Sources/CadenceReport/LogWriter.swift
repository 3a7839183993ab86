import CadenceCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An output file written in whole lines, each with a single write(2) and no user-space
/// buffering: a process killed with SIGKILL loses nothing already handed to ``write(line:)``
/// and never leaves a half line before the last one.
public final class LineFile {
    /// Why the file cannot be written: one line for the user.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    public let path: String
    private var fd: Int32

    /// Creates (truncating) `path`.
    public init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw Failure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.path = path
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Appends `bytes` plus a newline with one write(2) (retrying only a short write).
    public func write(line bytes: [UInt8]) throws {
        var buf = bytes
        buf.append(0x0A)
        try buf.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Failure("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                off += n
            }
        }
    }

    /// Appends a string as one line.
    public func write(line text: String) throws { try write(line: Array(text.utf8)) }

    /// Closes the file (later writes fail).
    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    /// Removes `path` (used when a run is refused after its outputs were opened).
    public func discard() {
        close()
        unlink(path)
    }
}

/// Writes a run log: the ``RunLogHeader`` line, one ``FrameRecord`` line per frame as it
/// completes, ``ContextRecord`` lines, and the ``RunLogEnd`` line. Every line reaches the file at once (see ``LineFile``),
/// so the log is never more than the frame in progress behind the run.
public final class RunLogWriter {
    public let file: LineFile
    private let encoder: JSONEncoder
    public private(set) var frames = 0

    /// Creates (truncating) `path`; throws a one-line ``LineFile/Failure``.
    public init(path: String) throws {
        file = try LineFile(path: path)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// Writes the header (first line).
    public func begin(_ header: RunLogHeader) throws {
        try file.write(line: [UInt8](try encoder.encode(header)))
    }

    /// Writes one frame.
    public func write(_ record: FrameRecord) throws {
        try file.write(line: [UInt8](try encoder.encode(record)))
        frames += 1
    }

    /// Writes one `--adapt` rate switch (a `"record":"rate-switch"` line).
    public func write(_ rateSwitch: RateSwitch) throws {
        try file.write(line: [UInt8](try encoder.encode(rateSwitch)))
    }

    /// Writes a context line (temperature, frequency).
    public func write(_ context: ContextRecord) throws {
        try file.write(line: [UInt8](try encoder.encode(context)))
    }

    /// Writes the end line with the summary and closes the file.
    public func end(_ summary: RunSummary) throws {
        try file.write(line: [UInt8](try encoder.encode(RunLogEnd(summary: summary))))
        file.close()
    }
}
