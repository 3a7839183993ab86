import CadenceCore
import DRM

/// `measure`'s scanout check: the CRTC's CRC read beside the flip events and judged against the
/// recorded flips (``ScanoutVerifier``). Every flip of a ``FlipRecorder`` shows another buffer of
/// its own shade, so the content changes at each flip the panel latched.
final class FlipScanout {
    let capture: CRCCapture
    var verifier = ScanoutVerifier()
    var widener = SequenceWidener()
    var lines: [CRCLine] = []
    var readNs: Int64 = 0
    var reads = 0
    var failure: String?
    /// Lines before this vblank (the warm-up's) are not judged; nil while warming up.
    private(set) var from: UInt64?
    /// The last lines read while warming up (the one of the last warm-up vblank may be among them).
    private var pending: [ScanoutVerifier.Sample] = []
    var lastFlip: UInt64?

    init(capture: CRCCapture) {
        self.capture = capture
        lines.reserveCapacity(16)
    }

    /// Reads the lines ready now (non-blocking); a failed read ends the capture quietly.
    func read() {
        guard failure == nil else { return }
        let device = capture.device
        let t0 = device.monotonicNow()
        lines.removeAll(keepingCapacity: true)
        do { _ = try capture.readAvailable(into: &lines) } catch { failure = "\(error)" }
        let t1 = device.monotonicNow()
        readNs += t1 - t0
        reads += 1
        for line in lines {
            guard let frame = line.frame else { continue }
            let seq = widener.widen(frame)
            let sample = ScanoutVerifier.Sample(sequence: seq, crc: ScanoutVerifier.fold(line.values), receivedAt: t1)
            guard let f = from else {
                if pending.count == 8 { pending.removeFirst() }
                pending.append(sample)
                continue
            }
            if seq >= f { verifier.add(sample) }
        }
    }

    /// Judges lines from vblank `sequence` on (the last warm-up flip's: the picture the first
    /// recorded flip replaces), those already read included.
    func judge(from sequence: UInt64) {
        from = sequence
        for x in pending where x.sequence >= sequence { verifier.add(x) }
        pending = []
    }

    /// Waits (up to `limit` ns) for a line past the last flip, then gives the verdict.
    func finish(limit: Int64) -> ScanoutSummary {
        let device = capture.device
        let give = device.monotonicNow() + limit
        if let last = lastFlip {
            while widener.last ?? 0 <= last, device.monotonicNow() < give, failure == nil {
                read()
                if widener.last ?? 0 > last { break }
                device.busyWait(until: min(give, device.monotonicNow() + 1_000_000))
            }
        }
        var s = verifier.finish()
        s.source = capture.source
        s.reads = reads
        s.readMicroseconds = Double(readNs) / 1e3
        s.failure = failure
        return s
    }
}
