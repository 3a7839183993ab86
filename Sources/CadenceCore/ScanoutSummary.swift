// The results of the scanout check: a frozen stretch, the CRC summary, the writeback summary
// (what ScanoutVerifier, in ScanoutVerification.swift, reaches).

/// A stretch in which flips kept coming and the picture did not change.
public struct FrozenContent: Codable, Equatable, Sendable {
    /// The vblank the picture last changed at (or the first CRC line read, see
    /// ``sinceFirstLine``).
    public var fromSequence: UInt64
    /// The vblanks of the first and the last flip in the stretch that changed nothing.
    public var firstFlipSequence: UInt64
    public var lastFlipSequence: UInt64
    /// Flips in the stretch that changed nothing.
    public var flips: Int
    /// True when the picture never changed from the first line read: it may have been frozen
    /// before.
    public var sinceFirstLine: Bool

    /// Refreshes the picture stayed the same: from ``fromSequence`` to the last flip that changed
    /// nothing.
    public var refreshes: Int { Int(lastFlipSequence - fromSequence) }
    /// Refreshes during which flips kept coming without changing the picture: from the first to
    /// the last flip that changed nothing (0 for a single one): what a limit on frozen pictures
    /// judges.
    public var flippingRefreshes: Int { Int(lastFlipSequence - firstFlipSequence) }

    /// A stretch.
    public init(
        fromSequence: UInt64, firstFlipSequence: UInt64, lastFlipSequence: UInt64, flips: Int, sinceFirstLine: Bool
    ) {
        self.fromSequence = fromSequence
        self.firstFlipSequence = firstFlipSequence
        self.lastFlipSequence = lastFlipSequence
        self.flips = flips
        self.sinceFirstLine = sinceFirstLine
    }
}

/// What ``ScanoutVerifier`` found over a run (the summary's `scanout` line).
public struct ScanoutSummary: Codable, Equatable, Sendable {
    /// Flips seen.
    public var frames = 0
    /// Frames whose content change came at exactly the vblank their flip names.
    public var verified = 0
    /// Stale frames plus changes without a flip.
    public var mismatches = 0
    /// Flips whose vblank showed no content change (the frame never reached the CRTC).
    public var stale = 0
    /// Content changes at vblanks no flip latched.
    public var changesWithoutFlip = 0
    /// Frames not judged: a CRC line missing around them, a catch-up, or outside the lines read.
    public var inexact = 0
    /// CRC lines read (distinct vblanks).
    public var lines = 0
    /// Vblanks inside the lines' span with no line.
    public var missingLines = 0
    /// Lines for a vblank already seen (ignored).
    public var repeatedLines = 0
    /// Lines a driver wrote late: those a catch-up filled with a later vblank's CRC, and late
    /// lines, composed after their buffer was drawn again (``ScanoutVerifier``'s notes).
    public var catchUpLines = 0
    /// Vblanks after the first flip, up to the last, whose CRC equals the previous vblank's: the
    /// refreshes that showed a frame again, by the CRCs alone (at one frame per refresh, the
    /// dropped refreshes, plus one per stale frame).
    public var repeatedRefreshes = 0
    /// Vblanks in that span that cannot be told: a line missing on either side, a catch-up, or a
    /// late line.
    public var unjudgedVBlanks = 0
    /// The first stale frames (up to 10).
    public var staleFrames: [FrameID] = []
    /// The first vblanks with a change but no flip (up to 10).
    public var changeWithoutFlipVBlanks: [UInt64] = []
    /// The CRC source (`auto`), set by the display that read the lines.
    public var source: String?
    /// Non-blocking reads of the CRC lines made, and the time they took in all (µs), set by
    /// the display that read them: the cost of verification.
    public var reads: Int?
    public var readMicroseconds: Double?
    /// Why reading the lines stopped early (a read failed), if it did.
    public var failure: String?
    /// Writeback captures, when they ran (nil: none; then the CRC fields above are unset too
    /// unless the CRC ran).
    public var writeback: WritebackSummary?
    /// The longest stretch of flips that changed nothing (nil: every judged flip changed the
    /// content). Observing another program judges a frozen picture by it.
    public var longestFrozen: FrozenContent?

    public init() {}

