import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension CSVExport {
    /// How far out of frame order a log's records may be for ``write(logs:allowPartialLastLine:to:)``
    /// to sort them in one pass. A log is written in completion order, which differs from frame
    /// order by at most the frames in flight (pipelining depth 3, plus the frames a late flip
    /// lets the link discard): far below this.
    public static let reorderWindow = 4096

    /// Writes the CSV of a run log (one file, or the files of one rotated log as
    /// `RunLog.stream(paths:allowPartialLastLine:frame:)` reads them) to `path`, the same bytes
    /// as ``csv(_:)`` of its records, reading the log once in bounded memory: records are put in
    /// frame order in a window of ``reorderWindow`` records. A log out of order by more than
    /// that (none Cadence writes) is read a second time, whole, and sorted as ``csv(_:)`` does.
    ///
    /// The CSV is written to a temporary file beside `path` and renamed over it at the end, so a
    /// failure leaves no partial CSV. Returns the number of bytes written.
    public static func write(logs: [String], allowPartialLastLine: Bool = false, to path: String) throws -> Int {
        try write(logs: logs, allowPartialLastLine: allowPartialLastLine, to: path, window: reorderWindow).bytes
    }

    /// ``write(logs:allowPartialLastLine:to:)`` with a window of `window` records; also says
    /// whether the log fitted it and the most records the window held.
    static func write(
        logs: [String], allowPartialLastLine: Bool, to path: String, window capacity: Int
    ) throws -> (bytes: Int, inOrder: Bool, highWater: Int) {
        let temporary = path + ".partial"
        var output = try CSVFileOutput(path: temporary)
        defer { output.close() }
        var window = ReorderWindow(capacity: capacity)
        var origin: Int64? = nil
        var last: Int64? = nil
        try output.write(line: columns.joined(separator: ","))
        func emit(_ r: FrameRecord) throws {
            try output.write(line: row(r, origin: &origin, lastPresent: &last))
        }
        var inOrder = true
        do {
            _ = try RunLog.stream(paths: logs, allowPartialLastLine: allowPartialLastLine) { r in
                guard inOrder else { return }
                if !window.add(r) {
                    inOrder = false
                    return
                }
                while let r = window.takeOverflow() { try emit(r) }
            }
            if inOrder {
                while let r = window.takeFirst() { try emit(r) }
            } else {
                output.close()
                output = try CSVFileOutput(path: temporary)
                let records = try RunLog.read(paths: logs, allowPartialLastLine: allowPartialLastLine).records
                try output.write(text: csv(records))
            }
            let bytes = output.bytesWritten
            try output.finish()
            guard rename(temporary, path) == 0 else {
                throw LineFile.Failure("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            return (bytes, inOrder, window.highWater)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Records held back until no later record can come before them in frame order.
    struct ReorderWindow {
        let capacity: Int
        /// Sorted by (frame, id) from `head` on.
        private var records: [FrameRecord] = []
        private var head = 0
        /// The last record handed out.
        private var lastOut: (frame: Int, id: UInt64)? = nil
        /// The most records held at once.
        private(set) var highWater = 0

        init(capacity: Int) { self.capacity = capacity }

        private static func before(_ a: FrameRecord, _ b: FrameRecord) -> Bool { (a.frame, a.id) < (b.frame, b.id) }

        /// Adds `r` in order; false when it belongs before a record already handed out (the
        /// log is further out of order than the window).
        mutating func add(_ r: FrameRecord) -> Bool {
            if let l = lastOut, (r.frame, r.id) < l { return false }
            records.append(r)
            var i = records.count - 1
            while i > head && Self.before(r, records[i - 1]) {
                records[i] = records[i - 1]
                i -= 1
            }
            records[i] = r
            highWater = Swift.max(highWater, records.count - head)
            return true
        }

        /// The first record once more than `capacity` are held.
        mutating func takeOverflow() -> FrameRecord? {
            records.count - head > capacity ? takeFirst() : nil
        }

        /// The first record held, if any.
        mutating func takeFirst() -> FrameRecord? {
            guard head < records.count else { return nil }
            let r = records[head]
            head += 1
            lastOut = (r.frame, r.id)
            if head >= capacity && head * 2 >= records.count {
                records.removeFirst(head)
                head = 0
            }
            return r
        }
    }
}

/// A file written through stdio's buffer (a write(2) per 64 KiB, not per line).
struct CSVFileOutput {
    let path: String
    private var file: UnsafeMutablePointer<FILE>?
    private(set) var bytesWritten = 0

    init(path: String) throws {
        self.path = path
        guard let f = fopen(path, "w") else {
            throw LineFile.Failure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        setvbuf(f, nil, _IOFBF, 1 << 16)
        file = f
    }

    mutating func write(line: String) throws {
        try write(text: line)
        try write(text: "\n")
    }

    mutating func write(text: String) throws {
        var text = text
        let n = text.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) }
        bytesWritten += n
        if n != text.utf8.count { throw failure() }
    }

    /// Flushes and closes; throws when the data did not all reach the file.
    mutating func finish() throws {
        guard let f = file else { return }
        file = nil
        if fflush(f) != 0 {
            let e = failure()
            fclose(f)
            throw e
        }
        if fclose(f) != 0 { throw failure() }
    }

    /// Closes without checking (after a failure).
    mutating func close() {
        if let f = file { fclose(f) }
        file = nil
    }

    private func failure() -> LineFile.Failure {
        LineFile.Failure("cannot write \(path): \(String(cString: strerror(errno)))")
    }
}
