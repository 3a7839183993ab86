import CadenceCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An output file written in whole lines, each with a single write(2) and no user-space
/// buffering: a process killed with SIGKILL loses nothing already handed to ``write(line:)-([UInt8])``
/// and never leaves a half line before the last one.
///
/// The first write that fails (a full filesystem, a file-size limit, an I/O error, a pipe
/// whose reader left, the file removed) ends the file for good: ``failure`` keeps why, the
/// partial line that write may have left is cut off again (`ftruncate` to the end of the
/// last complete line), and later writes throw the same failure without touching the file.
/// Everything written before stays. The process must ignore SIGPIPE and SIGXFSZ to see EPIPE
/// and EFBIG as errors instead of being killed (the CLI does).
public final class LineFile {
    /// Why the file cannot be written: one line for the user.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    public let path: String
    private var fd: Int32
    /// Bytes of complete lines in the file.
    public private(set) var bytesWritten: Int64 = 0
    /// Lines written completely.
    public private(set) var linesWritten = 0
    /// Why writing stopped (nil while every write succeeded).
    public private(set) var failure: Failure? = nil

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

    /// Appends `bytes` plus a newline with one write(2) (retrying only a short write or EINTR).
    /// Throws ``failure`` when this or an earlier write failed.
    public func write(line bytes: [UInt8]) throws {
        if let f = failure { throw f }
        guard fd >= 0 else { throw Failure("cannot write \(path): already closed") }
        if wasRemoved() { throw fail("\(path) was removed") }
        var buf = bytes
        buf.append(0x0A)
        let error: Int32? = buf.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    let e = errno
                    // Cut the partial line off again (a regular file; pipes cannot be).
                    if off > 0 { _ = ftruncate(fd, off_t(bytesWritten)) }
                    return e
                }
                off += n
            }
            return nil
        }
        if let e = error { throw fail("cannot write \(path): \(String(cString: strerror(e)))") }
        bytesWritten += Int64(buf.count)
        linesWritten += 1
    }

    /// Appends a string as one line.
    public func write(line text: String) throws { try write(line: Array(text.utf8)) }

    /// True when the file was unlinked since it was opened (its data would vanish on close).
    private func wasRemoved() -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return (st.st_mode & S_IFMT) == S_IFREG && st.st_nlink == 0
    }

    private func fail(_ why: String) -> Failure {
        let f = Failure(why)
        failure = f
        return f
    }

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
/// so the log is never more than the frame in progress behind the run; a compressed log
/// (`PATH.zst`, ``CompressedLineFile``) at most a second behind it.
///
/// With a ``LogRotation`` the log moves to a new file at a line boundary before one would pass
/// the size limit (see ``RotatingLineFile``): the file left behind ends with a ``LogRotated``
/// line, and the new one starts with the same header and a ``LogContinuation`` line, so
/// `report` and `replay` read each file on its own.
public final class RunLogWriter {
    public let file: RotatingLineFile
    private let encoder: JSONEncoder
    /// Frame records written, in all files.
    public private(set) var frames = 0
    /// Frame records written before the current file.
    public private(set) var framesBeforeSegment = 0
    private var headerLine: [UInt8] = []
    /// The last ``LogContinuation/carriedFrames`` frame records, for the next file's continuation
    /// line, each with the pacer's state at its callback and completion and the run's last
    /// status time at its callback (nil: not recorded).
    private var recent: [(record: FrameRecord, pacer: PacerStateRestore?, status: Nanoseconds?)] = []
    /// The vblanks (`[sequence, flipNs]`) of the last shown frames before ``recent``: the ones
    /// after the lowest carried frame's callback go in the continuation line
    /// (``LogContinuation/vblanks``).
    private var shownBefore: [[Int64]] = []
    /// Session records (seat pauses and resumes) since the oldest of ``recent``: repeated after
    /// the next file's continuation line, so that a replay of that file knows of a gap among
    /// the frames it carries.
    private var recentSessions: [SessionChange] = []
    /// The last frame written was cut off by a seat pause (its line comes next, in this file).
    private var lastWasCutOff = false
    /// A session line is being written: a file it starts says how many of the session lines
    /// before it are repeated (``LogContinuation/sessions``).
    private var writingSession = false
    /// Shown frames before the carried ones kept for ``LogContinuation/vblanks``: at most
    /// 1 + the queue's capacity frames are in the pipeline at a callback.
    static let shownBeforeKept = 4
    /// Room kept after a frame a pause cut off, for the pause's line (about 110 bytes).
    static let sessionLineReserve = 256
    /// CRC lines not written yet, newline-separated, and how many.
    private var pendingCRC: [UInt8] = []
    private var pendingCRCLines = 0
    /// CRC lines are written together, in one write(2), before the next other line or once
    /// this many wait (2 s at 60 Hz). Written one by one they held the pacing loop up: the CI
    /// guest, writing to a shared folder, spent 163 s on 16 frames and 5,926 CRC lines.
    public static let crcLinesPerWrite = 120

