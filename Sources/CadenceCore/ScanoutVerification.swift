// The verifier's state machine alone, one file at about 500 lines: its state is private to it
// and every judging step (the late-line and given-up-flip lookups included) reads and changes
// all of it, so splitting it would widen that state to the module. What comes in and goes out
// is in ScanoutVerifier+Records.swift; the frozen-stretch rule is in ScanoutSummary.swift.

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
/// - vkms composes a vblank's CRC in that worker from the plane's buffer as it is when the
///   worker runs: a worker that runs late, after the next flip released that buffer and the app
///   drew a later frame into it, writes that later frame's CRC for the vblank, a change that
///   never reached the screen. A change at a vblank with no flip is taken for such a **late
///   line** when it was read after the timestamp of the first flip after it (the flip that
///   released its buffer) and its CRC is the one the lines show at the vblank of one of the
///   ``lateLineLaterFlips`` flips after that one (the frame drawn into the reused buffer: one
///   to three flips later with two to four buffers), all within ``lateLineReach`` vblanks of it.
///   Its vblank is not judged (counted in ``ScanoutSummary/catchUpLines``), and the next one is
///   compared with the line before it. A line read before that first flip's timestamp was
///   composed before its buffer could be drawn again: its change stays a change without a flip.
///
/// The verifier judges as it goes: a vblank is judged once the newest sample or flip is
/// ``margin`` vblanks past it, and only those vblanks (their lines and flips) are kept, so its
/// memory stays bounded however long the run (``retained``). A line or a flip may come up to
/// ``margin`` vblanks late (behind the newest sample or flip) and still count as if it had come
/// at once; one that comes later is not judged (its frame is inexact), and a line that comes
/// for the vblank of a flip given up on that way is not judged either (its change is that
/// flip's, never a change without a flip). A change without a flip
/// waits, besides, until the flips after it (and their lines) that may make it a late line are
/// in: at most ``lateLineReach`` vblanks more. Samples must be added in the order they were read,
/// each with the time of its read.
///
/// The verifier is a pure function of its inputs: it knows nothing of DRM or debugfs.
public struct ScanoutVerifier: Sendable {
    /// Vblanks behind the newest sample or flip that stay open for late lines and flips.
    public let margin: UInt64
    /// How many vblanks past a change without a flip the flips that may make it a late line
    /// (see the type's notes) are looked for: 120 (2 s at 60 Hz).
    public static let lateLineReach: UInt64 = 120
    /// The flips after the first one past a change without a flip whose content a late line may
    /// show: 3 (a buffer is drawn again one to three flips after it was released).
    public static let lateLineLaterFlips = 3
    /// CRC samples added so far.
    public private(set) var sampleCount = 0
    /// Flips added so far.
    public private(set) var flipCount = 0
    private let keepsVerdicts: Bool
    private var verdicts: [FrameVerdict] = []
    /// The vblanks of the changes without a flip judged since the last take (when verdicts are kept).
    private var changeVerdicts: [UInt64] = []

    private var firstLine: UInt64?
    private var lastLine: UInt64?
    /// Accepted lines past ``cursor``, in vblank order.
    private var lines: [Sample] = []
    private var linesHead = 0
    /// The line of ``cursor`` (nil when it has none).
    private var previous: Sample?
    /// Vblanks up to here are judged (from the first line's on).
    private var cursor: UInt64?
    /// Flips past ``cursor``, in vblank order.
    private var pending: [PendingFlip] = []
    /// Later flips of vblanks given up on (past the last line then) that count as inexact unless
    /// lines come past them.
    private var heldDuplicates: [PendingFlip] = []
    /// The vblanks of flips given up on before their line came (past the last line then, the
    /// lines more than ``margin`` vblanks behind the flips), in order: a line that comes for one
    /// later shows that flip's change, which is not judged (the frame is inexact already), never
    /// a change without a flip. At most ``givenUpKept``.
    private var givenUp: [(sequence: UInt64, timestamp: Nanoseconds)] = []
    /// How many vblanks of given-up flips are kept for lines still to come.
    static let givenUpKept = 1_024
    private var lowestFlip: UInt64?
    private var highestFlip: UInt64?
    private var chain: Chain?
    /// Vblanks after an open catch-up's change, read with it, not yet told.
    private var deferred: [(sequence: UInt64, refresh: Refresh)] = []
    private var lastChange: UInt64?
    /// The longest frozen stretch so far, and the stretch of the last stale flip.
    private var frozen: FrozenContent?
    private var currentFrozen: FrozenContent?
    private var counts = ScanoutSummary()
    /// Repeated and unjudged refreshes after the lowest flip: up to the highest flip, and past it.
    private var spanRepeated = 0, spanUnjudged = 0, tailRepeated = 0, tailUnjudged = 0

