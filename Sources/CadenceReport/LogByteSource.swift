internal import CZstd
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of a log file, read a chunk at a time: the file's bytes, or, for a file that starts
/// with zstd's magic number (`cadence run --log FILE.zst`), its decompressed bytes, decoded
/// chunk by chunk (bounded memory: zstd's input buffer and window, never the whole file).
///
/// A zstd stream cut short (a run killed with SIGKILL, a copy in progress) reads up to its
/// last complete block, which ends at a flush: the lines written before that flush, then, when
/// the block ends inside a line, that line cut off (read as a plain log's cut-off last line).
/// A corrupt stream (zstd finds a malformed block, or the frame's checksum does not match the
/// text) throws one line naming the file and zstd's reason.
final class LogByteSource {
    typealias Invalid = RunLog.Invalid
    let path: String
    private var fd: Int32
    /// The decompressor, for a zstd file.
    private var dctx: OpaquePointer?
    private var input: UnsafeMutableRawPointer?
    private var inputCapacity = 0
    private var inBuf = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
    /// The last call filled the output: zstd may hold more for the next.
    private var outputFull = false
    /// zstd's last hint: 0 at the end of a frame, else the frame is not complete.
    private var hint = 0
    private var atEnd = false

    /// Whether the file is a zstd stream.
    var isCompressed: Bool { dctx != nil }
    /// True (once read to the end) when a zstd stream ends inside a frame: it was cut short.
    var endsInsideFrame: Bool { dctx != nil && atEnd && hint != 0 }

    /// Opens `path` (one-line errors: no such file, a directory, unreadable, a gzip file).
    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.unreadable(path) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            _ = Glibc.close(fd)
            throw Self.unreadable(path)
        }
        var magic = [UInt8](repeating: 0, count: 4)
        let n = magic.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4, 0) }
        if n == 4 && magic == LogCompression.zstdMagic {
            guard let d = ZSTD_createDCtx() else {
                _ = Glibc.close(fd)
                throw Invalid("\(path): no memory for the zstd decompressor")
            }
            dctx = d
            inputCapacity = ZSTD_DStreamInSize()
            input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        } else if n >= 2 && Array(magic[0..<2]) == LogCompression.gzipMagic {
            _ = Glibc.close(fd)
            throw Invalid("\(path): a gzip file; Cadence reads plain and zstd-compressed (.zst) logs (gunzip it first)")
        }
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
        if let d = dctx { ZSTD_freeDCtx(d) }
        input?.deallocate()
    }

    static func unreadable(_ path: String) -> Invalid {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            return Invalid("\(path): cannot be read\(isDir.boolValue ? " (a directory)" : "")")
        }
        return Invalid("\(path): no such file")
    }

    /// Reads up to `count` bytes of text to `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) throws -> Int {
        guard let d = dctx, let input else { return try readFile(buffer, count) }
        var out = ZSTD_outBuffer(dst: buffer, size: count, pos: 0)
        while true {
            if inBuf.pos == inBuf.size && !outputFull {
                if atEnd { return 0 }
                let n = try readFile(input.assumingMemoryBound(to: UInt8.self), inputCapacity)
                if n == 0 {
                    atEnd = true
                    return 0
                }
                inBuf = ZSTD_inBuffer(src: input, size: n, pos: 0)
            }
            let r = ZSTD_decompressStream(d, &out, &inBuf)
            if ZSTD_isError(r) != 0 {
                let name = String(cString: ZSTD_getErrorName(r))
                throw Invalid("\(path): corrupt zstd stream (\(name)); not a readable compressed log")
            }
            hint = r
            outputFull = out.pos == out.size
            if out.pos > 0 { return out.pos }
        }
    }

    private func readFile(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) throws -> Int {
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n >= 0 { return n }
            if errno != EINTR { throw Self.unreadable(path) }
        }
    }
}
