import CadenceCore
import DRM

// The writeback capture's steps on the display (start, keep a render, put the capture in the
// flip commit, poll fences, the on-mismatch ring, finish); its types are in WritebackState.swift.

extension KMSDisplay {
    /// Capture buffers in the ring when capturing on a mismatch: the early verdict comes
    /// ``earlyVerdictMargin`` vblanks after a flip (a line or flip that far past it), and one
    /// more while the change it brought awaits the next line; with one flip a refresh that makes
    /// 4 jobs awaiting their verdict with the next flip's, and 2 more refreshes of slack.
    public static let mismatchRing = 6
    /// Vblanks the early verdicts keep open for late lines and flips (the full verifier keeps 600).
    public static let earlyVerdictMargin: UInt64 = 2

    /// Starts writeback capture: finds a writeback connector for the CRTC whose encoder and the
    /// display's clone each other (their `possible_clones`; otherwise
    /// ``WritebackUnavailable/cannotClone(writeback:connector:cloning:)``, before any commit) and
    /// that writes XRGB8888, allocates two capture buffers of the mode's size, and attaches the
    /// connector (a modeset, ALLOW_MODESET, done once now: start a CRC capture after this, not
    /// before).
    ///
    /// From then on, when a frame is finished, `request` is asked for its label (the frame
    /// index; nil: not to be captured); a labelled frame's render is kept, its flip commit
    /// also sets `WRITEBACK_FB_ID` and the out fence, the fence is polled beside the flip
    /// events, and once it signals `deliver` gets the render and the capture.
    ///
    /// `onMismatch`: capture on a CRC mismatch instead. ``mismatchRing`` capture buffers are
    /// allocated, every labelled frame's flip commit carries a job into a free one (its render
    /// copied into one of ``mismatchRing`` + 3 copies allocated once), and a buffer is read only
    /// when the CRC's early verdict
    /// (``CRCLineReader/judgeEarly(margin:)``, started by ``verifyScanout(source:)``, which must
    /// follow) flags its frame: stale, or the picture on screen when the content changed without
    /// a flip. Other buffers are recycled unread, the judged ones first. `deliver` then gets the
    /// capture with its reason and the job's render (empty when no copy was free).
    public func startWriteback(
        onMismatch: Bool = false, request: @escaping () -> Int?, deliver: @escaping (WritebackCapture) -> Void
    ) throws(WritebackUnavailable) {
        guard output.api != .legacy else { throw .legacyAPI }
        let driver = (try? device.version().name) ?? "this driver"
        let list: [WritebackConnector]
        do {
            try device.enableWriteback()
            list = try device.writebackConnectors()
        } catch {
            throw .noConnector(driver: driver)
        }
        guard !list.isEmpty else { throw .noConnector(driver: driver) }
        let writable = list.filter { $0.canWrite(crtcIndex: output.crtcIndex) }
        guard !writable.isEmpty else { throw .notForCRTC(driver: driver, crtcIndex: output.crtcIndex) }
        // The display's encoder and the writeback connector's share the CRTC: the kernel's clone
        // check must pass (without the encoders' data the attach commit decides).
        let shown = (try? device.connector(output.connector.id).encoderID).flatMap { $0.rawValue != 0 ? $0 : nil }
        let displayEncoder = shown ?? output.connector.encoders.first
        let cloning = writable.map { w in
            displayEncoder.flatMap { d in w.encoders.first.flatMap { try? device.cloning([d, $0]) } }
        }
        guard let pick = writable.indices.first(where: { cloning[$0]?.allowed ?? true }) else {
            throw .cannotClone(writeback: writable[0].name, connector: output.connector.name, cloning: cloning[0]!)
        }
        let wb = writable[pick]
        guard wb.formats.contains(.xrgb8888) else {
            throw .noFormat(driver: driver, formats: wb.formats.map(\.description))
        }
        do {
            let buffers = try (0..<(onMismatch ? Self.mismatchRing : 2)).map { _ in
                try ScanoutBuffer(dumbOn: device, width: shadow.width, height: shadow.height)
            }
            try device.atomicCommit([wb.attach(to: output.crtc)], flags: .allowModeset, object: wb.name)
            let w = WritebackState(
                connector: wb, buffers: buffers, onMismatch: onMismatch, request: request, deliver: deliver)
            if onMismatch {
                w.renders = (0..<(Self.mismatchRing + 3)).map { _ in
                    [UInt32](repeating: 0, count: shadow.width * shadow.height)
                }
                w.freeRenders = Array(w.renders.indices.reversed())
                w.renderOf.reserveCapacity(w.renders.count)
            }
            writeback = w
        } catch let e as DRMError {
            throw .failed(e)
        } catch {
            throw .failed(DRMError(call: "writeback", object: wb.name, errno: .ioError))
        }
    }

