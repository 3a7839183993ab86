/// What the pacer's predictions have learned from the vblanks it saw: the fitted vblank grid,
/// ε's window of residuals and the last "not before" answer. Every prediction of a fixed-refresh
/// frame's vblank comes from it, and it is built from the whole run (the grid forgets slowly,
/// over about a thousand vblanks), so a replay that starts in the middle of a run (a later file
/// of a rotated log) predicts as the run did only when it starts from the run's own state.
///
/// ``FramePacer/recordsPacerState`` puts it in every ``FrameReport/pacerState`` (as it was when
/// the frame's callback began); a run log writes it at each rotation, and a replay restores it
/// when that frame's callback begins (``RunConfiguration/restoredPacerState``). Its contents are the
/// pacer's own: compare and store them, do not read meaning into the fields.
public struct PacerState: Codable, Equatable, Sendable {
    var grid: VBlankGrid
    var uncertainty: TimestampUncertainty
    var gridAnchored: Bool
    var lastAnswer: Answer?

    /// ``FramePacer``'s last answer of a "not before" question (the same question gets no
    /// earlier answer).
    struct Answer: Codable, Equatable, Sendable {
        var time: Nanoseconds
        var nearest: Bool
        var sequence: UInt64
    }
}

/// A ``PacerState`` to restore when the display link's callback at ``callbackTime`` begins.
public struct PacerStateRestore: Codable, Equatable, Sendable {
    /// The callback's vblank timestamp (``FrameReport/callbackTimestamp``; a log's `callbackNs`).
    public var callbackTime: Nanoseconds
    /// The state the pacer had when the run's callback at that time began.
    public var state: PacerState
    /// The state the pacer had when the frame made in that callback completed
    /// (``FrameReport/pacerStateAtCompletion``), restored again then: what the pacer learned
    /// between the callback and that completion (a vblank event of the callback's vblank read
    /// after it, flips of frames before the replay's first) can differ in a replay.
    public var completed: PacerState?

    public init(callbackTime: Nanoseconds, state: PacerState, completed: PacerState? = nil) {
        self.callbackTime = callbackTime
        self.state = state
        self.completed = completed
    }
}

extension FramePacer {
    /// The prediction state now (see ``PacerState``).
    public var pacerState: PacerState {
        PacerState(grid: grid, uncertainty: uncertainty, gridAnchored: gridAnchored, lastAnswer: lastAnswer)
    }

    /// Replaces the prediction state with `s` (a replay starting where a run's log file starts).
    func restore(_ s: PacerState) {
        grid = s.grid
        uncertainty = s.uncertainty
        gridAnchored = s.gridAnchored
        lastAnswer = s.lastAnswer
    }
}