    /// True when no CRC was read: a writeback-only summary, whose JSON then holds `writeback`
    /// alone (the CRC fields would be zeros that claim a check that never ran).
    public var crcRan: Bool { source != nil || reads != nil || frames != 0 || lines != 0 || failure != nil }

    private enum CodingKeys: String, CodingKey {
        case frames, verified, mismatches, stale, changesWithoutFlip, inexact, lines, missingLines, repeatedLines
        case catchUpLines, repeatedRefreshes, unjudgedVBlanks, staleFrames, changeWithoutFlipVBlanks, source, reads
        case readMicroseconds, failure, writeback, longestFrozen
    }

    /// Reads a summary; CRC fields absent (a writeback-only summary) are zero.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func int(_ k: CodingKeys) throws -> Int { try c.decodeIfPresent(Int.self, forKey: k) ?? 0 }
        frames = try int(.frames)
        verified = try int(.verified)
        mismatches = try int(.mismatches)
        stale = try int(.stale)
        changesWithoutFlip = try int(.changesWithoutFlip)
        inexact = try int(.inexact)
        lines = try int(.lines)
        missingLines = try int(.missingLines)
        repeatedLines = try int(.repeatedLines)
        catchUpLines = try int(.catchUpLines)
        repeatedRefreshes = try int(.repeatedRefreshes)
        unjudgedVBlanks = try int(.unjudgedVBlanks)
        staleFrames = try c.decodeIfPresent([FrameID].self, forKey: .staleFrames) ?? []
        changeWithoutFlipVBlanks = try c.decodeIfPresent([UInt64].self, forKey: .changeWithoutFlipVBlanks) ?? []
        source = try c.decodeIfPresent(String.self, forKey: .source)
        reads = try c.decodeIfPresent(Int.self, forKey: .reads)
        readMicroseconds = try c.decodeIfPresent(Double.self, forKey: .readMicroseconds)
        failure = try c.decodeIfPresent(String.self, forKey: .failure)
        writeback = try c.decodeIfPresent(WritebackSummary.self, forKey: .writeback)
        longestFrozen = try c.decodeIfPresent(FrozenContent.self, forKey: .longestFrozen)
    }

    /// Writes every field when the CRC ran; only `writeback` when it did not.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(writeback, forKey: .writeback)
        guard crcRan else { return }
        try c.encode(frames, forKey: .frames)
        try c.encode(verified, forKey: .verified)
        try c.encode(mismatches, forKey: .mismatches)
        try c.encode(stale, forKey: .stale)
        try c.encode(changesWithoutFlip, forKey: .changesWithoutFlip)
        try c.encode(inexact, forKey: .inexact)
        try c.encode(lines, forKey: .lines)
        try c.encode(missingLines, forKey: .missingLines)
        try c.encode(repeatedLines, forKey: .repeatedLines)
        try c.encode(catchUpLines, forKey: .catchUpLines)
        try c.encode(repeatedRefreshes, forKey: .repeatedRefreshes)
        try c.encode(unjudgedVBlanks, forKey: .unjudgedVBlanks)
        try c.encode(staleFrames, forKey: .staleFrames)
        try c.encode(changeWithoutFlipVBlanks, forKey: .changeWithoutFlipVBlanks)
        try c.encodeIfPresent(source, forKey: .source)
        try c.encodeIfPresent(reads, forKey: .reads)
        try c.encodeIfPresent(readMicroseconds, forKey: .readMicroseconds)
        try c.encodeIfPresent(failure, forKey: .failure)
        try c.encodeIfPresent(longestFrozen, forKey: .longestFrozen)
    }
}

/// What writeback capture found: frames captured, how many decoded to the frame index they
/// were taken for, and how many equal Cadence's own render pixel for pixel.
public struct WritebackSummary: Codable, Equatable, Sendable {
    /// Captures read back.
    public var captures = 0
    /// Captures whose frame identity decoded to the index of the frame they were taken for.
    public var decoded = 0
    /// Captures equal to the render of their frame, pixel for pixel (the X byte ignored).
    public var equal = 0
    /// Frames asked for but not captured (no free capture buffer, or never flipped).
    public var skipped = 0
    /// Captures whose out fence never signalled.
    public var timedOut = 0
    /// The first frames (up to 10) whose capture did not decode to them or differed.
    public var mismatchedFrames: [Int] = []
    /// Time copying renders and reading captures back, in µs.
    public var readMicroseconds: Double = 0
    /// What capturing on a CRC mismatch did (nil unless it ran: then the JSON has no such field).
    public var onMismatch: OnMismatchCaptures?

