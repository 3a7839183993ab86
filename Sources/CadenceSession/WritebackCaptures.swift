import CadenceCore
import Dispatch
import Foundation
import Raster
import Scenes

/// The frames a writeback check captures: every Nth frame (0, N, 2N, …), a list of frame
/// indexes, or the frames the CRC flags (``onMismatch``).
public struct CaptureSchedule: Equatable, Sendable {
    /// Why a schedule's text was refused.
    public enum Invalid: Error, Equatable, Sendable {
        /// Neither `every:N` with N ≥ 1, `frames:LIST` with indexes ≥ 0, nor `on-mismatch`.
        case malformed(String)
    }

    /// Every Nth frame, or nil for ``frames``.
    public var every: Int?
    /// The frame indexes to capture (used when ``every`` is nil).
    public var frames: Set<Int> = []
    /// Capture on a CRC mismatch: every frame's flip carries a writeback job into a ring of
    /// capture buffers, and only the frames the CRC flags are read (needs the CRC check).
    public var onMismatch = false

    /// Parses `every:N` (N ≥ 1), `frames:LIST` (frame indexes ≥ 0, comma-separated) or
    /// `on-mismatch`.
    public init(parsing text: String) throws(Invalid) {
        if text == "on-mismatch" {
            onMismatch = true
            return
        }
        let p = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard p.count == 2 else { throw .malformed(text) }
        switch p[0] {
        case "every":
            guard let n = Int(p[1]), n >= 1 else { throw .malformed(text) }
            every = n
        case "frames":
            let list = p[1].split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard !list.isEmpty, list.allSatisfy({ ($0 ?? -1) >= 0 }) else { throw .malformed(text) }
            frames = Set(list.compactMap { $0 })
        default:
            throw .malformed(text)
        }
    }

    /// True when frame `index` is to be captured (every frame may be, on a mismatch).
    public func contains(_ index: Int) -> Bool {
        if onMismatch { return true }
        if let n = every { return index % n == 0 }
        return frames.contains(index)
    }
}

/// One run's writeback captures: which frame the renderer just drew (for the display to keep),
/// and each capture checked against Cadence's render (frame identity decoded, pixels compared
/// with the X byte ignored) and written as `BASE000050.png`.
///
/// The display calls ``rendered(_:)`` and ``take()`` on the pacing thread and hands each
/// capture to ``check(label:width:height:rendered:captured:reason:changeVBlank:)``, which only queues it: the
/// decoding, the comparison and the PNG run on one worker thread, so a capture costs the pacing
/// thread the read of the capture buffer and nothing more. At most
/// ``WritebackCaptures/maximumQueued`` captures wait for the worker; a further one waits on the
/// pacing thread until one is done (memory stays bounded, the wait shows as a late frame).
/// ``finish(skipped:timedOut:readMicroseconds:onMismatch:)`` waits for the worker.
///
/// Failure rule (as a ``FrameSink``): a PNG that cannot be written is reported at the end, once,
/// with how many were not written (an entry in `incompleteOutputs`: `cadence run` exits 3); the
/// check itself stands.
public final class WritebackCaptures: FrameSink, @unchecked Sendable {
    /// Captures that may wait for the worker at once (each holds two copies of the frame).
    public static let maximumQueued = 4

    private let schedule: CaptureSchedule?
    private let pngBase: String
    private let worker = DispatchQueue(label: "cadence.writeback-captures")
    private let slots = DispatchSemaphore(value: WritebackCaptures.maximumQueued)
    /// Pacing thread only.
    private var next: Int?
    /// Worker only (read after ``finish(skipped:timedOut:readMicroseconds:onMismatch:)`` drains it).
    private var summary = WritebackSummary()
    private var pngFailures = 0
    private var firstPNGFailure: (path: String, error: String)?
    /// The flagged captures, when capturing on a mismatch (worker only).
    private var flagged: [FlaggedCapture] = []
    private var context: SinkContext?

    /// Captures the frames `schedule` names (none when nil), written as `pngBase` + the frame
    /// index in six digits + `.png`.
    public init(schedule: CaptureSchedule?, pngBase: String) {
        self.schedule = schedule
        self.pngBase = pngBase
    }

    /// The renderer drew frame `index` (pacing thread).
    public func rendered(_ index: Int) { next = schedule?.contains(index) == true ? index : nil }

    /// The display finished the frame last rendered: its index when it is to be captured, once
    /// (pacing thread).
    public func take() -> Int? {
        defer { next = nil }
        return next
    }

