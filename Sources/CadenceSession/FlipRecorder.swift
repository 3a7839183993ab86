import CadenceCore
import DRM
import Foundation
import KMSDisplay

// The measurement loop of `cadence measure`: flip a swapchain at every vblank and record the
// kernel's timestamps, for `RefreshMeasurement`. One ``FlipRecorder`` per output; the outputs
// of one card are served turn by turn on one thread (``FlipRecorder/recordFlips(_:notice:shouldStop:)``).

/// What a ``FlipRecorder`` saw.
public struct FlipRecording: Sendable {
    /// Every recorded flip completion (sequence 0 on drivers without vblank).
    public var flips: [FlipTimestamp]
    /// Hardware vblank, or none (commit-completion timestamps).
    public var vblank: VBlankSupport
    /// True when `shouldStop` cut the run short.
    public var stopped: Bool
    /// Indices of flips that start a stretch after a session gap (VT switched away and back).
    public var breaks: Set<Int> = []
    /// The scanout check's verdict over the recorded flips (``FlipRecorder/crcSource``), each
    /// recorded flip a frame whose id is its index + 1; nil without the check.
    public var scanout: ScanoutSummary?
}

/// One output's measurement: its swapchain flipped at every vblank (or, without vblank, once per
/// nominal period after each completion), each completion after the warm-up recorded.
///
///     let recorder = FlipRecorder(output: output, swapchain: chain, shadow: shadow,
///                                 durationNs: 5_000_000_000, warmupFlips: 3)
///     let stopped = try FlipRecorder.recordFlips([recorder], shouldStop: { false })
///     let recording = recorder.recording(stopped: stopped)
public final class FlipRecorder {
    /// The output measured.
    public let output: KMSOutput
    private let swapchain: Swapchain
    private let durationNs: Int64
    private let period: Int64
    private var vblank: VBlankSupport = .none
    private var samples: [FlipTimestamp] = []
    private var widener = SequenceWidener()
    private var end: Int64 = 0
    private var warmupLeft: Int
    private var submittedAt: [Int64]
    private var lastEvent: Int64 = 0
    private var nextSubmitAt: Int64?
    /// Indices of samples that start a stretch after a session gap.
    public private(set) var breaks: Set<Int> = []
    private var breakNext = false
    /// Paused by the seat (VT switched away): nothing is flipped.
    public private(set) var paused = false
    /// The CRC source to verify the recorded flips against (`auto`), set before the
    /// measurement starts; nil for none. Starting throws `CRCError` when the CRTC has no CRC or
    /// debugfs cannot be read.
    public var crcSource: String?
    private var scanout: CRCLineReader?

    /// Paints each buffer of `swapchain` a shade of its own through `shadow` (never reading the
    /// buffers back). `warmupFlips` flips after the modeset are not recorded (and the duration
    /// starts after them).
    public init(output: KMSOutput, swapchain: Swapchain, shadow: ShadowBuffer, durationNs: Int64, warmupFlips: Int) {
        self.output = output
        self.swapchain = swapchain
        self.durationNs = durationNs
        warmupLeft = warmupFlips
        period = Int64(output.mode.refreshInterval.rounded())
        submittedAt = Array(repeating: 0, count: swapchain.buffers.count)
        let shades: [UInt32] = [0x0020_3040, 0x0030_4050, 0x0040_5060]
        for (i, b) in swapchain.buffers.enumerated() {
            shadow.fill(shades[i % shades.count])
            shadow.copy(to: b)
        }
        if period > 0 { samples.reserveCapacity(Int(min(durationNs / period, 10_000_000)) + 64) }
    }

    /// Sets the mode, probes the vblank and queues the first flip.
    public func start() throws {
        try output.modeset(framebuffer: swapchain.buffers[0].framebuffer)
        swapchain.markOnScreen(0)
        vblank = output.probeVBlank()
        // The flips and the CRC lines are widened against the kernel's 64-bit count, so that both
        // are in one epoch even when the 32-bit counter wraps between the first of each.
        let anchor = vblank == .hardware ? (try? output.currentVBlank())?.sequence : nil
        if let anchor { widener = SequenceWidener(anchor: anchor) }
        if let source = crcSource {
            // Lines read during the warm-up are held: the last warm-up vblank's is the first judged.
            scanout = CRCLineReader(
                capture: try CRCCapture(device: output.device, crtcIndex: output.crtcIndex, source: source),
                anchor: anchor, judgingFrom: warmupLeft == 0 ? 0 : nil)
        }
        end = output.device.monotonicNow() + durationNs
        try submitNext()
        lastEvent = output.device.monotonicNow()
    }

