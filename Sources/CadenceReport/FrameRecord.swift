import CadenceCore

/// One line of a `--log FILE.jsonl` run log: a frame's intent, timing, the kernel's answer and the
/// accounting. Versioned (``version``): readers reject versions they do not know.
/// All times are nanoseconds on the display clock (CLOCK_MONOTONIC on KMS); 0 means "did not happen".
public struct FrameRecord: Codable, Equatable, Sendable {
    /// The format version written by this build.
    public static let currentVersion = 1

    /// What the application asked for.
    /// How a frame asked to be shown (the log's `kind`): `PresentIntent` without its values.
    public enum IntentKind: String, Codable, Equatable, Sendable {
        /// At the next opportunity (`present()`).
        case next
        /// Not before a time (`present(at:)`).
        case at
        /// At the vblank nearest a time (`present(at:)`, nearest).
        case atNearest = "at-nearest"
        /// At least a duration after the previous frame (`present(afterMinimumDuration:)`).
        case afterMinimumDuration = "after-minimum-duration"
    }

    public struct Intent: Codable, Equatable, Sendable {
        /// "next", "at", "at-nearest" or "after-minimum-duration" in the log; a reader refuses
        /// any other.
        public var kind: IntentKind
        /// The display link's frame-rate range.
        public var range: FrameRateRange
        /// The intended presentation time.
        public var targetTimeNs: Int64
        /// Intended vblank sequence (fixed refresh).
        public var targetSequence: UInt64
        /// The minimum duration after the previous frame (after-minimum-duration only).
        public var minDurationNs: Int64?
        /// The time passed to present(at:) (at / at-nearest only).
        public var requestedTimeNs: Int64?
    }

    public var version: Int
    /// Application frame number.
    public var frame: Int
    /// Pacer frame id.
    public var id: UInt64
    public var intent: Intent
    public var latency: Int
    public var effectiveRateHz: Double
    /// Vblank timestamp the display-link callback fired at, and when it actually ran.
    public var callbackNs: Int64
    public var wakeNs: Int64
    /// How late the loop woke for the callback, measured from the vblank it was planned at
    /// (0 when it ran late only because this link's previous frame overran). Optional so that
    /// logs written before it existed still decode.
    public var schedulerDelayNs: Int64?
    /// Render deadline (the callback's targetTimestamp).
    public var deadlineNs: Int64
    public var renderStartNs: Int64
    public var renderEndNs: Int64
    /// When the backend finished keeping the frame's pixels (KMS: the shadow → scanout copy
    /// ended). Optional so that logs written before it existed still decode (then unknown).
    public var copyEndNs: Int64?
    /// When the flip was submitted.
    public var commitNs: Int64
    public var busyRetries: Int
    /// Kernel flip timestamp (presentedTime) and vblank sequence; 0 when not shown.
    public var flipNs: Int64
    public var sequence: UInt64
    /// When the completion event was received.
    public var receivedNs: Int64
    public var crtc: UInt32
    /// The connector the frame was shown on, in runs over several outputs (each output's log
    /// carries it on every line); absent in single-output logs and in logs written before it.
    public var connector: String?
    /// "on-time", "late", "discarded", "failed", "unconfirmed".
    public var outcome: FrameOutcome
    public var lateRefreshes: Int
    public var droppedRefreshes: Int
    public var hitchNs: Int64
    public var intervalNs: Int64
    public var intervalRefreshes: Int
    /// "render-late", "copy-late", "scheduler-late", "flip-late", "busy", "device-lost"; absent
    /// when nothing was missed.
    public var cause: DropCause?
    /// Vblank events the run received over a quarter refresh late since the previous frame's
    /// line (its process was held up): `[sequence, receivedNs]` pairs. Absent when none, and in
    /// logs written before it (whose replays deliver every vblank event on time).
    public var lateVBlankEvents: [[Int64]]?
    /// Vblank timestamps the run learned from vblank events and queries (not flips) since the
    /// previous frame's line, on a fixed-refresh display with a vblank interrupt:
    /// `[sequence, timestampNs]` pairs (`FrameReport.vblanks`). A replay puts its vblanks
    /// there. Absent when none, and in logs written before it (whose replays interpolate the
    /// vblanks between the logged ones).
    public var vblanks: [[Int64]]?

    public init(_ r: FrameReport) {
        version = Self.currentVersion
        frame = r.frameIndex
        id = r.id
        var kind = IntentKind.next
        var minDuration: Int64? = nil
        var requested: Int64? = nil
        switch r.intent {
        case .nextOpportunity: break
        case .at(let t, let nearest): kind = nearest ? .atNearest : .at; requested = t
        case .afterMinimumDuration(let d): kind = .afterMinimumDuration; minDuration = d
        }
        intent = Intent(kind: kind, range: r.range, targetTimeNs: r.targetTime, targetSequence: r.targetSequence, minDurationNs: minDuration, requestedTimeNs: requested)
        latency = r.latency
        effectiveRateHz = r.effectiveRateHz
        callbackNs = r.callbackTimestamp
        wakeNs = r.wakeTime
        schedulerDelayNs = r.schedulerDelay
        deadlineNs = r.deadline
        renderStartNs = r.renderStart
        renderEndNs = r.renderEnd
        copyEndNs = r.copyEnd
        commitNs = r.commitTime
        busyRetries = r.busyRetries
        flipNs = r.presentedTime
        sequence = r.sequence
        receivedNs = r.receivedTime
        crtc = r.crtc
        outcome = r.outcome
        lateRefreshes = r.lateRefreshes
        droppedRefreshes = r.droppedRefreshes
        hitchNs = r.hitch
        intervalNs = r.interval
        intervalRefreshes = r.intervalRefreshes
        cause = r.cause
        let late = r.lateVBlankEvents.map { [Int64(bitPattern: $0.sequence), $0.receivedAt] }
        lateVBlankEvents = late.isEmpty ? nil : late
        let seen = r.vblanks.map { [Int64(bitPattern: $0.sequence), $0.timestamp] }
        vblanks = seen.isEmpty ? nil : seen
    }
}