    /// Queues the capture of frame `label` (`captured`, the connector's output) for checking
    /// against `rendered` (Cadence's render of it); both are `width` × `height` XRGB8888.
    /// A capture taken because the CRC flagged the frame has a `reason` (and the vblank of a
    /// change without a flip); its `rendered` may be empty (no render kept): then only its
    /// identity is checked, and the frame it shows recorded (with a render, also whether it
    /// equals it).
    public func check(
        label: Int, width: Int, height: Int, rendered: [UInt32], captured: [UInt32],
        reason: FlaggedCapture.Reason? = nil, changeVBlank: UInt64? = nil
    ) {
        slots.wait()
        worker.async { [self] in
            defer { slots.signal() }
            let (shows, equal) = examine(
                label: label, width: width, height: height, rendered: rendered, captured: captured)
            if let reason, flagged.count < 10 {
                flagged.append(
                    FlaggedCapture(
                        frame: label, shows: shows.map { Int($0) }, reason: reason, vblank: changeVBlank, equal: equal))
            }
        }
    }

    /// Worker: decodes, compares and writes one capture; returns the identity it decoded to and
    /// whether it equals the render (nil: no render to compare with).
    private func examine(
        label: Int, width: Int, height: Int, rendered: [UInt32], captured: [UInt32]
    ) -> (shows: UInt32?, equal: Bool?) {
        summary.captures += 1
        var captured = captured
        let decoded = captured.withUnsafeBytes { raw in
            FrameIdentity.decode(base: raw.baseAddress!, width: width, height: height, stride: width * 4)
        }
        let isDecoded = decoded.map { Int($0) } == label
        // Without a render (captured on a mismatch) only the identity is checked.
        let compared = !rendered.isEmpty
        let isEqual =
            compared && captured.count == rendered.count
            && zip(captured, rendered).allSatisfy { ($0 ^ $1) & 0x00ff_ffff == 0 }
        if isDecoded { summary.decoded += 1 }
        if isEqual { summary.equal += 1 }
        if !(isDecoded && (isEqual || !compared)), summary.mismatchedFrames.count < 10 {
            summary.mismatchedFrames.append(label)
        }
        let path = Self.pngPath(base: pngBase, frame: label)
        captured.withUnsafeMutableBytes { raw in
            let canvas = Canvas(base: raw.baseAddress!, width: width, height: height, stride: width * 4)
            do { try PNGWriter.write(canvas, to: path) } catch {
                pngFailures += 1
                if firstPNGFailure == nil { firstPNGFailure = (path, String(describing: error)) }
            }
        }
        return (decoded, compared ? isEqual : nil)
    }

    /// The PNG of frame `frame`'s capture: `base` + the index in at least six digits + `.png`.
    public static func pngPath(base: String, frame: Int) -> String {
        let digits = String(frame)
        return base + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".png"
    }

    /// Waits for every queued capture and returns the run's writeback summary, with the
    /// display's counts (`skipped`, `timedOut`, the time spent reading capture buffers, and when
    /// capturing on a mismatch its ring's counts, given the flagged captures decoded here).
    public func finish(
        skipped: Int, timedOut: Int, readMicroseconds: Double, onMismatch: OnMismatchCaptures? = nil
    ) -> WritebackSummary {
        worker.sync {
            var s = summary
            s.skipped = skipped
            s.timedOut = timedOut
            s.readMicroseconds = readMicroseconds
            if var m = onMismatch {
                m.flagged = flagged
                s.onMismatch = m
            }
            return s
        }
    }

    /// Keeps the context to report PNGs that could not be written.
    public func open(_ context: SinkContext) { self.context = context }

    /// Nothing per frame: the display hands over captures.
    public func frame(_ report: FrameReport) {}

    /// The run never started: lets the context go.
    public func discard() { context = nil }

    /// Waits for the worker and reports the PNGs that could not be written, if any. Lets the
    /// context go: the renderer's closure holds this object and the context holds the run, so
    /// keeping it would keep the run alive for ever.
    public func close(_ summary: RunSummary) {
        let context = self.context
        self.context = nil
        let (failed, first, captures) = worker.sync { (pngFailures, firstPNGFailure, self.summary.captures) }
        guard let first else { return }
        context?.fail(
            SinkFailure(
                incompleteOutput:
                    "captures \(pngBase)*.png: \(failed) of \(captures) not written (first \(first.path): \(first.error))",
                notice:
                    "cadence: \(failed) of \(captures) writeback captures were not written as PNGs (first \(first.path): \(first.error))"
            ))
    }

    /// `LOG-capture-` beside the log (its extension dropped), else `capture-` in the working
    /// directory.
    public static func pngBase(log: String?) -> String {
        guard var base = log else { return "capture-" }
        for ext in [".zst", ".jsonl", ".json", ".log"] where base.hasSuffix(ext) { base.removeLast(ext.count) }
        return base + "-capture-"
    }
}