    /// Creates (truncating) `path`; throws a one-line ``LineFile/Failure``. A `path` ending in
    /// `.zst` is written as a zstd stream (``CompressedLineFile``: flushed at least once a
    /// second, before each rotation and at the end); one ending in `.gz` is refused.
    public init(path: String, rotation: LogRotation? = nil) throws {
        file = try RotatingLineFile(path: path, rotation: rotation, compression: try LogCompression.of(path: path))
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        file.trailer = { [unowned self] segment in
            let line = [UInt8](
                try self.encoder.encode(LogRotated(segment: segment, frames: self.frames - self.framesBeforeSegment)))
            self.framesBeforeSegment = self.frames
            return line
        }
        file.preamble = { [unowned self] segment in
            let lowest = self.recent.min(by: { $0.record.frame < $1.record.frame })
            let after = lowest.map { $0.record.callbackNs > 0 ? $0.record.callbackNs : $0.record.renderStartNs } ?? .max
            let vblanks = self.shownBefore.filter { $0[1] > after }
            let c = LogContinuation(
                segment: segment, framesBefore: self.frames, carried: self.recent.map(\.record),
                pacer: lowest?.pacer, statusNs: lowest?.status,
                sessions: self.writingSession ? self.recentSessions.count : nil,
                vblanks: vblanks.isEmpty ? nil : vblanks)
            return [self.headerLine, [UInt8](try self.encoder.encode(c))]
                + (try self.recentSessions.map { [UInt8](try self.encoder.encode($0)) })
        }
    }

    /// Writes the header (first line of every file).
    public func begin(_ header: RunLogHeader) throws {
        headerLine = [UInt8](try encoder.encode(header))
        try file.write(line: headerLine, record: false, mayRotate: false)
    }

    /// Writes one frame (after the CRC lines read before it). `pacerState` and
    /// `completedPacerState` are the pacer's state when the frame's callback began and when it
    /// completed (`FrameReport.pacerState`, `FrameReport.pacerStateAtCompletion`), `statusTime`
    /// when the run had last reported its status as that callback began (`FrameReport.statusTime`):
    /// written in the continuation line of a later file of a rotated log that carries this
    /// frame as its lowest.
    public func write(
        _ record: FrameRecord, pacerState: PacerState? = nil, completedPacerState: PacerState? = nil,
        statusTime: Nanoseconds? = nil
    ) throws {
        try flushCRC()
        // The frames a seat pause cut off (at most latency 3's frames in flight) come just before
        // the pause's line, and they stay in one file with it: a file ending in session-paused
        // frames without the pause was replayed as flips that never completed, and `report`
        // lost the gap. The first keeps room for up to three more like it and the line.
        let cutOff = record.cause == .sessionPaused
        let line = [UInt8](try encoder.encode(record))
        try file.write(
            line: line, mayRotate: !(cutOff && lastWasCutOff),
            reserve: cutOff ? 3 * (line.count + 1) + Self.sessionLineReserve : 0)
        lastWasCutOff = cutOff
        frames += 1
        if file.rotation != nil {
            if recent.count == LogContinuation.carriedFrames {
                let r = recent.removeFirst().record
                if r.flipNs > 0 && (r.outcome == .onTime || r.outcome == .late) {
                    if shownBefore.count == Self.shownBeforeKept { shownBefore.removeFirst() }
                    shownBefore.append([Int64(bitPattern: r.sequence), r.flipNs])
                }
            }
            let pacer = pacerState.map {
                PacerStateRestore(callbackTime: record.callbackNs, state: $0, completed: completedPacerState)
            }
            recent.append((record, pacer, statusTime))
            if let oldest = recent.first?.record, !recentSessions.isEmpty {
                let since = oldest.callbackNs > 0 ? oldest.callbackNs : oldest.renderStartNs
                recentSessions.removeAll { $0.timeNs < since }
            }
        }
    }

    /// Writes one `--adapt` rate switch (a `"record":"rate-switch"` line).
    public func write(_ rateSwitch: RateSwitch) throws {
        try flushCRC()
        try file.write(line: [UInt8](try encoder.encode(rateSwitch)), record: false)
    }

    /// Writes a seat-session pause or resume (a `"record":"session"` line). A compressed log is
    /// flushed at once: no line may come until the session resumes.
    public func write(_ session: SessionChange) throws {
        try flushCRC()
        writingSession = true
        defer { writingSession = false }
        try file.write(line: [UInt8](try encoder.encode(session)), record: false, mayRotate: !lastWasCutOff)
        lastWasCutOff = false
        try file.compressedFile?.flush()
        if file.rotation != nil { recentSessions.append(session) }
    }

    /// Writes one line of the CRTC's CRC (a `"record":"crc"` line, in a version 3 log): held
    /// with the ones before it and written in one write(2) before the next other line, or once
    /// ``crcLinesPerWrite`` wait.
    public func write(_ crc: CRCRecord) throws {
        if pendingCRCLines > 0 { pendingCRC.append(0x0A) }
        pendingCRC += crc.jsonLine
        pendingCRCLines += 1
        if pendingCRCLines >= Self.crcLinesPerWrite { try flushCRC() }
    }

    /// Writes the CRC lines held back.
    public func flushCRC() throws {
        guard pendingCRCLines > 0 else { return }
        let bytes = pendingCRC
        pendingCRC.removeAll(keepingCapacity: true)
        pendingCRCLines = 0
        try file.write(line: bytes, record: false)
    }

    /// Writes a context line (temperature, frequency), in the current file even when it takes it
    /// past the limit (by its hundred bytes or so): a file it started held no frame when the run
    /// ended before the next one, and read as no log at all ("no frame records"; a session
    /// paused near the end of 60 frames rotated every 8 KiB: its last file held the context
    /// and end lines only). The next frame line starts the next file.
    public func write(_ context: ContextRecord) throws {
        try flushCRC()
        try file.write(line: [UInt8](try encoder.encode(context)), record: false, mayRotate: false)
    }

    /// Writes the end line with the summary and closes the file.
    public func end(_ summary: RunSummary) throws {
        try flushCRC()
        // Never rotated away from the frames it sums up.
        try file.write(line: [UInt8](try encoder.encode(RunLogEnd(summary: summary))), record: false, mayRotate: false)
        try file.finish()
    }
}
