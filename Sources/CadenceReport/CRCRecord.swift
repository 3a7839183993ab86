import CadenceCore

/// One line of the CRTC's CRC in a run log that verified its scanout (`{"record":"crc",…}`,
/// version 3, ``RunLogHeader/crcSource``): the vblank it was taken at, the CRC words folded
/// into 64 bits (`ScanoutVerifier.fold(_:)`) as 16 hex digits, and when the line was read.
/// One per line the driver wrote, in the order they were read, so that `report` judges the
/// content again from the log alone (``LogScanout``).
public struct CRCRecord: Codable, Equatable, Sendable {
    /// Always "crc".
    public var record: String = "crc"
    /// Always ``RunLogHeader/scanoutVersion``.
    public var version: Int = RunLogHeader.scanoutVersion
    /// The vblank the line names (widened to 64 bits as the flips' sequences are).
    public var sequence: UInt64
    /// The folded CRC, 16 lowercase hex digits (a JSON number would lose bits past 2^53).
    public var crc: String
    /// When the line was read (CLOCK_MONOTONIC ns, the frames' clock).
    public var receivedNs: Int64

    /// The record of `sample`.
    public init(_ sample: ScanoutVerifier.Sample) {
        sequence = sample.sequence
        let hex = String(sample.crc, radix: 16)
        crc = String(repeating: "0", count: 16 - hex.count) + hex
        receivedNs = sample.receivedAt
    }

    /// The record as one JSON line, byte for byte what a `JSONEncoder` with sorted keys writes,
    /// without the encoder's cost (one line a vblank is written from the pacing thread).
    public var jsonLine: [UInt8] {
        // `crc` is hex digits only: nothing in it needs escaping.
        var s = #"{"crc":""# + crc + #"","receivedNs":\#(receivedNs),"record":"crc""#
        s += #","sequence":\#(sequence),"version":\#(version)}"#
        return Array(s.utf8)
    }

    /// The sample it records; nil when `crc` is not 1 to 16 hex digits.
    public var sample: ScanoutVerifier.Sample? {
        guard !crc.isEmpty, crc.count <= 16, let v = UInt64(crc, radix: 16) else { return nil }
        return ScanoutVerifier.Sample(sequence: sequence, crc: v, receivedAt: receivedNs)
    }
}

/// Scanout verification judged again from a run log: the log's CRC lines against its shown
/// frames' flips, by the same rules the run used (`ScanoutVerifier`).
public enum LogScanout {
    /// The verdict of `log`'s CRC lines against its frames, with stale frames named by frame
    /// index as the run names them; nil when the log carries no CRCs. The cost of reading the
    /// lines (`reads`, `readMicroseconds`) is the run's own and is not in a log.
    public static func judge(_ log: RunLog) -> ScanoutSummary? {
        guard let source = log.header?.crcSource else { return nil }
        var v = ScanoutVerifier()
        var index: [FrameID: Int] = [:]
        // Lines and flips interleaved by vblank, as the run read them (each list in log order):
        // the verifier judges as it goes and waits only so long for a late line or flip.
        let samples = log.crcSamples, flips = log.crcFlips
        var i = 0, j = 0
        while i < samples.count || j < flips.count {
            if j == flips.count || (i < samples.count && samples[i].sequence <= flips[j].flip.sequence) {
                v.add(samples[i])
                i += 1
            } else {
                v.add(flips[j].flip)
                index[flips[j].flip.frame] = flips[j].frame
                j += 1
            }
        }
        var summary = v.finish()
        summary.source = source
        summary.staleFrames = summary.staleFrames.map { FrameID(index[$0] ?? Int($0)) }
        return summary
    }
}

extension ScanoutSummary {
    /// The CRC check's verdict in one line, as the run prints it and `report` prints it again
    /// from a log: frames verified, mismatches, inexact frames, repeated refreshes, lines (the
    /// read cost, the run's own, is not in it).
    public var crcVerdict: String {
        var line = "crc \(source ?? "auto"): \(verified) of \(frames) frames verified  mismatches \(mismatches)"
        line += " (stale \(stale)"
        if !staleFrames.isEmpty { line += " at frame " + staleFrames.map(String.init).joined(separator: ",") }
        line += ", changes without flip \(changesWithoutFlip))  inexact \(inexact) (missing lines \(missingLines)"
        line += ", repeated \(repeatedLines), catch-up \(catchUpLines))"
        return line + "  repeated refreshes \(repeatedRefreshes)  lines \(lines)"
    }
}