    /// A verifier that keeps `margin` vblanks open behind the newest sample or flip (600: 10 s at
    /// 60 Hz); `keepsVerdicts`: every frame's verdict is kept for ``takeVerdicts()``.
    public init(margin: UInt64 = 600, keepsVerdicts: Bool = false) {
        self.margin = max(margin, 1)
        self.keepsVerdicts = keepsVerdicts
    }

    /// Folds a line's CRC words into one value (one or two words exactly; more mixed).
    public static func fold(_ words: [UInt32]) -> UInt64 {
        if words.count == 1 { return UInt64(words[0]) }
        if words.count == 2 { return UInt64(words[0]) | UInt64(words[1]) << 32 }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for w in words { h = (h ^ UInt64(w)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    /// Samples, flips and vblanks held for judging: what the verifier's memory grows with,
    /// bounded by ``margin`` (and the lines of one read) however long the run.
    public var retained: Int {
        (lines.count - linesHead) + pending.count + heldDuplicates.count + deferred.count + verdicts.count
            + pending.reduce(0) { $0 + $1.duplicateFrames.count } + changeVerdicts.count + givenUp.count
    }

    /// The verdicts given since the last call, in the order they were reached (empty unless
    /// the verifier keeps verdicts). ``finishedVerdicts()`` gives the rest at the end.
    public mutating func takeVerdicts() -> [FrameVerdict] {
        // Called on every wake of the pacing thread: nothing allocated when there is nothing
        // (emptying a buffer the caller holds a copy of, keeping its capacity, allocated one).
        guard !verdicts.isEmpty else { return [] }
        defer { verdicts = [] }
        return verdicts
    }

    /// The vblanks of the changes without a flip judged since the last call, in the order they
    /// were reached (empty unless the verifier keeps verdicts). ``finishedChangesWithoutFlip()``
    /// gives the rest at the end.
    public mutating func takeChangesWithoutFlip() -> [UInt64] {
        guard !changeVerdicts.isEmpty else { return [] }
        defer { changeVerdicts = [] }
        return changeVerdicts
    }

    /// Adds a CRC sample (in the order the lines were read).
    public mutating func add(_ sample: Sample) {
        sampleCount += 1
        if let l = lastLine, sample.sequence <= l {
            counts.repeatedLines += 1
            return
        }
        counts.lines += 1
        lastLine = sample.sequence
        if firstLine == nil {
            firstLine = sample.sequence
            cursor = sample.sequence
            previous = sample
            // Flips waiting for the first line: those up to it are outside the lines read.
            while let f = pending.first, f.sequence <= sample.sequence {
                pending.removeFirst()
                give(f, .inexact, alsoDuplicates: true)
            }
        } else {
            lines.append(sample)
        }
        if !heldDuplicates.isEmpty {
            // Lines now reach past these vblanks: their later flips are inside the lines read.
            while let f = heldDuplicates.first, f.sequence <= sample.sequence {
                heldDuplicates.removeFirst()
                giveDuplicates(f, .duplicate)
            }
        }
        advance(final: false)
    }

    /// Adds a flip completion (in completion order).
    public mutating func add(_ flip: Flip) {
        flipCount += 1
        let seq = flip.sequence
        lowestFlip = min(lowestFlip ?? seq, seq)
        highestFlip = max(highestFlip ?? seq, seq)
        if let c = cursor, seq >= c {
            // Every vblank told so far is now before the highest flip.
            spanRepeated += tailRepeated
            spanUnjudged += tailUnjudged
            tailRepeated = 0
            tailUnjudged = 0
        }
        let entry = PendingFlip(sequence: seq, frame: flip.frame, timestamp: flip.timestamp)
        if let first = firstLine, seq <= first {
            give(entry, .inexact)
            return
        }
        if let c = cursor, seq <= c {
            // Later than the margin allows: its vblank is judged already.
            give(entry, .inexact)
            return
        }
        var k = pending.count
        while k > 0, pending[k - 1].sequence > seq { k -= 1 }
        if k > 0, pending[k - 1].sequence == seq {
            pending[k - 1].duplicates += 1
            if keepsVerdicts { pending[k - 1].duplicateFrames.append(flip.frame) }
        } else {
            pending.insert(entry, at: k)
        }
        advance(final: false)
    }

    /// The verdicts not taken yet and those of every frame still open, as ``finish()`` would
    /// reach them (empty unless the verifier keeps verdicts).
    public func finishedVerdicts() -> [FrameVerdict] { finished().verdicts }

    /// The changes without a flip not taken yet and those still open, as ``finish()`` would
    /// reach them (empty unless the verifier keeps verdicts).
    public func finishedChangesWithoutFlip() -> [UInt64] { finished().changes }

    /// ``finishedVerdicts()`` and ``finishedChangesWithoutFlip()`` from one final pass.
    public func finished() -> (verdicts: [FrameVerdict], changes: [UInt64]) {
        var v = self
        v.advance(final: true)
        return (v.verdicts, v.changeVerdicts)
    }

    /// The verdict over everything added so far.
    public func finish() -> ScanoutSummary {
        var v = self
        v.advance(final: true)
        var s = v.counts
        s.frames = flipCount
        guard let first = firstLine, let end = lastLine else { return s }
        if let lo = lowestFlip, let hi = highestFlip, lo < hi {
            s.repeatedRefreshes = v.spanRepeated
            s.unjudgedVBlanks = v.spanUnjudged
            // Vblanks of the flips' span outside the lines read cannot be told.
            if first > lo { s.unjudgedVBlanks += Int(min(hi, first) - lo) }
            if hi > max(lo, end) { s.unjudgedVBlanks += Int(hi - max(lo, end)) }
        }
        s.longestFrozen = v.frozen
        s.mismatches = s.stale + s.changesWithoutFlip
        return s
    }

    /// Judges the vblanks no late line or flip can change any more (all of them when `final`).
    private mutating func advance(final: Bool) {
        let newest = max(lastLine ?? 0, highestFlip ?? 0)
        let horizon: UInt64? = final ? nil : (newest > margin ? newest - margin : nil)
        guard final || horizon != nil else { return }
        if let end = lastLine, var c = cursor {
            let limit = horizon.map { min($0, end) } ?? end
            while c < limit {
                // A change without a flip waits for what tells whether it is a late line.
                guard let late = lateLine(at: c + 1, horizon: horizon) else { return }
                c += 1
                judge(c, late: late)
            }
        }
        // Flips no line can reach in time: outside the lines read, or at a missing line.
        while let f = pending.first, horizon.map({ f.sequence <= $0 }) ?? true {
            pending.removeFirst()
            give(f, .inexact)
            if !final, f.sequence > lastLine ?? 0 {
                if givenUp.count == Self.givenUpKept { givenUp.removeFirst() }
                givenUp.append((f.sequence, f.timestamp))
            }
            if firstLine == nil || final {
                giveDuplicates(f, .inexact)
            } else if f.duplicates > 0 {
                heldDuplicates.append(f)
            }
        }
        guard final else { return }
        closeChain()
        while let f = heldDuplicates.first {
            heldDuplicates.removeFirst()
            giveDuplicates(f, .inexact)
        }
    }

    /// Whether vblank `v`, the next to judge, is a late line (see the type's notes): false
    /// unless it is a change without a flip; nil while flips or lines that tell may still come
    /// (up to the margin late: those past `horizon`). Never nil at the end (`horizon` nil).
    private func lateLine(at v: UInt64, horizon: UInt64?) -> Bool? {
        guard linesHead < lines.count, let prev = previous else { return false }
        let cur = lines[linesHead]
        guard cur.sequence == v, cur.crc != prev.crc, !givenUp.contains(where: { $0.sequence == v }) else {
            return false
        }
        func known(_ s: UInt64) -> Bool { horizon.map { s <= $0 } ?? true }
        let reach = v + Self.lateLineReach
        var released = false
        var later = 0
        // Flips past the cursor, in vblank order (those given up on before their lines came
        // too): at most the first and a few after it are read.
        var after = givenUp.filter { $0.sequence > v && $0.sequence <= reach }
        for f in pending {
            if f.sequence > reach || after.count > Self.lateLineLaterFlips + givenUp.count { break }
            after.append((f.sequence, f.timestamp))
        }
        after.sort { $0.sequence < $1.sequence }
        for f in after {
            if f.sequence == v { return false }
            guard known(f.sequence) else { return nil }
            if !released {
                // The first flip after `v` released its buffer: a line read by then was composed
                // before the buffer could be drawn again.
                guard cur.receivedAt > f.timestamp else { return false }
                released = true
            } else {
                if let l = line(at: f.sequence) {
                    if l.crc == cur.crc { return true }
                } else if let h = horizon, h < reach, (lastLine ?? 0) < f.sequence {
                    // Its line may still come (lines behind the flips by more than the margin).
                    return nil
                }
                later += 1
                if later == Self.lateLineLaterFlips { return false }
            }
        }
        return known(reach) ? false : nil
    }

    /// Whether a flip at vblank `v` was given up on before its line came (and forgets those
    /// before `v`).
    private mutating func tookGivenUp(_ v: UInt64) -> Bool {
        guard !givenUp.isEmpty else { return false }
        var k = 0
        while k < givenUp.count, givenUp[k].sequence < v { k += 1 }
        let found = k < givenUp.count && givenUp[k].sequence == v
        givenUp.removeFirst(found ? k + 1 : k)
        return found
    }

    /// The line of vblank `s` among those past the cursor, if it came.
    private func line(at s: UInt64) -> Sample? {
        var lo = linesHead, hi = lines.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if lines[mid].sequence < s { lo = mid + 1 } else { hi = mid }
        }
        return lo < lines.count && lines[lo].sequence == s ? lines[lo] : nil
    }

    /// Judges vblank `v` (the one after ``cursor``); `late`: its line is a late line.
    private mutating func judge(_ v: UInt64, late: Bool = false) {
        var current: Sample?
        if linesHead < lines.count, lines[linesHead].sequence == v {
            current = lines[linesHead]
            linesHead += 1
            if linesHead >= 64, linesHead * 2 >= lines.count {
                lines.removeFirst(linesHead)
                linesHead = 0
            }
        }
        var flip: PendingFlip?
        if let f = pending.first, f.sequence == v {
            flip = f
            pending.removeFirst()
            giveDuplicates(f, .duplicate)
        }
        let before = previous
        previous = current
        cursor = v
        guard let cur = current else {
            counts.missingLines += 1
            if let f = flip { give(f, .inexact) }
            tell(v, .unjudged)
            return
        }
        guard let prev = before else {
            if let f = flip { give(f, .inexact) }
            tell(v, .unjudged)
            return
        }
        if late {
            // Not what was on screen: not judged, and the next vblank is compared with the line
            // before it. Like any change, it ends an open catch-up.
            previous = before
            closeChain()
            counts.catchUpLines += 1
            tell(v, .unjudged)
            return
        }
        let changed = cur.crc != prev.crc
        if let c = chain, cur.receivedAt > c.receivedAt {
            // Read after the change's line: nothing from here on is part of its catch-up.
            closeChain()
        }
        if flip == nil, tookGivenUp(v) {
            // Its flip was given up on before this line came: the flip's change (or its lack)
            // is not judged, the frame being inexact already.
            if changed {
                closeChain()
                lastChange = v
            }
            if let c = chain, v > c.sequence { deferred.append((v, .unjudged)) } else { tell(v, .unjudged) }
            return
        }
        switch (flip, changed) {
        case (let f?, false):
            if let c = chain, c.receivedAt >= f.timestamp {
                chain!.absorbedTo = v
                give(f, .inexact)
                for d in deferred { tell(d.sequence, .unjudged) }
                deferred.removeAll(keepingCapacity: true)
                tell(v, .unjudged)
                return
            }
            closeChain()
            counts.stale += 1
            if counts.staleFrames.count < 10 { counts.staleFrames.append(f.frame) }
            give(f, .stale)
            frozenFlip(at: v)
        case (_, true):
            closeChain()
            chain = Chain(sequence: v, receivedAt: cur.receivedAt, flip: flip)
            lastChange = v
        case (nil, false):
            break
        }
        let refresh: Refresh = changed ? .changed : .repeated
        if let c = chain, v > c.sequence {
            deferred.append((v, refresh))
        } else {
            tell(v, refresh)
        }
    }

    /// Ends the open catch-up candidate: a catch-up when unchanged flips were read with it, a
    /// verified frame or a change without a flip when none were.
    private mutating func closeChain() {
        guard let c = chain else { return }
        chain = nil
        if let to = c.absorbedTo {
            counts.catchUpLines += Int(to - c.sequence)
            if let f = c.flip { give(f, .inexact) }
        } else if let f = c.flip {
            counts.verified += 1
            give(f, .verified)
        } else {
            counts.changesWithoutFlip += 1
            if counts.changeWithoutFlipVBlanks.count < 10 { counts.changeWithoutFlipVBlanks.append(c.sequence) }
            if keepsVerdicts { changeVerdicts.append(c.sequence) }
        }
        for d in deferred { tell(d.sequence, d.refresh) }
        deferred.removeAll(keepingCapacity: true)
    }

    /// Counts vblank `v` toward the refreshes of the flips' span.
    private mutating func tell(_ v: UInt64, _ refresh: Refresh) {
        guard let lo = lowestFlip, let hi = highestFlip, v > lo, refresh != .changed else { return }
        let repeated = refresh == .repeated ? 1 : 0
        if v <= hi {
            spanRepeated += repeated
            spanUnjudged += 1 - repeated
        } else {
            tailRepeated += repeated
            tailUnjudged += 1 - repeated
        }
    }

    /// A stale flip at `v`, in the stretch since the last change (as
    /// ``longestFrozen(stale:changes:firstLine:)`` counts it).
    private mutating func frozenFlip(at v: UInt64) {
        let from = lastChange ?? firstLine!
        if currentFrozen?.fromSequence == from {
            currentFrozen!.lastFlipSequence = v
            currentFrozen!.flips += 1
        } else {
            currentFrozen = FrozenContent(
                fromSequence: from, firstFlipSequence: v, lastFlipSequence: v, flips: 1,
                sinceFirstLine: lastChange == nil)
        }
        let c = currentFrozen!
        if frozen == nil || c.flippingRefreshes > frozen!.flippingRefreshes
            || (c.flippingRefreshes == frozen!.flippingRefreshes && c.refreshes > frozen!.refreshes)
        {
            frozen = c
        }
    }

    /// Counts a verdict for the first flip of `f`'s vblank.
    private mutating func give(_ f: PendingFlip, _ kind: FrameVerdict.Kind, alsoDuplicates: Bool = false) {
        if kind == .inexact { counts.inexact += 1 }
        if keepsVerdicts { verdicts.append(FrameVerdict(frame: f.frame, sequence: f.sequence, kind: kind)) }
        if alsoDuplicates { giveDuplicates(f, kind) }
    }

    /// Counts a verdict for the later flips of `f`'s vblank.
    private mutating func giveDuplicates(_ f: PendingFlip, _ kind: FrameVerdict.Kind) {
        guard f.duplicates > 0 else { return }
        if kind == .inexact { counts.inexact += f.duplicates }
        if keepsVerdicts {
            for d in f.duplicateFrames { verdicts.append(FrameVerdict(frame: d, sequence: f.sequence, kind: kind)) }
        }
    }
}
