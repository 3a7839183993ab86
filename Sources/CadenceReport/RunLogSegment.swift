import CadenceCore
import Foundation

/// The second line of every file after the first of a rotated run log (`--log-max-size`):
/// which segment of the run the file is and where the run stood when it started. With the
/// header line before it (repeated in every file), the file reads on its own.
public struct LogContinuation: Codable, Equatable, Sendable {
    /// Always "continuation".
    public var record: String = "continuation"
    public var version: Int = RunLogHeader.currentVersion
    /// The file's number in the run, from 1 (the first file has no continuation line).
    public var segment: Int
    /// Frame records written in the earlier files.
    public var framesBefore: Int
    /// The last frame record of the file before: its frame number, vblank sequence, kernel
    /// flip timestamp (0 when it was not shown) and outcome (absent when there was none).
    public var previousFrame: Int?
    public var previousSequence: UInt64?
    public var previousFlipNs: Int64?
    public var previousOutcome: FrameOutcome?
    /// The frame rate the display link ran at (an `--adapt` run may have switched).
    public var effectiveRateHz: Double?

    public init(segment: Int, framesBefore: Int, previous: FrameRecord?) {
        self.segment = segment
        self.framesBefore = framesBefore
        previousFrame = previous?.frame
        previousSequence = previous?.sequence
        previousFlipNs = previous?.flipNs
        previousOutcome = previous?.outcome
        effectiveRateHz = previous?.effectiveRateHz
    }
}

/// The last line of a file that a rotated run log continued in the next file: this segment is
/// complete (a file without it, or an end line, was cut short by a killed run).
public struct LogRotated: Codable, Equatable, Sendable {
    /// Always "rotated".
    public var record: String = "rotated"
    public var version: Int = RunLogHeader.currentVersion
    /// The file's number in the run, from 1.
    public var segment: Int
    /// Frame records in this file.
    public var frames: Int

    public init(segment: Int, frames: Int) {
        self.segment = segment
        self.frames = frames
    }
}

extension RunLog {
    /// The file's number in a rotated run log (nil for a log that was never rotated).
    public var segment: Int? { continuation?.segment ?? rotated?.segment }

    /// "segment K of a rotated log (frames A–B)" for a file of a rotated log, else nil.
    public var segmentDescription: String? {
        guard let k = segment else { return nil }
        let frames = records.map(\.frame)
        let span = frames.min().map { "frames \($0)–\(frames.max()!)" } ?? "no frames"
        let next = rotated != nil ? ", continued in the next file" : end != nil ? ", the last one" : ""
        return "segment \(k) of a rotated log (\(span)\(next))"
    }
}
