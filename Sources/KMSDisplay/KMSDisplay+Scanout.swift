import CadenceCore
import DRM

/// Scanout verification on one output: the CRTC's CRC capture, the lines read so far and the
/// flips they are judged against (``KMSDisplay/verifyScanout(source:)``).
final class ScanoutState {
    let capture: CRCCapture
    var verifier = ScanoutVerifier()
    var lines: [CRCLine] = []
    var widener: SequenceWidener
    /// Time spent in non-blocking reads of the data file, and how many reads.
    var readNs: Int64 = 0
    var reads = 0
    var lastFlip: UInt64?
    /// Sees every sample as it is read (a run log's CRC records).
    var onSample: ((ScanoutVerifier.Sample) -> Void)?

    init(capture: CRCCapture, anchor: UInt64) {
        self.capture = capture
        widener = SequenceWidener(anchor: anchor)
        lines.reserveCapacity(16)
    }
}

extension KMSDisplay {
    /// Starts verifying what the CRTC scans out with its CRC (debugfs `crtc-M/crc`, `source`
    /// written to its control file): from now on every flip completion and every CRC line is
    /// recorded, the lines read without waiting beside the flip events and before each flip.
    /// Every frame must then differ from the one before (draw a frame identity into each).
    ///
    /// Throws `CRCError`: unsupported (the driver has no CRC for this CRTC), no access
    /// (debugfs not mounted, not root), or a failed call.
    public func verifyScanout(source: String = "auto") throws(CRCError) {
        let capture = try CRCCapture(device: device, crtcIndex: output.crtcIndex, source: source)
        let s = ScanoutState(capture: capture, anchor: last.sequence)
        scanout = s
        // Wait (up to 3 refreshes) for the first line, so that the first flip has a line before it.
        let give = device.monotonicNow() + Int64(3 * refreshInterval)
        while s.verifier.sampleCount == 0, device.monotonicNow() < give, scanoutFailure == nil {
            readScanout()
            if s.verifier.sampleCount > 0 { break }
            device.busyWait(until: min(give, device.monotonicNow() + 1_000_000))
        }
    }

    /// True while ``verifyScanout(source:)`` runs.
    public var isVerifyingScanout: Bool { scanout != nil }

    /// The CRC source being verified (`auto`, …), nil when no verification runs.
    public var scanoutSource: String? { scanout?.capture.source }

    /// Hands every CRC sample of the running verification to `body`: those read so far at
    /// once, then each as it is read (on the thread that runs the display, before the flip
    /// completion the read precedes, and while ``finishScanoutVerification()`` reads the last
    /// lines). One observer: a second call replaces the first. Nothing happens when no
    /// verification runs.
    public func observeScanoutSamples(_ body: @escaping (ScanoutVerifier.Sample) -> Void) {
        guard let s = scanout else { return }
        for x in s.verifier.samples { body(x) }
        s.onSample = body
    }

    /// Reads the CRC lines ready now into the verifier (non-blocking). A read that fails ends
    /// the capture quietly: what was read still counts.
    func readScanout() {
        guard let s = scanout else { return }
        let t0 = device.monotonicNow()
        s.lines.removeAll(keepingCapacity: true)
        do {
            try s.capture.readAvailable(into: &s.lines)
        } catch {
            scanoutFailure = "\(error)"
        }
        let t1 = device.monotonicNow()
        s.readNs += t1 - t0
        s.reads += 1
        for line in s.lines {
            guard let frame = line.frame else { continue }
            let seq = s.widener.widen(frame)
            let sample = ScanoutVerifier.Sample(sequence: seq, crc: ScanoutVerifier.fold(line.values), receivedAt: t1)
            s.verifier.add(sample)
            s.onSample?(sample)
        }
    }

    /// Records a flip completion of frame `frame` at `vblank`.
    func scanoutFlip(_ frame: FrameID, _ vblank: VBlank) {
        guard let s = scanout else { return }
        s.verifier.add(ScanoutVerifier.Flip(frame: frame, sequence: vblank.sequence, timestamp: vblank.timestamp))
        s.lastFlip = vblank.sequence
    }

    /// Ends the verification: waits up to 3 refreshes for the line of the vblank after the last
    /// flip (so that the last frame is judged), stops the capture and returns the verdict, with
    /// the cost of reading (µs per read, per line). Nil when no verification ran.
    public func finishScanoutVerification() -> ScanoutSummary? {
        guard let s = scanout else { return nil }
        if let lastFlip = s.lastFlip {
            let give = device.monotonicNow() + Int64(3 * refreshInterval)
            while s.widener.last ?? 0 <= lastFlip, device.monotonicNow() < give, scanoutFailure == nil {
                readScanout()
                if s.widener.last ?? 0 > lastFlip { break }
                device.busyWait(until: min(give, device.monotonicNow() + 1_000_000))
            }
        }
        var summary = s.verifier.finish()
        summary.source = s.capture.source
        summary.reads = s.reads
        summary.readMicroseconds = Double(s.readNs) / 1e3
        summary.failure = scanoutFailure
        scanout = nil
        return summary
    }
}
