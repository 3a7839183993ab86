import Foundation

extension ObservedLog {
    /// Whether the file at `path` starts with an observe log's first line, plain or
    /// zstd-compressed (`cadence observe --log FILE.zst`); false when it cannot be read.
    public static func isObserveLog(path: String) -> Bool {
        guard let head = try? text(of: path, upTo: 256) else { return false }
        return isObserveLog(head)
    }

    /// Reads and parses the observe log at `path`, decompressing a zstd stream (see
    /// ``parse(_:name:allowPartialLastLine:)`` for the checks and one-line errors).
    public static func read(path: String, allowPartialLastLine: Bool = false) throws -> ObservedLog {
        try parse(try text(of: path), name: path, allowPartialLastLine: allowPartialLastLine)
    }

    /// The file's text (decompressed), at most `limit` bytes.
    static func text(of path: String, upTo limit: Int = .max) throws -> Data {
        let source = try LogByteSource(path: path)
        var data = Data()
        let chunk = 1 << 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        while data.count < limit {
            let n = try source.read(into: buffer, count: Swift.min(chunk, limit - data.count))
            if n == 0 { break }
            data.append(buffer, count: n)
        }
        return data
    }
}
