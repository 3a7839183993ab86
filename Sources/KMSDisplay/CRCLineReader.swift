import CadenceCore
import DRM

/// The CRTC's CRC lines read beside a display's flips and judged against them: one capture
/// (`CRCCapture`) read without waiting, each line's 32-bit frame counter widened to a vblank
/// sequence and its CRC words folded (`ScanoutVerifier.fold(_:)`), every sample and flip handed
/// to a `ScanoutVerifier`, the time the reads took counted.
///
/// Read it before each flip and after each batch of flip events (``read()``), record each flip
/// (``flip(_:sequence:timestamp:)``), and end with ``finish(limit:)``, which waits for the line of
/// the vblank after the last flip. A run that starts with flips it does not judge (a warm-up)
/// makes it with `judgingFrom` nil: lines read meanwhile are held, and ``judge(from:)`` names the
/// first vblank judged (the last warm-up flip's: the picture the first judged flip replaces).
///
///     let reader = CRCLineReader(capture: try CRCCapture(device: device, crtcIndex: 0))
///     reader.read()
///     reader.flip(1, sequence: 1042, timestamp: t)
///     let summary = reader.finish(limit: 50_000_000)
public final class CRCLineReader {
    /// The CRTC's CRC capture read.
    public let capture: CRCCapture
    /// Judges the samples (from the first vblank judged on) against the flips recorded.
    public private(set) var verifier: ScanoutVerifier
    private var widener: SequenceWidener
    private var lines: [CRCLine] = []
    /// Non-blocking reads of the data file made, and the time they took in all (ns).
    public private(set) var reads = 0
    public private(set) var readNanoseconds: Int64 = 0
    /// Why reading stopped (a read failed; the lines read before still count), if it did.
    public private(set) var failure: String?
    /// CRC samples read, judged or held.
    public private(set) var samplesRead = 0
    /// The vblank of the last flip recorded.
    public private(set) var lastFlip: UInt64?
    /// Lines before this vblank are not judged; nil while they are held.
    public private(set) var judgedFrom: UInt64?
    /// The last lines read before ``judge(from:)`` (the last warm-up vblank's may be among them).
    private var held: [ScanoutVerifier.Sample] = []
    /// The samples read before the first flip, kept for an observer that comes later.
    private var early: [ScanoutVerifier.Sample] = []
    private var observer: ((ScanoutVerifier.Sample) -> Void)?
    /// A second verifier with a short margin, fed the same samples and flips, whose verdicts come
    /// a few vblanks after the flip (``judgeEarly(margin:)``).
    private var provisional: ScanoutVerifier?
    /// Lines past the last flip recorded, read while a flip was in flight: kept from the early
    /// verdicts until that flip is recorded (``flipInFlight``).
    private var heldForFlip: [ScanoutVerifier.Sample] = []

    /// A flip has been committed and its completion is not recorded yet. Meanwhile the early
    /// verdicts (``judgeEarly(margin:)``) get no line past the last flip recorded: the flip may
    /// have latched at that line's vblank with its event not read yet (the lines and the events
    /// are read one after the other, and a thread preempted between the two reads the lines of
    /// vblanks whose events came after its read), and with 2 vblanks open such a line would be
    /// judged a change without a flip. ``flip(_:sequence:timestamp:)`` clears it and hands the
    /// lines kept over; the full verifier (600 vblanks open) gets every line at once.
    public var flipInFlight = false

    /// Reads `capture`; `anchor`: a 64-bit vblank sequence near the first line's (so that the
    /// widened sequences match the flips' from the start, across a 32-bit wrap too: the flips'
    /// must be widened against the same 64-bit count), nil to take the first line's 32 bits as
    /// they are (or, when a flip comes first, to widen near the flip's); `judgingFrom`: the first
    /// vblank judged, nil to hold the lines until ``judge(from:)``.
    public init(capture: CRCCapture, anchor: UInt64? = nil, judgingFrom: UInt64? = 0) {
        self.capture = capture
        verifier = ScanoutVerifier()
        widener = anchor.map { SequenceWidener(anchor: $0) } ?? SequenceWidener()
        judgedFrom = judgingFrom
        lines.reserveCapacity(16)
    }

    /// The CRC source read (`auto`, …).
    public var source: String { capture.source }

    /// The vblank of the newest line read (nil before the first).
    public private(set) var newestLine: UInt64?