    /// True once the duration is over and no flip is pending.
    public func isDone(at now: Int64) -> Bool { !paused && !output.flipPending && now >= end }

    /// When this output next needs the loop: its paced submit, or a second after its last event
    /// (to notice a flip that never completes).
    public var wake: Int64 { nextSubmitAt.map { min($0, lastEvent + 1_000_000_000) } ?? (lastEvent + 1_000_000_000) }

    /// Submits a paced flip that is due; true when it did.
    public func submitIfDue(at now: Int64) throws -> Bool {
        guard let at = nextSubmitAt, !output.flipPending, now >= at else { return false }
        nextSubmitAt = nil
        try submitNext()
        return true
    }

    /// Records `events` (this output's, read at `received`) and queues the next flip.
    public func handle(_ events: [DRMEvent], received: Int64) throws {
        // The lines of the vblanks up to now come before the flips they are judged against.
        scanout?.read()
        for e in events where e.kind == .flipComplete {
            lastEvent = received
            let seq = vblank == .hardware ? widener.widen(UInt32(truncatingIfNeeded: e.sequence)) : 0
            if warmupLeft > 0 {
                warmupLeft -= 1
                end = received + durationNs
                // The last warm-up frame's vblank is the first line judged.
                if warmupLeft == 0 { scanout?.judge(from: seq) }
            } else {
                scanout?.flip(FrameID(samples.count + 1), sequence: seq, timestamp: e.timestampNs)
                let buffer = e.userData >= 1 && e.userData <= UInt64(swapchain.buffers.count) ? Int(e.userData) - 1 : -1
                let submitted = submittedAt.indices.contains(buffer) ? submittedAt[buffer] : 0
                if breakNext { breaks.insert(samples.count); breakNext = false }
                samples.append(
                    FlipTimestamp(
                        sequence: seq, timestamp: e.timestampNs, receivedAt: received,
                        submittedAt: submitted > 0 ? submitted : nil))
            }
            if e.userData >= 1, e.userData <= UInt64(swapchain.buffers.count) {
                swapchain.markOnScreen(Int(e.userData) - 1)
            }
            guard received < end, !paused else { continue }
            if vblank == .hardware {
                try submitNext()
            } else {
                // No vblank to wait for: pace commits to the nominal period.
                nextSubmitAt = e.timestampNs + period
            }
        }
    }

    /// Throws ETIME when a flip has been pending for a second with no event.
    public func checkStalled(at now: Int64) throws {
        if !paused && output.flipPending && now >= lastEvent + 1_000_000_000 {
            // ETIME
            throw DRMError(call: "wait for page-flip event", object: "\(output.crtc)", errno: .init(rawValue: 62))
        }
    }

    /// The seat disabled the session (VT switched away): the flip in flight gets up to 100 ms to
    /// complete (recorded as usual), then nothing is flipped until ``resume(gap:)``.
    public func pause() {
        let limit = output.device.monotonicNow() + 100_000_000
        while output.flipPending && output.device.monotonicNow() < limit {
            guard let events = try? output.readEvents(until: limit) else { break }
            try? handle(events, received: output.device.monotonicNow())
        }
        nextSubmitAt = nil
        output.sessionLost()
        paused = true
    }

    /// The session is back after `gap` ns: the mode is set again with the buffer on screen, the
    /// measurement runs `gap` longer, the next flip recorded starts a new stretch.
    public func resume(gap: Int64) throws {
        paused = false
        try output.modeset(framebuffer: swapchain.buffers[swapchain.onScreen ?? 0].framebuffer)
        end += gap
        breakNext = true
        lastEvent = output.device.monotonicNow()
        try submitNext()
    }

    /// What was recorded; `stopped`: whether the measurement was cut short. With the scanout
    /// check, waits up to 3 refreshes for the CRC line after the last flip and ends the capture.
    public func recording(stopped: Bool) -> FlipRecording {
        var v = vblank
        // A driver that claims vblank but reports sequence 0 on every flip has none.
        if v == .hardware, samples.count > 2, samples.allSatisfy({ $0.sequence == 0 }) { v = .none }
        var r = FlipRecording(flips: samples, vblank: v, stopped: stopped, breaks: breaks)
        r.scanout = scanout?.finish(limit: 3 * max(period, 1_000_000))
        scanout = nil
        return r
    }