    /// True while ``startWriteback(onMismatch:request:deliver:)`` runs.
    public var isCapturingWriteback: Bool { writeback != nil }

    /// At finish: keeps the render of a frame the caller wants captured.
    func keepForCapture(_ frame: FrameID) {
        guard let w = writeback, let label = w.request() else { return }
        if w.onMismatch {
            // The render into a copy allocated once (a copy a frame; nothing allocated), kept
            // with the job to compare a flagged capture with.
            if let r = w.freeRenders.popLast() {
                copyRender(w, into: r)
                w.renderOf[frame] = r
            }
            w.kept[frame] = (label, [])
            return
        }
        let pixels = packedPixels(w, shadow.pixels, width: shadow.width, height: shadow.height, stride: shadow.stride)
        w.kept[frame] = (label, pixels)
    }

    /// The writeback properties for the flip of `frame` (none when it is not to be captured,
    /// or no capture buffer is free: then it is skipped).
    func captureProperties(_ frame: FrameID) -> [AtomicProperty] {
        guard let w = writeback else { return [] }
        if let p = w.planned {
            // The last planned commit failed: its buffer is free again.
            w.free.append(p.buffer)
            freeRender(w, p.frame)
            w.planned = nil
        }
        guard let k = w.kept.removeValue(forKey: frame) else { return [] }
        if w.onMismatch { serviceRing(w) }
        guard let b = w.free.popLast() ?? (w.onMismatch ? recycle(w) : nil) else {
            if w.onMismatch { w.counts.withoutJob += 1 } else { w.stats.skipped += 1 }
            freeRender(w, frame)
            return []
        }
        w.planned = (frame, b, k.label, k.pixels)
        return w.connector.capture(into: w.buffers[b].framebuffer, fence: w.slot)
    }

    /// After a successful flip commit: the planned capture is in flight with its fence; kept
    /// renders of earlier frames will never be flipped (skipped).
    func captureCommitted(_ frame: FrameID) {
        guard let w = writeback else { return }
        for old in w.kept.keys where old < frame {
            w.kept[old] = nil
            freeRender(w, old)
            // Never flipped: nothing to flag when capturing on a mismatch.
            if !w.onMismatch { w.stats.skipped += 1 }
        }
        guard let p = w.planned, p.frame == frame else { return }
        w.planned = nil
        if w.onMismatch {
            w.ring.append(
                RingJob(
                    frame: p.frame, label: p.label, buffer: p.buffer, render: w.renderOf.removeValue(forKey: p.frame),
                    fence: w.slot.take(device: device)))
            w.counts.jobs += 1
            return
        }
        w.pending.append((p.frame, p.label, p.pixels, p.buffer, w.slot.take(device: device)))
    }

