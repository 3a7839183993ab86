/// The measurement loop: flip a swapchain at every vblank and record the kernel's
/// timestamps.

/// One flip completion as the kernel reported it.
public struct FlipSample: Equatable, Sendable {
    /// The vblank sequence, widened to 64 bits (0 on drivers without vblank).
    public var sequence: UInt64
    /// Kernel timestamp of the flip (CLOCK_MONOTONIC ns; µs precision).
    public var timestampNs: Int64
    /// When the event was read (CLOCK_MONOTONIC ns).
    public var receivedNs: Int64
    /// When the flip was submitted (CLOCK_MONOTONIC ns, just before the commit call).
    public var submittedNs: Int64
    public init(sequence: UInt64, timestampNs: Int64, receivedNs: Int64, submittedNs: Int64 = 0) {
        self.sequence = sequence; self.timestampNs = timestampNs; self.receivedNs = receivedNs
        self.submittedNs = submittedNs
    }
}

/// What ``KMSOutput/recordFlips(swapchain:shadow:durationNs:)`` saw.
public struct FlipRecording: Sendable {
    public var samples: [FlipSample]
    /// Hardware vblank, or none (commit-completion timestamps).
    public var vblank: VBlankSupport
    /// The signal that cut the run short, or 0.
    public var stoppedBySignal: Int32
}

extension KMSOutput {
    /// Sets the mode and flips through `swapchain` at every vblank for `durationNs`,
    /// recording each flip event. Each buffer is filled once from `shadow` (a sequential
    /// copy). On drivers without vblank the flips are paced to the mode's period instead.
    /// Stops early on SIGINT/SIGTERM (see ``StopSignal``). The caller restores the CRTC.
    ///
    /// The first `warmupFlips` flip completions after the modeset (first-run code paths,
    /// page faults, the new timing settling) are not recorded; `durationNs` counts from the
    /// end of the warm-up.
    public func recordFlips(swapchain: Swapchain, shadow: ShadowBuffer, durationNs: Int64, warmupFlips: Int = 3) throws -> FlipRecording {
        let shades: [UInt32] = [0x0020_3040, 0x0030_4050, 0x0040_5060]
        for (i, b) in swapchain.buffers.enumerated() {
            shadow.fill(shades[i % shades.count])
            shadow.copy(to: b)
        }
        try modeset(framebuffer: swapchain.buffers[0].framebuffer)
        swapchain.markOnScreen(0)
        var vblank = probeVBlank()
        let period = Int64(mode.refreshInterval.rounded())
        var samples: [FlipSample] = []
        if period > 0 { samples.reserveCapacity(Int(min(durationNs / period, 10_000_000)) + 64) }
        var widener = SequenceWidener()
        var end = device.monotonicNow() + durationNs
        var warmupLeft = warmupFlips

        var submittedAt = [Int64](repeating: 0, count: swapchain.buffers.count)
        func submitNext() throws {
            guard let i = swapchain.acquire() else { return }
            submittedAt[i] = device.monotonicNow()
            try flip(to: swapchain.buffers[i].framebuffer, userData: UInt64(i) + 1)
            swapchain.markQueued(i)
        }
        try submitNext()
        var lastEvent = device.monotonicNow()
        var nextSubmitAt: Int64?
        while StopSignal.received == 0 {
            let now = device.monotonicNow()
            if !flipPending && now >= end { break }
            if let at = nextSubmitAt, !flipPending, now >= at {
                nextSubmitAt = nil
                try submitNext()
                continue
            }
            let wake = nextSubmitAt.map { min($0, lastEvent + 1_000_000_000) } ?? (lastEvent + 1_000_000_000)
            let events = try readEvents(until: wake)
            let received = device.monotonicNow()
            if events.isEmpty {
                if flipPending && received >= lastEvent + 1_000_000_000 {
                    throw DRMError(call: "wait for page-flip event", object: "\(crtc)", errno: .init(rawValue: 62)) // ETIME
                }
                continue
            }
            for e in events where e.kind == .flipComplete {
                lastEvent = received
                let seq = vblank == .hardware ? widener.widen(UInt32(truncatingIfNeeded: e.sequence)) : 0
                if warmupLeft > 0 {
                    warmupLeft -= 1
                    end = received + durationNs
                } else {
                    let buffer = e.userData >= 1 && e.userData <= UInt64(swapchain.buffers.count) ? Int(e.userData) - 1 : -1
                    let submitted = submittedAt.indices.contains(buffer) ? submittedAt[buffer] : 0
                    samples.append(FlipSample(sequence: seq, timestampNs: e.timestampNs, receivedNs: received, submittedNs: submitted))
                }
                if e.userData >= 1, e.userData <= UInt64(swapchain.buffers.count) { swapchain.markOnScreen(Int(e.userData) - 1) }
                guard received < end else { continue }
                if vblank == .hardware {
                    try submitNext()
                } else {
                    // No vblank to wait for: pace commits to the nominal period.
                    nextSubmitAt = e.timestampNs + period
                }
            }
        }
        // A driver that claims vblank but reports sequence 0 on every flip has none.
        if vblank == .hardware, samples.count > 2, samples.allSatisfy({ $0.sequence == 0 }) { vblank = .none }
        return FlipRecording(samples: samples, vblank: vblank, stoppedBySignal: StopSignal.received)
    }
}
