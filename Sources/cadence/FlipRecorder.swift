import CadenceCore
import DRM

/// The measurement loop of `cadence measure`: flip a swapchain at every vblank and record the
/// kernel's timestamps, for ``RefreshMeasurement``.

/// What ``KMSOutput/recordFlips(swapchain:shadow:durationNs:warmupFlips:shouldStop:)`` saw.
struct FlipRecording: Sendable {
    /// Every recorded flip completion (sequence 0 on drivers without vblank).
    var flips: [FlipTimestamp]
    /// Hardware vblank, or none (commit-completion timestamps).
    var vblank: VBlankSupport
    /// True when `shouldStop` cut the run short.
    var stopped: Bool
}

extension KMSOutput {
    func recordFlips(swapchain: Swapchain, shadow: ShadowBuffer, durationNs: Int64, warmupFlips: Int = 3,
                     shouldStop: () -> Bool = { false }) throws -> FlipRecording {
        let shades: [UInt32] = [0x0020_3040, 0x0030_4050, 0x0040_5060]
        for (i, b) in swapchain.buffers.enumerated() {
            shadow.fill(shades[i % shades.count])
            shadow.copy(to: b)
        }
        try modeset(framebuffer: swapchain.buffers[0].framebuffer)
        swapchain.markOnScreen(0)
        var vblank = probeVBlank()
        let period = Int64(mode.refreshInterval.rounded())
        var samples: [FlipTimestamp] = []
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
        var stopped = false
        while true {
            if shouldStop() { stopped = true; break }
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
                    samples.append(FlipTimestamp(sequence: seq, timestamp: e.timestampNs, receivedAt: received,
                                                 submittedAt: submitted > 0 ? submitted : nil))
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
        return FlipRecording(flips: samples, vblank: vblank, stopped: stopped)
    }
}
