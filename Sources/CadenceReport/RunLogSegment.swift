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
    /// The last frame records of the file before (up to ``carriedFrames``), not counted as this
    /// file's frames: what a replay of this file starts from, so that the frames in flight
    /// and the display link's phase at the cut are played again before this file's first frame.
    public var carried: [FrameRecord]
    /// The pacer's prediction state (the fitted vblank grid, ε's residuals) when the callback of
    /// the lowest carried frame began, and that callback's time: a replay of this file starts
    /// there and restores it, so that it predicts from the whole run's vblanks as the run did,
    /// not from the few it replays. Absent in logs written before it existed and for a first line
    /// not made in a callback; such a file's replay fits from the carried frames' vblanks.
    public var pacer: PacerStateRestore?
    /// When the run had last reported its status (about once a second) as the callback of the
    /// lowest carried frame began (`FrameReport.statusTime`): the run's loop waits no longer
    /// than a second after it, and with nothing to read (the process stalled, its events held
    /// back) it wakes then, queries the vblank and commits what is due. A replay of this file
    /// starts its status clock there. Absent in logs written before it existed (their replays
    /// start it at their start) and for a first line not made in a callback.
    public var statusNs: Int64?
    /// How many of the session lines right after this line repeat those of the files before
    /// (seat pauses and resumes since the first carried frame's callback; see
    /// ``RunLog/carriedSessions``). Written when a session line started this file: that line
    /// comes right after the repeated ones and is not one of them. Absent otherwise (and in logs
    /// written before it): every session line right after this one repeats one.
    public var sessions: Int?
    /// `[sequence, timestampNs]` of the vblanks that frames before the carried ones were shown
    /// at after the lowest carried frame's callback (at latency 2 and 3, the frames then in
    /// flight): a replay of this file starts at that callback without those frames, and its
    /// vblanks between the carried frames' are the run's only with these (interpolated, a
    /// jittery panel's were off by its jitter, and the pacer predicted from them). Absent when
    /// there are none and in logs written before it existed.
    public var vblanks: [[Int64]]?

    /// Frame records carried into the next file's continuation line: latency 3 keeps up to 3
    /// frames in the pipeline; 8 also covers the two frames a replay's start cannot place.
    public static let carriedFrames = 8

    public init(
        segment: Int, framesBefore: Int, carried: [FrameRecord], pacer: PacerStateRestore? = nil,
        statusNs: Int64? = nil, sessions: Int? = nil, vblanks: [[Int64]]? = nil
    ) {
        self.segment = segment
        self.framesBefore = framesBefore
        self.carried = carried
        self.pacer = pacer
        self.statusNs = statusNs
        self.sessions = sessions
        self.vblanks = vblanks
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
        let span = frameSpan.map { "frames \($0.lowerBound)–\($0.upperBound)" } ?? "no frames"
        let next = rotated != nil ? ", continued in the next file" : end != nil ? ", the last one" : ""
        return "segment \(k) of a rotated log (\(span)\(next))"
    }
}