    /// Reads the lines ready now (non-blocking) and timed. A read that fails ends the reading
    /// quietly (``failure``): what was read still counts.
    public func read() {
        guard failure == nil else { return }
        let device = capture.device
        let t0 = device.monotonicNow()
        lines.removeAll(keepingCapacity: true)
        do { _ = try capture.readAvailable(into: &lines) } catch { failure = "\(error)" }
        let t1 = device.monotonicNow()
        readNanoseconds += t1 - t0
        reads += 1
        for line in lines {
            // A line from before the first value's epoch (no anchor) cannot be placed: skipped.
            guard let frame = line.frame, let sequence = widener.widenIfAfterZero(frame) else { continue }
            newestLine = max(newestLine ?? sequence, sequence)
            let sample = ScanoutVerifier.Sample(
                sequence: sequence, crc: ScanoutVerifier.fold(line.values), receivedAt: t1)
            samplesRead += 1
            if let body = observer {
                body(sample)
            } else if lastFlip == nil {
                early.append(sample)
            }
            guard let from = judgedFrom else {
                if held.count == 8 { held.removeFirst() }
                held.append(sample)
                continue
            }
            if sample.sequence >= from {
                verifier.add(sample)
                addEarly(sample)
            }
        }
    }

    /// Also judges every frame early: a second verifier keeping only `margin` vblanks open
    /// (instead of the full verifier's 600), so that a frame's verdict comes once lines or flips
    /// `margin` vblanks past it are in, by the same rules. A line or flip later than that leaves
    /// the frame inexact there (the full verdict still counts it). Call before the first flip.
    public func judgeEarly(margin: UInt64) {
        provisional = ScanoutVerifier(margin: margin, keepsVerdicts: true)
    }

    /// The early verdicts reached since the last call: frames, and the vblanks of changes
    /// without a flip (empty without ``judgeEarly(margin:)``).
    public func takeEarlyVerdicts() -> (frames: [ScanoutVerifier.FrameVerdict], changes: [UInt64]) {
        guard provisional != nil else { return ([], []) }
        return (provisional!.takeVerdicts(), provisional!.takeChangesWithoutFlip())
    }

    /// At the end: the early verdicts not taken yet and those of every frame still open.
    public func finishedEarlyVerdicts() -> (frames: [ScanoutVerifier.FrameVerdict], changes: [UInt64]) {
        releaseHeldForFlip()
        guard let p = provisional else { return ([], []) }
        let f = p.finished()
        return (f.verdicts, f.changes)
    }

    /// Judges lines from vblank `sequence` on, those held so far included.
    public func judge(from sequence: UInt64) {
        judgedFrom = sequence
        for x in held where x.sequence >= sequence {
            verifier.add(x)
            addEarly(x)
        }
        held = []
    }

    /// Records a flip completion of `frame` at vblank `sequence` (the event's `timestamp`).
    public func flip(_ frame: FrameID, sequence: UInt64, timestamp: Nanoseconds) {
        let f = ScanoutVerifier.Flip(frame: frame, sequence: sequence, timestamp: timestamp)
        // The lines' counter is the flips': later lines are widened near the flips' sequences.
        widener.note(sequence)
        verifier.add(f)
        provisional?.add(f)
        lastFlip = sequence
        early = []
        flipInFlight = false
        releaseHeldForFlip()
    }

    /// A sample for the early verdicts: kept while a flip is in flight and it is past the last
    /// flip recorded (``flipInFlight``), added otherwise.
    private func addEarly(_ sample: ScanoutVerifier.Sample) {
        guard provisional != nil else { return }
        if flipInFlight && sample.sequence > (lastFlip ?? 0) {
            heldForFlip.append(sample)
        } else {
            provisional?.add(sample)
        }
    }

    /// Hands the samples kept for a flip in flight to the early verdicts.
    private func releaseHeldForFlip() {
        for x in heldForFlip { provisional?.add(x) }
        heldForFlip.removeAll(keepingCapacity: true)
    }

    /// Hands every sample to `body` as it is read, those read before the first flip first (at
    /// once). One observer: a second call replaces the first.
    public func observe(_ body: @escaping (ScanoutVerifier.Sample) -> Void) {
        for x in early { body(x) }
        early = []
        observer = body
    }

    /// Reads (polling every millisecond, for up to `limit` ns) until a line has come.
    public func waitForFirstLine(limit: Int64) {
        wait(limit: limit) { $0.samplesRead > 0 }
    }

    /// Waits (polling every millisecond, for up to `limit` ns) for a line past the last flip,
    /// so that the last frame is judged, then gives the verdict with the cost of reading.
    public func finish(limit: Int64) -> ScanoutSummary {
        if let last = lastFlip { wait(limit: limit) { ($0.newestLine ?? 0) > last } }
        var s = verifier.finish()
        s.source = capture.source
        s.reads = reads
        s.readMicroseconds = Double(readNanoseconds) / 1e3
        s.failure = failure
        return s
    }

    private func wait(limit: Int64, until done: (CRCLineReader) -> Bool) {
        let device = capture.device
        let give = device.monotonicNow() + limit
        while !done(self), device.monotonicNow() < give, failure == nil {
            read()
            if done(self) { break }
            device.busyWait(until: min(give, device.monotonicNow() + 1_000_000))
        }
    }
}
