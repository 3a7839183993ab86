/// Scanout truth from the CRTC's CRC: per vblank, did the content change exactly where a flip
/// latched a new frame, and nowhere else?
///
/// Feed it every flip completion (the frame, the vblank sequence its event names, its
/// timestamp) and every CRC sample (the vblank it was taken at, the CRC, when it was read),
/// then call ``finish()``. Every frame must differ from the one before (a frame identity drawn
/// into each frame guarantees it), so:
/// - a flip whose vblank's CRC equals the previous vblank's is **stale** (a mismatch): the new
///   frame never reached the CRTC;
/// - a CRC change at a vblank without a flip is a **change without a flip** (a mismatch);
/// - a vblank with no CRC line (or a line for a vblank already seen) is **inexact**: the frames
///   around it are not judged either way, never counted as drops;
/// - a driver whose CRC worker fell behind (vkms) writes the lines of several vblanks at once,
///   each with the CRC of the last one's content: a change that shows up early and flips after
///   it that change nothing. A change is taken for such a catch-up when its line and the line
///   of each unchanged flip after it came in the same read (the driver wrote them together),
///   after that flip's timestamp; those frames are **inexact** (catch-up), not mismatches. Lines
///   read promptly (every vblank) keep a stale frame from passing for a catch-up.
///
/// The verifier is a pure function of its inputs: it knows nothing of DRM or debugfs.
public struct ScanoutVerifier: Sendable {
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

    /// The CRC samples added so far, in the order they were read.
    public private(set) var samples: [Sample] = []
    var flips: [Flip] = []

    public init() {}

    /// Folds a line's CRC words into one value (one or two words exactly; more mixed).
    public static func fold(_ words: [UInt32]) -> UInt64 {
        if words.count == 1 { return UInt64(words[0]) }
        if words.count == 2 { return UInt64(words[0]) | UInt64(words[1]) << 32 }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for w in words { h = (h ^ UInt64(w)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    /// CRC samples added so far.
    public var sampleCount: Int { samples.count }

    /// Flips added so far.
    public var flipCount: Int { flips.count }

    /// Adds a CRC sample (in the order the lines were read).
    public mutating func add(_ sample: Sample) { samples.append(sample) }

    /// Adds a flip completion (in completion order).
    public mutating func add(_ flip: Flip) { flips.append(flip) }

    /// The verdict over everything added so far.
    public func finish() -> ScanoutSummary {
        var s = ScanoutSummary()
        // Lines in vblank order; a line for a vblank already seen is a repeat, not trusted.
        var crc: [UInt64: Sample] = [:]
        var last: UInt64?
        for x in samples {
            if let l = last, x.sequence <= l { s.repeatedLines += 1; continue }
            crc[x.sequence] = x
            last = x.sequence
        }
        s.lines = crc.count
        guard let first = samples.first?.sequence, let end = last else {
            s.frames = flips.count
            s.inexact = flips.count
            return s
        }
        var flipAt: [UInt64: Int] = [:]
        for (i, f) in flips.enumerated() where flipAt[f.sequence] == nil { flipAt[f.sequence] = i }

        enum Kind { case flipChanged, flipUnchanged, changeWithoutFlip }
        var events: [(v: UInt64, kind: Kind)] = []
        var inexact = Set<Int>()  // flip indexes not judged
        var firstSeen: [Int: UInt64] = [:]
        if first < end {
            for v in (first + 1)...end {
                let flip = flipAt[v]
                guard let cur = crc[v] else {
                    s.missingLines += 1
                    if let f = flip { inexact.insert(f) }
                    continue
                }
                guard let prev = crc[v - 1] else {
                    if let f = flip { inexact.insert(f) }
                    continue
                }
                let changed = cur.crc != prev.crc
                switch (flip, changed) {
                case (let f?, true): events.append((v, .flipChanged)); firstSeen[f] = v
                case (_?, false): events.append((v, .flipUnchanged))
                case (nil, true): events.append((v, .changeWithoutFlip))
                case (nil, false): break
                }
            }
        }
        // Catch-up: a change followed by unchanged flips, its line read after each of them.
        var staleVBlanks: [UInt64] = []
        var catchUp = Set<UInt64>()  // vblanks whose line carried a later vblank's CRC
        var i = 0
        while i < events.count {
            let e = events[i]
            guard e.kind != .flipUnchanged else {
                staleVBlanks.append(e.v)
                i += 1
                continue
            }
            var j = i + 1
            var absorbed: [UInt64] = []
            while j < events.count, events[j].kind == .flipUnchanged,
                let line = crc[e.v], let later = crc[events[j].v], let f = flipAt[events[j].v],
                later.receivedAt <= line.receivedAt, line.receivedAt >= flips[f].timestamp
            {
                absorbed.append(events[j].v)
                j += 1
            }
            if absorbed.isEmpty {
                if e.kind == .changeWithoutFlip {
                    s.changesWithoutFlip += 1
                    if s.changeWithoutFlipVBlanks.count < 10 { s.changeWithoutFlipVBlanks.append(e.v) }
                }
            } else {
                s.catchUpLines += Int(absorbed.last! - e.v)
                for v in (e.v + 1)...absorbed.last! { catchUp.insert(v) }
                if let f = flipAt[e.v] { inexact.insert(f); firstSeen[f] = nil }
                for v in absorbed { inexact.insert(flipAt[v]!) }
            }
            i = j
        }
        for v in staleVBlanks {
            let f = flipAt[v]!
            s.stale += 1
            if s.staleFrames.count < 10 { s.staleFrames.append(flips[f].frame) }
        }
        s.longestFrozen = Self.longestFrozen(
            stale: staleVBlanks, changes: events.filter { $0.kind != .flipUnchanged }.map(\.v), firstLine: first)
        s.frames = flips.count
        s.inexact =
            inexact.count + flips.indices.filter { flips[$0].sequence <= first || flips[$0].sequence > end }.count
        s.verified = flips.indices.filter { firstSeen[$0] != nil && !inexact.contains($0) }.count
        // The CRCs alone, from the first flip to the last: vblanks whose content equals the
        // previous vblank's (a frame shown again), and vblanks that cannot be told.
        if let lo = flips.map(\.sequence).min(), let hi = flips.map(\.sequence).max(), lo < hi {
            for v in (lo + 1)...hi {
                guard let cur = crc[v], let prev = crc[v - 1], !catchUp.contains(v) else {
                    s.unjudgedVBlanks += 1
                    continue
                }
                if cur.crc == prev.crc { s.repeatedRefreshes += 1 }
            }
        }
        s.mismatches = s.stale + s.changesWithoutFlip
        return s
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
    /// Lines a driver's catch-up filled with a later vblank's CRC.
    public var catchUpLines = 0
    /// Vblanks after the first flip, up to the last, whose CRC equals the previous vblank's: the
    /// refreshes that showed a frame again, by the CRCs alone (at one frame per refresh, the
    /// dropped refreshes, plus one per stale frame).
    public var repeatedRefreshes = 0
    /// Vblanks in that span that cannot be told: a line missing on either side, or a catch-up.
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

    public init() {}
}