    /// Delivers every capture whose fence has signalled (without waiting).
    func pollCaptures(timeoutNs: Int64 = 0) {
        if let w = writeback, w.onMismatch {
            serviceRing(w)
            readFlagged(w, timeoutNs: timeoutNs)
            return
        }
        guard let w = writeback, !w.pending.isEmpty else { return }
        var i = 0
        while i < w.pending.count {
            let p = w.pending[i]
            let done = (try? p.fence?.wait(timeoutNs: timeoutNs)) ?? true
            guard done == true else {
                i += 1
                continue
            }
            w.pending.remove(at: i)
            deliver(w, buffer: p.buffer) { b, captured in
                WritebackCapture(
                    frame: p.frame, label: p.label, width: b.width, height: b.height, rendered: p.pixels,
                    captured: captured)
            }
        }
    }

    /// Reads capture buffer `index`, frees it, counts the capture and delivers what `capture`
    /// makes of the buffer and its pixels.
    private func deliver(
        _ w: WritebackState, buffer index: Int, _ capture: (ScanoutBuffer, [UInt32]) -> WritebackCapture
    ) {
        let captured = readCapture(w, index)
        w.free.append(index)
        w.stats.captures += 1
        w.deliver(capture(w.buffers[index], captured))
    }

    /// Capturing on a mismatch: copies the shadow buffer (the render just finished) into render
    /// copy `index`, in place (timed with the reads).
    private func copyRender(_ w: WritebackState, into index: Int) {
        let t0 = device.monotonicNow()
        let (width, height, stride, base) = (shadow.width, shadow.height, shadow.stride, shadow.pixels)
        w.renders[index].withUnsafeMutableBytes { dst in
            for y in 0..<height {
                (dst.baseAddress! + y * width * 4).copyMemory(from: base + y * stride, byteCount: width * 4)
            }
        }
        w.readNs += device.monotonicNow() - t0
    }

    /// Capturing on a mismatch: the render copy of kept or planned `frame` is free again.
    private func freeRender(_ w: WritebackState, _ frame: FrameID) {
        if let r = w.renderOf.removeValue(forKey: frame) { w.freeRenders.append(r) }
    }

    /// Reads capture buffer `index` (timed).
    private func readCapture(_ w: WritebackState, _ index: Int) -> [UInt32] {
        let b = w.buffers[index]
        return packedPixels(w, b.pixels, width: b.width, height: b.height, stride: b.stride)
    }

    /// The `width` x `height` pixels at `base` (rows `stride` bytes apart), packed row after
    /// row; the time it took is added to the capture path's.
    private func packedPixels(
        _ w: WritebackState, _ base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int
    ) -> [UInt32] {
        let t0 = device.monotonicNow()
        var packed = [UInt32](repeating: 0, count: width * height)
        packed.withUnsafeMutableBytes { dst in
            for y in 0..<height {
                (dst.baseAddress! + y * width * 4).copyMemory(from: base + y * stride, byteCount: width * 4)
            }
        }
        w.readNs += device.monotonicNow() - t0
        return packed
    }

    /// Capturing on a mismatch: the vblank the flip of `frame` latched at, for the changes
    /// without a flip that come later.
    func ringFlipped(_ frame: FrameID, sequence: UInt64) {
        guard let w = writeback, w.onMismatch, let i = w.ring.lastIndex(where: { $0.frame == frame }) else { return }
        w.ring[i].sequence = sequence
    }

    /// Capturing on a mismatch: takes the CRC's early verdicts (or `final`, the last ones) and
    /// marks the jobs: stale frames flagged, the picture before a change without a flip flagged,
    /// the others judged. A flag for a frame whose job is gone (recycled before its verdict, or
    /// never attached) is counted as skipped.
    func serviceRing(_ w: WritebackState, final: CRCLineReader? = nil) {
        guard let reader = final ?? scanout else { return }
        let (frames, changes) = final != nil ? reader.finishedEarlyVerdicts() : reader.takeEarlyVerdicts()
        for v in frames {
            if v.kind == .stale { w.stats.earlyStaleFlags += 1 }
            guard let i = w.ring.firstIndex(where: { $0.frame == v.frame }) else {
                if v.kind == .stale { w.stats.skipped += 1 }
                continue
            }
            if v.kind == .stale { w.ring[i].reason = .stale } else { w.ring[i].judged = true }
        }
        for c in changes {
            // The picture that changed: the newest flip before the change, if its job is still here.
            guard let i = w.ring.lastIndex(where: { ($0.sequence ?? .max) < c }),
                i + 1 == w.ring.count || (w.ring[i + 1].sequence ?? .max) > c
            else {
                w.stats.skipped += 1
                continue
            }
            if w.ring[i].reason == nil {
                w.ring[i].reason = .changeWithoutFlip
                w.ring[i].changeVBlank = c
            }
        }
    }

