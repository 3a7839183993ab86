internal import CZstd
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a log file is stored, from its name: `FILE.zst` is a zstd stream, anything else plain
/// text. (Readers go by the file's first bytes instead; see ``RunLog/stream(path:allowPartialLastLine:frame:)``.)
public enum LogCompression: Sendable, Equatable {
    case none
    /// A zstd stream (RFC 8878), level ``CompressedLineFile/level``.
    case zstd

    /// The compression `path`'s name asks for; a one-line ``LineFile/Failure`` for a gzip
    /// name (`.gz`): compressed logs are zstd (level 1 makes a Cadence log 2.5 times smaller
    /// than gzip -6 in a tenth of its CPU time; docs/long-logs.md).
    public static func of(path: String) throws -> LogCompression {
        if path.hasSuffix(".zst") { return .zstd }
        if path.hasSuffix(".gz") {
            throw LineFile.Failure("cannot write \(path): compressed logs are zstd: name the file FILE.zst")
        }
        return .none
    }

    /// The zstd frame's first four bytes (RFC 8878 §3.1.1: 0xFD2FB528, little-endian).
    static let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// A gzip member's first two bytes (RFC 1952).
    static let gzipMagic: [UInt8] = [0x1F, 0x8B]
}

/// A ``LineFile`` whose lines go through a zstd compressor: lines are handed to the compressor
/// as they come, and the compressor is flushed (`ZSTD_e_flush`: every line given so far becomes
/// decodable) and its output written with one write(2) when a line comes ``flushIntervalNs``
/// or more after the last flush, on ``flush()``, before rotation closes the file and at
/// ``close()``. A process killed with SIGKILL leaves a stream that reads up to its last flush:
/// every complete frame logged more than a second before the kill.
///
/// ``bytesWritten`` counts compressed bytes in the file; ``sizeBound(adding:)`` bounds what the lines
/// not yet flushed can add. A failed write ends the file as ``LineFile``'s does: the bytes
/// of the flush it was writing are cut off again, the file keeps what earlier flushes wrote.
public final class CompressedLineFile {
    /// zstd's level: 1 (fastest) compresses a Cadence log best of 1–3 as well (docs/long-logs.md).
    public static let level: Int32 = 1
    /// The longest time lines wait in the compressor: one second.
    public static let defaultFlushIntervalNs: Int64 = 1_000_000_000

    public let path: String
    private var fd: Int32
    private let cctx: OpaquePointer
    private let out: UnsafeMutableRawPointer
    private let outCapacity: Int
    /// Compressed bytes in the file (those of every write(2) so far).
    public private(set) var bytesWritten: Int64 = 0
    /// Lines handed to the compressor.
    public private(set) var linesWritten = 0
    /// Uncompressed bytes handed to the compressor since its last flush.
    public private(set) var unflushedBytes = 0
    /// Why writing stopped (nil while every write succeeded).
    public private(set) var failure: LineFile.Failure? = nil
    /// Lines are flushed when one comes this long after the last flush.
    public var flushIntervalNs: Int64
    /// CLOCK_MONOTONIC in ns (tests replace it).
    var now: () -> Int64 = CompressedLineFile.monotonicNs
    private var lastFlushNs: Int64