    private func submitNext() throws {
        guard let i = swapchain.acquire() else { return }
        submittedAt[i] = output.device.monotonicNow()
        do {
            try output.flip(to: swapchain.buffers[i].framebuffer, userData: UInt64(i) + 1)
        } catch let e as DRMError where e.errno.rawValue == 13 || e.errno.rawValue == 1 {
            // seatd takes DRM master away before it sends the disable: a flip refused then is
            // the pause coming (the loop reads the disable next), not a lost device.
            guard let seat = output.device.seat, seat.disablePending() else { throw e }
            return
        }
        swapchain.markQueued(i)
    }

    /// Measures `recorders` (outputs of one card, started here) together until each is done or
    /// `shouldStop`: each turn submits what is due and handles what each output's events are,
    /// then waits on one output in rotation (a wait on a card that routes events per CRTC
    /// returns after any read; events for another CRTC are kept for it). A seat session's VT
    /// switch pauses every recorder and resumes it, each with one line to `notice`. Returns
    /// whether it was stopped.
    public static func recordFlips(
        _ recorders: [FlipRecorder], notice: (String) -> Void = { _ in }, shouldStop: () -> Bool
    ) throws -> Bool {
        for r in recorders { try r.start() }
        guard let device = recorders.first?.output.device else { return false }
        var rotation = 0
        var pausedAt: Int64?
        while true {
            if shouldStop() { return true }
            if let seat = device.seat {
                // The seat's fd is not in the DRM poll: read it every turn (waits are ≤ 10 ms).
                _ = try? seat.dispatch(timeoutMilliseconds: 0)
                for e in seat.takeEvents() {
                    switch e {
                    case .disabled where pausedAt == nil:
                        for r in recorders { r.pause() }
                        // A failed acknowledgement means the seat is already gone.
                        try? seat.acknowledgeDisable()
                        pausedAt = device.monotonicNow()
                        notice("session paused (VT switched away): no flips until it comes back")
                    case .enabled where pausedAt != nil:
                        let gap = device.monotonicNow() - pausedAt!
                        pausedAt = nil
                        try device.acquireMaster()
                        for r in recorders { try r.resume(gap: gap) }
                        notice(
                            String(
                                format: "session resumed after %.3f s: mode restored, measuring again",
                                Double(gap) / 1e9))
                    default: break
                    }
                }
                if pausedAt != nil {
                    _ = try? seat.dispatch(timeoutMilliseconds: 250)
                    continue
                }
            }
            let active = recorders.filter { !$0.isDone(at: device.monotonicNow()) }
            if active.isEmpty { return false }
            for r in active {
                _ = try r.submitIfDue(at: device.monotonicNow())
                // Events already read for it (or readable now): no wait.
                let events = try r.output.readEvents(until: 0)
                if !events.isEmpty { try r.handle(events, received: device.monotonicNow()) }
            }
            let k = active[rotation % active.count]
            rotation &+= 1
            var wake = active.map(\.wake).min() ?? 0
            if device.seat != nil { wake = min(wake, device.monotonicNow() + 10_000_000) }
            let events = try k.output.readEvents(until: wake)
            let received = device.monotonicNow()
            if !events.isEmpty { try k.handle(events, received: received) }
            for r in active { try r.checkStalled(at: received) }
        }
    }
}

extension KMSOutput {
    /// Measures this output alone (see ``FlipRecorder``), its flips checked against the CRTC's
    /// CRC from `crcSource` when given; `notice` gets the seat's pause and resume lines.
    public func recordFlips(
        swapchain: Swapchain, shadow: ShadowBuffer, durationNs: Int64, warmupFlips: Int = 3, crcSource: String? = nil,
        notice: (String) -> Void = { _ in }, shouldStop: () -> Bool = { false }
    ) throws -> FlipRecording {
        let r = FlipRecorder(
            output: self, swapchain: swapchain, shadow: shadow, durationNs: durationNs, warmupFlips: warmupFlips)
        r.crcSource = crcSource
        let stopped = try FlipRecorder.recordFlips([r], notice: notice, shouldStop: shouldStop)
        return r.recording(stopped: stopped)
    }
}