    /// Capturing on a mismatch, no buffer free: recycles the oldest job not flagged whose
    /// buffer has been written, a judged one first. Nil when every one is flagged or pending.
    private func recycle(_ w: WritebackState) -> Int? {
        for judged in [true, false] {
            guard let i = w.ring.firstIndex(where: { $0.reason == nil && $0.judged == judged && $0.written }) else {
                continue
            }
            let job = w.ring.remove(at: i)
            if let r = job.render { w.freeRenders.append(r) }
            w.counts.recycledUnread += 1
            if !judged { w.counts.recycledUnjudged += 1 }
            return job.buffer
        }
        return nil
    }

    /// Capturing on a mismatch: reads and delivers every flagged job whose buffer has been
    /// written (waiting up to `timeoutNs` for each).
    private func readFlagged(_ w: WritebackState, timeoutNs: Int64) {
        var i = 0
        while i < w.ring.count {
            let job = w.ring[i]
            guard job.reason != nil, (try? job.fence?.wait(timeoutNs: timeoutNs)) ?? true else {
                i += 1
                continue
            }
            w.ring.remove(at: i)
            // The copy goes with the capture (the slot's next write copies it once, per flag).
            let rendered = job.render.map { w.renders[$0] } ?? []
            if let r = job.render { w.freeRenders.append(r) }
            deliver(w, buffer: job.buffer) { b, captured in
                WritebackCapture(
                    frame: job.frame, label: job.label, width: b.width, height: b.height, rendered: rendered,
                    captured: captured, reason: job.reason, changeVBlank: job.changeVBlank)
            }
        }
    }

    /// Ends the capture: waits up to 3 refreshes for the fences still pending, delivers those
    /// captures, detaches the connector and returns what was done (nil when none ran). When
    /// capturing on a mismatch, call it after ``finishScanoutVerification()``, which hands the
    /// last early verdicts over; the jobs left unflagged are counted as recycled unread.
    public func finishWriteback() -> WritebackStatistics? {
        guard let w = writeback else { return nil }
        let give = device.monotonicNow() + Int64(3 * refreshInterval)
        func waiting() -> Bool { w.onMismatch ? w.ring.contains { $0.reason != nil } : !w.pending.isEmpty }
        while waiting(), device.monotonicNow() < give {
            pollCaptures(timeoutNs: min(1_000_000, max(0, give - device.monotonicNow())))
        }
        if w.onMismatch {
            w.stats.timedOut = w.ring.filter { $0.reason != nil }.count
            w.counts.recycledUnread += w.ring.filter { $0.reason == nil }.count
            w.stats.onMismatch = w.counts
        } else {
            w.stats.timedOut = w.pending.count
            w.stats.skipped += w.kept.count
        }
        w.stats.readMicroseconds = Double(w.readNs) / 1e3
        let stats = w.stats
        stopWriteback()
        return stats
    }

    /// Detaches the writeback connector (before the CRTC is restored) and frees the buffers.
    func stopWriteback() {
        guard let w = writeback else { return }
        try? device.atomicCommit([w.connector.attach(to: CRTCID(0))], flags: .allowModeset, object: w.connector.name)
        writeback = nil
    }
}
