/// What goes into a ``ScanoutVerifier`` (CRC samples, flips) and comes out (frame verdicts),
/// and the records it keeps while judging.
extension ScanoutVerifier {
    /// One CRC line: the vblank it was taken at, the CRC words folded into 64 bits
    /// (``ScanoutVerifier/fold(_:)``), and when it was read (CLOCK_MONOTONIC ns).
    public struct Sample: Equatable, Sendable {
        public var sequence: UInt64
        public var crc: UInt64
        public var receivedAt: Nanoseconds
        public init(sequence: UInt64, crc: UInt64, receivedAt: Nanoseconds) {
            self.sequence = sequence; self.crc = crc; self.receivedAt = receivedAt
        }
    }

    /// One flip completion: the frame, the vblank its event names, the event's timestamp.
    public struct Flip: Equatable, Sendable {
        public var frame: FrameID
        public var sequence: UInt64
        public var timestamp: Nanoseconds
        public init(frame: FrameID, sequence: UInt64, timestamp: Nanoseconds) {
            self.frame = frame; self.sequence = sequence; self.timestamp = timestamp
        }
    }

    /// One frame's verdict, given as soon as it is known (``takeVerdicts()``).
    public struct FrameVerdict: Equatable, Sendable {
        /// What the CRC said of a frame.
        public enum Kind: Equatable, Sendable {
            /// Its content change came at exactly the vblank its flip names.
            case verified
            /// Its vblank showed no content change (counted in ``ScanoutSummary/stale``).
            case stale
            /// Not judged: a line missing around it, a catch-up, or outside the lines read
            /// (counted in ``ScanoutSummary/inexact``).
            case inexact
            /// Its flip names a vblank an earlier flip named, inside the lines read: neither
            /// judged nor counted as inexact.
            case duplicate
        }
        /// The flip's frame.
        public var frame: FrameID
        /// The vblank its flip names.
        public var sequence: UInt64
        /// The verdict.
        public var kind: Kind
        /// A verdict.
        public init(frame: FrameID, sequence: UInt64, kind: Kind) {
            self.frame = frame; self.sequence = sequence; self.kind = kind
        }
    }

    /// A flip not judged yet: the first of its vblank, and the frames of later flips naming the
    /// same vblank (their count only, unless verdicts are kept).
    struct PendingFlip: Sendable {
        var sequence: UInt64
        var frame: FrameID
        var timestamp: Nanoseconds
        var duplicates = 0
        var duplicateFrames: [FrameID] = []
    }

    /// The change whose line may turn out to be a driver's catch-up (see the type's notes),
    /// while unchanged flips after it may still be read with it.
    struct Chain: Sendable {
        var sequence: UInt64
        var receivedAt: Nanoseconds
        var flip: PendingFlip?
        /// The last unchanged flip taken into the catch-up.
        var absorbedTo: UInt64?
    }

    /// How a vblank compares with the one before by the CRCs alone.
    enum Refresh: Sendable { case unjudged, repeated, changed }
}
