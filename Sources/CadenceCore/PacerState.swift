/// What the pacer's predictions have learned from the vblanks it saw: the fitted vblank grid,
/// ε's window of residuals and the last "not before" answer; and the last shown frame, which
/// the taken-tie rule looks at. Every prediction of a fixed-refresh frame's vblank comes from
/// it, and it is built from the whole run (the grid forgets slowly, over about a thousand
/// vblanks; a chain of ties runs for as long as content keeps landing on vblanks), so a replay
/// that starts in the middle of a run (a later file of a rotated log) predicts as the run did
/// only when it starts from the run's own state.
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
    /// The last frame shown before (nil before the first, and in a log written before it was
    /// kept: a restore then leaves the pacer's own).
    var lastShown: Shown?
    /// The newest frame queued (presented, not yet completed), nil when none (and in a log
    /// written before it was kept).
    var lastQueued: Queued?

    /// ``FramePacer``'s last answer of a "not before" question (the same question gets no
    /// earlier answer).
    struct Answer: Codable, Equatable, Sendable {
        var time: Nanoseconds
        var nearest: Bool
        var sequence: UInt64
    }

    /// ``FramePacer``'s last shown frame: its vblank, its timestamp, and its "not before" time
    /// (nil for another intent): a "not before" frame after one that took the later vblank of a
    /// tie follows it across the tie (``FramePacer/plan(intent:update:)``), however many frames
    /// back the chain of ties began.
    struct Shown: Codable, Equatable, Sendable {
        var sequence: UInt64
        var time: Nanoseconds
        var notBefore: Nanoseconds?
    }

    /// ``FramePacer``'s newest queued frame: the vblank it is predicted to be shown at and its
    /// "not before" time (nil for another intent). The taken-tie rule looks at it before the
    /// last shown frame: at latency 2 and 3 the frame before a callback's is still in flight.
    struct Queued: Codable, Equatable, Sendable {
        var predicted: UInt64
        var notBefore: Nanoseconds?
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
        var shown: PacerState.Shown? = nil
        if havePresented {
            var notBefore: Nanoseconds? = nil
            if case .at(let t, false) = lastShownIntent { notBefore = t }
            shown = PacerState.Shown(sequence: lastPresentedSeq, time: lastPresentedTime, notBefore: notBefore)
        }
        var queued: PacerState.Queued? = nil
        if let q = newestQueued {
            var notBefore: Nanoseconds? = nil
            if case .at(let t, false) = q.intent { notBefore = t }
            queued = PacerState.Queued(predicted: q.predicted, notBefore: notBefore)
        }
        return PacerState(
            grid: grid, uncertainty: uncertainty, gridAnchored: gridAnchored, lastAnswer: lastAnswer, lastShown: shown,
            lastQueued: queued)
    }

    /// The newest frame queued, as the taken-tie rule sees it: the ring's newest, else, while
    /// the callback a state was restored at has queued none of its own, the run's then
    /// (``restoredQueued``).
    var newestQueued: (predicted: UInt64, intent: PresentIntent)? {
        if count > 0 {
            let last = (head + count - 1) % ring.count
            return (predicted[last], ring[last].intent)
        }
        guard let q = restoredQueued else { return nil }
        return (q.predicted, q.notBefore.map { .at($0, nearest: false) } ?? .nextOpportunity)
    }

    /// Replaces the prediction state with `s` (a replay starting where a run's log file starts).
    func restore(_ s: PacerState) {
        grid = s.grid
        uncertainty = s.uncertainty
        gridAnchored = s.gridAnchored
        lastAnswer = s.lastAnswer
        if let shown = s.lastShown {
            havePresented = true
            lastPresentedSeq = shown.sequence
            lastPresentedTime = shown.time
            lastShownIntent = shown.notBefore.map { .at($0, nearest: false) } ?? .nextOpportunity
        }
    }
}
