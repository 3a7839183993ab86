import CadenceCore

/// What `cadence validate` judges besides the summary: the largest drop event, and (for a
/// warm-up or windows) the frames themselves.
///
/// Failure rule: none.
public final class FrameTally: FrameSink {
    /// The most refreshes one shown frame followed.
    public private(set) var largestDropEvent = 0
    /// Every completed frame, in completion order (kept only when asked).
    public private(set) var frames: [FrameReport] = []
    private let keepFrames: Bool

    /// `keepFrames`: keep every frame (memory grows with the run).
    public init(keepFrames: Bool) { self.keepFrames = keepFrames }

    /// Counts the frame.
    public func frame(_ report: FrameReport) {
        if report.wasPresented { largestDropEvent = max(largestDropEvent, report.droppedRefreshes) }
        if keepFrames { frames.append(report) }
    }
}

/// The frame index of every frame id (the scanout verification names frames by id; the
/// summary by index).
public final class FrameIndexes: FrameSink {
    /// Frame id → frame index.
    public private(set) var indexes: [FrameID: Int] = [:]

    /// None yet.
    public init() {}

    /// Notes the frame's index.
    public func frame(_ report: FrameReport) { indexes[report.id] = report.frameIndex }
}
