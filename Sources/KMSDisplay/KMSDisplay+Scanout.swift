import CadenceCore
import DRM

extension KMSDisplay {
    /// Starts verifying what the CRTC scans out with its CRC (debugfs `crtc-M/crc`, `source`
    /// written to its control file): from now on every flip completion and every CRC line is
    /// recorded, the lines read without waiting beside the flip events and before each flip
    /// (a ``CRCLineReader``). Every frame must then differ from the one before (draw a frame
    /// identity into each).
    ///
    /// With writeback capturing on a mismatch (``startWriteback(onMismatch:request:deliver:)``,
    /// started before), the lines are also judged early (``earlyVerdictMargin``) to flag the
    /// frames whose capture is read.
    ///
    /// Throws `CRCError`: unsupported (the driver has no CRC for this CRTC), no access
    /// (debugfs not mounted, not root), or a failed call.
    public func verifyScanout(source: String = "auto") throws(CRCError) {
        let capture = try CRCCapture(device: device, crtcIndex: output.crtcIndex, source: source)
        let reader = CRCLineReader(capture: capture, anchor: last.sequence)
        if writeback?.onMismatch == true { reader.judgeEarly(margin: Self.earlyVerdictMargin) }
        scanout = reader
        // Wait (up to 3 refreshes) for the first line, so that the first flip has a line before it.
        reader.waitForFirstLine(limit: Int64(3 * refreshInterval))
    }

    /// True while ``verifyScanout(source:)`` runs.
    public var isVerifyingScanout: Bool { scanout != nil }

    /// The CRC source being verified (`auto`, …), nil when no verification runs.
    public var scanoutSource: String? { scanout?.source }

    /// Hands every CRC sample of the running verification to `body`: those read before the
    /// first flip at once, then each as it is read (on the thread that runs the display, before
    /// the flip completion the read precedes, and while ``finishScanoutVerification()`` reads
    /// the last lines). One observer: a second call replaces the first. Nothing happens when no
    /// verification runs.
    public func observeScanoutSamples(_ body: @escaping (ScanoutVerifier.Sample) -> Void) {
        scanout?.observe(body)
    }

    /// Reads the CRC lines ready now into the verifier (non-blocking). A read that fails ends
    /// the capture quietly: what was read still counts.
    func readScanout() { scanout?.read() }

    /// Records a flip completion of frame `frame` at `vblank`.
    func scanoutFlip(_ frame: FrameID, _ vblank: VBlank) {
        scanout?.flip(frame, sequence: vblank.sequence, timestamp: vblank.timestamp)
        if writeback != nil { ringFlipped(frame, sequence: vblank.sequence) }
    }

    /// Ends the verification: waits up to 3 refreshes for the line of the vblank after the last
    /// flip (so that the last frame is judged), stops the capture and returns the verdict, with
    /// the cost of reading (µs per read, per line). Nil when no verification ran.
    public func finishScanoutVerification() -> ScanoutSummary? {
        guard let reader = scanout else { return nil }
        let summary = reader.finish(limit: Int64(3 * refreshInterval))
        // The last frames' early verdicts, for the writeback jobs still waiting on them.
        if let w = writeback, w.onMismatch { serviceRing(w, final: reader) }
        scanout = nil
        return summary
    }
}
