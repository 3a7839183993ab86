import CadenceReport
import Foundation
import FuzzSupport

#if canImport(Glibc)
import Glibc
#endif

/// Compressed run logs (`cadence run --log FILE.zst`) as the readers meet them. The first byte
/// picks the case:
///
/// - even: the rest is a zstd stream as found on disk (zstd's magic number, then the input):
///   every reader must read it or refuse it in one line, never crash or hang;
/// - odd: the rest is log text. When it is a readable log, its lines are written through
///   `CompressedLineFile` with a flush after the lines the second byte picks (as the 1 s flush
///   would), and the file is cut at a point the third byte picks, at or after the last flush
///   (as SIGKILL leaves it). The promise under test: the cut file reads, with the cut-off last
///   line allowed, as a prefix of the plain log's frames, holding at least every frame flushed
///   before the cut; uncut (the stream ended), it reads as the plain log, frame for frame.
let path = "/tmp/cadence-fuzz-zlog-\(getpid()).jsonl.zst"

func write(_ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0, "cannot write \(path)")
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    _ = close(fd)
}

func fileSize() -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

runFuzzer { data, size in
    let input = Array(fuzzBytes(data, size))
    guard input.count >= 3 else { return 0 }
    if input[0] & 1 == 0 {
        write([0x28, 0xB5, 0x2F, 0xFD] + input[1...])
        for partial in [false, true] { _ = try? RunLog.read(path: path, allowPartialLastLine: partial) }
        return 0
    }
    let flushPattern = input[1]
    let cutPick = Int(input[2])
    let text = Array(input[3...])
    let lines = text.split(separator: 0x0A, omittingEmptySubsequences: true).map { Array($0) }
    guard !lines.isEmpty,
        let plain = try? RunLog.parse(Data(lines.joined(separator: [0x0A]) + [0x0A]), name: "fuzz")
    else { return 0 }
    guard let file = try? CompressedLineFile(path: path, flushIntervalNs: .max) else {
        fatalError("cannot create \(path)")
    }
    var flushedLines = 0
    var flushedSize = 0
    for (i, line) in lines.enumerated() {
        try! file.write(line: line)
        if flushPattern & (1 << UInt8(i % 8)) != 0 {
            try! file.flush()
            flushedLines = i + 1
            flushedSize = fileSize()
        }
    }
    let ended = cutPick == 255
    if ended {
        try! file.finish()
    } else {
        try! file.flush()  // everything written, then cut between the last chosen flush and here
        let total = fileSize()
        let cut = flushedSize + (total - flushedSize) * cutPick / 255
        precondition(truncate(path, off_t(cut)) == 0)
    }
    let flushedFrames: Int
    if flushedLines == 0 {
        flushedFrames = 0
    } else {
        let prefix = Data(lines[0..<flushedLines].joined(separator: [0x0A]) + [0x0A])
        flushedFrames = (try? RunLog.parse(prefix, name: "fuzz").records.count) ?? 0
    }
    let read: RunLog
    do {
        read = try RunLog.read(path: path, allowPartialLastLine: !ended)
    } catch {
        if ended || flushedFrames > 0 {
            fatalError("a compressed log with \(flushedFrames) flushed frames does not read: \(error)")
        }
        return 0
    }
    guard read.records.count <= plain.records.count,
        Array(plain.records.prefix(read.records.count)) == read.records
    else { fatalError("the compressed log reads frames the plain log does not have") }
    if ended && read.records.count != plain.records.count {
        fatalError("an ended compressed log reads \(read.records.count) of \(plain.records.count) frames")
    }
    if read.records.count < flushedFrames {
        fatalError("a cut compressed log reads \(read.records.count) frames of the \(flushedFrames) flushed")
    }
    return 0
}