    /// Creates (truncating) `path`.
    public init(path: String, flushIntervalNs: Int64 = CompressedLineFile.defaultFlushIntervalNs) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw LineFile.Failure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        guard let c = ZSTD_createCCtx() else {
            _ = Glibc.close(fd)
            throw LineFile.Failure("cannot write \(path): no memory for the zstd compressor")
        }
        _ = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, Self.level)
        _ = ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)
        self.fd = fd
        self.path = path
        self.cctx = c
        self.flushIntervalNs = flushIntervalNs
        outCapacity = ZSTD_CStreamOutSize()
        out = UnsafeMutableRawPointer.allocate(byteCount: outCapacity, alignment: 16)
        lastFlushNs = Self.monotonicNs()
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
        ZSTD_freeCCtx(cctx)
        out.deallocate()
    }

    static func monotonicNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// The most the file can hold once the lines not yet flushed and `extra` more bytes of
    /// lines are flushed and the stream ended: zstd stores an incompressible block with a
    /// 3-byte header, the frame's end adds a block header and a 4-byte checksum, and the frame
    /// header (up to 18 bytes) comes with the first write.
    public func sizeBound(adding extra: Int = 0) -> Int64 {
        let n = Int64(unflushedBytes + extra + pending)
        return bytesWritten + n + ((n >> 16) + 1) * 3 + 8 + (bytesWritten == 0 ? 18 : 0)
    }

    /// Hands `bytes` plus a newline to the compressor, flushing when ``flushIntervalNs`` has
    /// passed since the last flush. Throws ``failure`` when this or an earlier write failed.
    public func write(line bytes: [UInt8]) throws {
        if let f = failure { throw f }
        guard fd >= 0 else { throw LineFile.Failure("cannot write \(path): already closed") }
        bytes.withUnsafeBytes { compress($0, ZSTD_e_continue) }
        var newline: UInt8 = 0x0A
        withUnsafeBytes(of: &newline) { compress($0, ZSTD_e_continue) }
        if let f = failure { throw f }
        linesWritten += 1
        unflushedBytes += bytes.count + 1
        if now() - lastFlushNs >= flushIntervalNs { try flush() }
    }

    /// Makes every line given so far decodable from the file: flushes the compressor and writes
    /// its output (one write(2) unless the output passes ZSTD_CStreamOutSize, 128 KiB).
    public func flush() throws {
        if let f = failure { throw f }
        guard fd >= 0 else { throw LineFile.Failure("cannot write \(path): already closed") }
        try finishStream(ZSTD_e_flush)
    }

    /// Pending output: `pending` bytes at `out` not yet written.
    private var pending = 0

    /// Feeds `input` to the compressor with `directive`; writes the output buffer whenever it
    /// fills (bounded memory: ZSTD_CStreamOutSize). Sets ``failure`` on an error.
    private func compress(_ input: UnsafeRawBufferPointer, _ directive: ZSTD_EndDirective) {
        guard failure == nil else { return }
        var inBuf = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var outBuf = ZSTD_outBuffer(dst: out, size: outCapacity, pos: pending)
            let r = ZSTD_compressStream2(cctx, &outBuf, &inBuf, directive)
            pending = outBuf.pos
            if ZSTD_isError(r) != 0 {
                _ = fail("cannot write \(path): zstd: \(String(cString: ZSTD_getErrorName(r)))")
                return
            }
            let done = directive == ZSTD_e_continue ? inBuf.pos == inBuf.size : r == 0
            if pending == outCapacity || (done && directive != ZSTD_e_continue) {
                guard writeOut() else { return }
            }
            if done { return }
        }
    }

    private func finishStream(_ directive: ZSTD_EndDirective) throws {
        compress(UnsafeRawBufferPointer(start: nil, count: 0), directive)
        if let f = failure { throw f }
        unflushedBytes = 0
        lastFlushNs = now()
    }

    /// Writes the pending output with one write(2) (retrying a short write or EINTR).
    private func writeOut() -> Bool {
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_nlink == 0 {
            _ = fail("\(path) was removed")
            return false
        }
        var off = 0
        while off < pending {
            let n = Glibc.write(fd, out + off, pending - off)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                if off > 0 { _ = ftruncate(fd, off_t(bytesWritten)) }
                _ = fail("cannot write \(path): \(String(cString: strerror(e)))")
                return false
            }
            off += n
        }
        bytesWritten += Int64(pending)
        pending = 0
        return true
    }

    private func fail(_ why: String) -> LineFile.Failure {
        let f = LineFile.Failure(why)
        failure = f
        return f
    }

    /// Ends the stream (flush, the frame's last block and checksum) and closes the file; a
    /// failure to end it is kept in ``failure`` (the file then reads as a killed run's).
    public func close() { try? finish() }

    /// ``close()``, throwing the failure to end the stream (the file is closed either way).
    public func finish() throws {
        defer {
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
        if fd >= 0 && failure == nil { try finishStream(ZSTD_e_end) }
        if let f = failure { throw f }
    }

    /// Closes and removes the file.
    public func discard() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        unlink(path)
    }
}
