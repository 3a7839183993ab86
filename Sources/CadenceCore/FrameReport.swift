/// When a presented frame should reach the screen.
///
/// The contracts use ε, the timestamp uncertainty (``FramePacer/timestampUncertainty``): the
/// jitter the pacer measures on the vblank timestamps, at least 1 µs (the resolution of the
/// kernel's page-flip events) and at most 0.5% of a refresh.
public enum PresentIntent: Equatable, Sendable {
    /// The next opportunity: the display link's target presentation when the frame was made in a
    /// link callback, otherwise the first vblank after the frames already queued.
    case nextOpportunity
    /// At `time`. `nearest: true` (the default, as Metal's `present(atTime:)`, "as close as
    /// possible"): the vblank nearest to `time`, an exact tie going to the later one.
    /// `nearest: false` ("not before"): the first vblank predicted at or after `time − ε`.
    /// Under VRR the flip is aimed at `time` itself; "not before" then also holds the commit
    /// until `time − ε`, since a VRR flip starts a refresh as soon as it is committed.
    case at(Nanoseconds, nearest: Bool = true)
    /// Never shown before the previous shown frame's *actual* presentation (its kernel
    /// timestamp) plus this many nanoseconds, minus ε. Fixed refresh: the smallest whole number
    /// n ≥ 1 of refreshes with n × refresh ≥ duration − ε after the previous frame's vblank;
    /// VRR: the flip is not committed before that presentation + duration − ε.
    case afterMinimumDuration(Nanoseconds)
}

/// What became of a frame.
public enum FrameOutcome: String, Codable, Sendable, CaseIterable {
    /// Shown at its target vblank.
    case onTime = "on-time"
    /// Shown, ``FrameReport/lateRefreshes`` refreshes after its target.
    case late
    /// Never shown: a newer frame was due at the same vblank, or the display replaced it.
    case discarded
    /// Never shown: the flip failed (device lost).
    case failed
    /// Submitted but its completion event never came; whether and when it was shown is unknown.
    case unconfirmed
}

/// Why a frame was late or never shown.
public enum DropCause: String, Codable, Sendable, CaseIterable {
    /// Rendering finished after the frame's deadline (``DisplayLinkUpdate/deadline``).
    case renderLate = "render-late"
    /// Rendering finished in time, but keeping the frame's pixels (KMS: copying the shadow
    /// surface into the scanout buffer, ``DisplayBackend/finish(frame:)``) ended after the deadline.
    case copyLate = "copy-late"
    /// The pacing loop woke late for the frame (its vblank event arrived late).
    case schedulerLate = "scheduler-late"
    /// The frame was committed in time but the flip (or the previous flip's completion) came late.
    case flipLate = "flip-late"
    /// The display refused the flip with EBUSY.
    case busy
    /// The device went away.
    case deviceLost = "device-lost"
    /// The seat session was paused (VT switched away) before the frame could be shown: it was
    /// waiting or its flip never completed. Not a drop: no refresh inside a session gap counts.
    case sessionPaused = "session-paused"
    /// The output was unplugged (its connector reported disconnected) before the frame was
    /// shown: it was waiting or its flip was in flight.
    case disconnected

    /// Position in `allCases` (without building the array): a slot for per-cause counters.
    public var index: Int {
        switch self {
        case .renderLate: return 0
        case .copyLate: return 1
        case .schedulerLate: return 2
        case .flipLate: return 3
        case .busy: return 4
        case .deviceLost: return 5
        case .sessionPaused: return 6
        case .disconnected: return 7
        }
    }
}