    public init() {}
}

/// Capturing on a CRC mismatch: a writeback job on every flip commit, into a ring of capture
/// buffers, a buffer read only when the CRC flags its frame (``WritebackSummary/onMismatch``).
public struct OnMismatchCaptures: Codable, Equatable, Sendable {
    /// Flip commits that carried a writeback job.
    public var jobs = 0
    /// Flips that carried none: no capture buffer could be recycled in time (its fence pending).
    public var withoutJob = 0
    /// Capture buffers recycled (or left at the end) without being read: the frames the CRC did
    /// not flag.
    public var recycledUnread = 0
    /// Of those, buffers recycled before the CRC had judged their frame (the ring was full).
    public var recycledUnjudged = 0
    /// Capture buffers in the ring.
    public var ring = 0
    /// The frames flagged and captured (up to 10), each with the frame its capture shows.
    public var flagged: [FlaggedCapture] = []

    public init() {}
}

/// A frame the CRC flagged and its capture: which frame the capture shows (its identity
/// decoded), e.g. a stale frame 300 whose capture shows frame 299.
public struct FlaggedCapture: Codable, Equatable, Sendable {
    /// Why the CRC flagged the frame.
    public enum Reason: String, Codable, Equatable, Sendable {
        /// Its flip's vblank showed no content change.
        case stale
        /// The content changed at a later vblank no flip latched (``FlaggedCapture/vblank``):
        /// the capture shows the picture before the change.
        case changeWithoutFlip
    }

    /// The frame index captured.
    public var frame: Int
    /// The frame index the capture's identity decodes to (nil: it does not decode).
    public var shows: Int?
    /// Why it was captured.
    public var reason: Reason
    /// The vblank of the change without a flip (nil for a stale frame).
    public var vblank: UInt64?
    /// Whether the capture equals Cadence's render of the frame pixel for pixel (the X byte
    /// ignored); nil when no render was kept to compare with.
    public var equal: Bool?

    /// A flagged capture.
    public init(frame: Int, shows: Int?, reason: Reason, vblank: UInt64? = nil, equal: Bool? = nil) {
        self.frame = frame
        self.shows = shows
        self.reason = reason
        self.vblank = vblank
        self.equal = equal
    }

    /// `frame 300 (stale): capture shows frame 299, differs from its render`.
    public var description: String {
        let why = reason == .stale ? "stale" : "change without a flip at vblank \(vblank ?? 0)"
        let pixels = equal.map { $0 ? ", equal to its render" : ", differs from its render" } ?? ""
        return "frame \(frame) (\(why)): capture shows " + (shows.map { "frame \($0)" } ?? "no frame identity") + pixels
    }
}

extension ScanoutVerifier {
    /// The longest stretch of flips that changed nothing, by the time the flips kept coming
    /// (first to last unchanged flip): each stale flip (at vblank `stale[i]`) belongs to the
    /// stretch that starts at the last content change before it (or at the first line, when the
    /// content never changed before it). Both lists are in vblank order.
    static func longestFrozen(stale: [UInt64], changes: [UInt64], firstLine: UInt64) -> FrozenContent? {
        var best: FrozenContent?
        var current: FrozenContent?
        var c = 0  // changes[..<c] are before the stale flip at hand
        for v in stale {
            while c < changes.count && changes[c] < v { c += 1 }
            let from = c > 0 ? changes[c - 1] : firstLine
            if current?.fromSequence == from {
                current!.lastFlipSequence = v
                current!.flips += 1
            } else {
                current = FrozenContent(
                    fromSequence: from, firstFlipSequence: v, lastFlipSequence: v, flips: 1, sinceFirstLine: c == 0)
            }
            if best == nil || current!.flippingRefreshes > best!.flippingRefreshes
                || (current!.flippingRefreshes == best!.flippingRefreshes && current!.refreshes > best!.refreshes)
            {
                best = current
            }
        }
        return best
    }
}