/// Everything known about one frame once it is complete: intent, timing, what the kernel reported,
/// and the accounting. Presented handlers, the accounting and the per-frame log all consume it.
/// Times are nanoseconds on the display clock; 0 means "did not happen".
public struct FrameReport: Equatable, Sendable {
    /// Pacer-wide identifier.
    public var id: FrameID = 0
    /// The application's frame number (as passed to `present`).
    public var frameIndex: Int = 0
    public var intent: PresentIntent = .nextOpportunity
    /// The range of the link the frame was made for (default when none).
    public var range: FrameRateRange = .default
    /// The link's effective rate at the time (Hz; 0 when no link).
    public var effectiveRateHz: Double = 0
    /// Frame latency the frame was made with.
    public var latency: Int = 1
    /// Vblank timestamp of the link callback that made the frame.
    public var callbackTimestamp: Nanoseconds = 0
    /// When the callback actually ran.
    public var wakeTime: Nanoseconds = 0
    /// How late the loop woke for the callback (0 when it was busy with this link's previous frame).
    public var schedulerDelay: Nanoseconds = 0
    /// The callback was held back until a late flip completion freed the pipeline.
    public var waitedOnLateFlip: Bool = false
    /// When committed: the last flip completion before the commit was received after this
    /// frame's deadline, over a quarter refresh after its own vblank, while vblank events came on
    /// time: a commit after the deadline waited on a late flip event (flip-late), not on a
    /// process held up (scheduler-late). Decided at the commit, from the completion that held it
    /// (not the frame's own, which comes after).
    public var committedBehindLateFlipEvent: Bool = false
    /// Vblank events received over a quarter refresh after their timestamps since the previous
    /// completed frame (the process was held up): the pacer judges causes by how late its vblank
    /// events came, so a log keeps these receipts and a replay delivers those events as late.
    public var lateVBlankEvents: [VBlankReceipt] = []
    /// Vblank timestamps the pacer learned from vblank events and vblank queries (not from flip
    /// completions) since the previous completed frame, on a fixed-refresh display with a vblank
    /// interrupt: its vblank grid, ε and predictions come from them, so a log keeps them and a
    /// replay predicts from the same timestamps. A vblank event carries nanoseconds where the
    /// flip shown at the same vblank carries whole microseconds (KMS), and a jittery panel's
    /// vblanks between shown frames cannot be interpolated. A timestamp equal to the one already
    /// known for its vblank is not repeated.
    public var vblanks: [VBlank] = []
    /// The pacer's prediction state when the callback that made the frame began; nil unless
    /// ``FramePacer/recordsPacerState`` is on (a rotated run log writes it at each cut, so that a
    /// replay of the next file starts from it) or the frame was not presented in a callback.
    public var pacerState: PacerState? = nil
    /// The pacer's prediction state when the frame completed (its flip shown, discarded or
    /// failed, and every vblank before learned); nil unless ``FramePacer/recordsPacerState`` is on.
    public var pacerStateAtCompletion: PacerState? = nil
    /// When the run's loop had last reported its status (``PacingRun/onStatus``, about once a
    /// second) as the callback that made the frame began; nil unless
    /// ``FramePacer/recordsPacerState`` is on, outside a ``PacingRun`` or when the frame was
    /// not presented in a callback. The loop waits no longer than until a second after it, and
    /// wakes then with nothing to read: a rotated run log writes it at each cut, so that a
    /// replay of the next file wakes when the run did.
    public var statusTime: Nanoseconds? = nil
    /// Refreshes per frame of the display link that made this frame when the link was presenting
    /// steadily (its previous callback presented too): the frame was due that many refreshes after
    /// the previous shown frame, whatever vblank its callback then aimed at. 0: no such cadence
    /// (first frame, after a pause, `present(at:)`, minimum durations, VRR).
    public var cadenceRefreshes: Int = 0
    /// Render deadline (the callback's ``DisplayLinkUpdate/deadline``).
    public var deadline: Nanoseconds = 0
    /// Intended presentation time (the target vblank's predicted time).
    public var targetTime: Nanoseconds = 0
    /// Intended vblank sequence (fixed refresh).
    public var targetSequence: UInt64 = 0
    public var renderStart: Nanoseconds = 0
    public var renderEnd: Nanoseconds = 0
    /// When ``DisplayBackend/finish(frame:)`` returned: the copy into a scanout buffer ended
    /// (0 when unknown, e.g. a log written before it was recorded).
    public var copyEnd: Nanoseconds = 0
    /// When the flip was submitted (0 if never).
    public var commitTime: Nanoseconds = 0
    /// Submissions refused with EBUSY before it went through.
    public var busyRetries: Int = 0
    /// Kernel timestamp of the vblank the frame was shown at (`presentedTime`; 0 if never shown).
    public var presentedTime: Nanoseconds = 0
    /// Vblank sequence it was shown at (0 if never shown).
    public var sequence: UInt64 = 0
    /// When the completion event reached the pacer.
    public var receivedTime: Nanoseconds = 0
    public var outcome: FrameOutcome = .onTime
    /// Refreshes after the target (0 when on time or not shown).
    public var lateRefreshes: Int = 0
    /// Refreshes that showed a stale frame while this one (or a discarded predecessor) was due.
    public var droppedRefreshes: Int = 0
    /// How long the screen showed stale content before this frame: its presentation minus the
    /// expected presentation of the first dropped refresh (the target of this frame or of the
    /// earliest discarded frame before it). 0 when ``droppedRefreshes`` is 0 or not shown.
    public var hitch: Nanoseconds = 0
    /// Time since the previous shown frame (0 for the first or when not shown).
    public var interval: Nanoseconds = 0
    /// Refreshes since the previous shown frame (0 for the first or when not shown).
    public var intervalRefreshes: Int = 0
    /// CRTC the frame was flipped on.
    public var crtc: UInt32 = 0
    /// Why it was late or not shown; nil when on time.
    public var cause: DropCause? = nil

    public init() {}

    /// True when the frame reached the screen with a known timestamp.
    public var wasPresented: Bool { outcome == .onTime || outcome == .late }
}

/// A vblank event and when the client received it.
public struct VBlankReceipt: Equatable, Sendable {
    /// The vblank's sequence number.
    public var sequence: UInt64
    /// When the event was read.
    public var receivedAt: Nanoseconds

    /// A receipt of the event for vblank `sequence`, read at `receivedAt`.
    public init(sequence: UInt64, receivedAt: Nanoseconds) {
        self.sequence = sequence
        self.receivedAt = receivedAt
    }
}
