import CadenceCore
import DRM

/// A display whose device was opened through a seat session (`DeviceSource.seat`): the seat's
/// disable (VT switched away) and enable (back) become ``BackendEvent/sessionPaused(at:)`` and
/// ``BackendEvent/sessionResumed(at:vblank:)``.
///
/// On a disable the flip in flight is given up to 100 ms to complete (its event is reported as
/// usual), the frames not shown release their buffers, and the disable is acknowledged
/// (libseat_disable_seat: the seat provider then drops our DRM master). While paused nothing is
/// flipped or queued; ``waitForEvents(until:into:)`` waits on the seat's descriptor. On an
/// enable the mode is set again with a full modeset of the buffer that was on screen, the vblank
/// counter is read afresh, and pacing goes on from there.
extension KMSDisplay {
    /// How often the seat is read while frames are flipping (its fd is not in the DRM poll).
    static let seatPollNs: Nanoseconds = 10_000_000

    /// Reads the seat's messages without waiting and acts on them; true when an event was added.
    func serviceSeat(_ seat: SeatSession, into events: inout [BackendEvent]) -> Bool {
        _ = try? seat.dispatch(timeoutMilliseconds: 0)
        let before = events.count
        for e in seat.takeEvents() {
            switch e {
            case .disabled where !sessionPaused: pause(seat, into: &events)
            case .enabled where sessionPaused: resume(into: &events)
            default: break
            }
        }
        return events.count > before
    }

    /// Waits on the seat's descriptor until `deadline` (at most 250 ms, so that a stop signal is
    /// seen), then acts on what came.
    func waitForSeat(_ seat: SeatSession, until deadline: Nanoseconds, into events: inout [BackendEvent]) {
        let left = deadline &- now()
        if left > 0 {
            let ms = Int32(Swift.min(250, Swift.max(1, left / 1_000_000)))
            _ = try? seat.dispatch(timeoutMilliseconds: ms)
        }
        _ = serviceSeat(seat, into: &events)
    }

    private func pause(_ seat: SeatSession, into events: inout [BackendEvent]) {
        let limit = now() &+ 100_000_000
        while inFlight != nil && output.flipPending && now() < limit {
            drmEvents.removeAll(keepingCapacity: true)
            _ = try? output.readEvents(until: limit, into: &drmEvents)
            translate(received: now(), into: &events)
        }
        if let f = inFlight { swapchain.markFree(f.buffer) }
        inFlight = nil
        for f in finished { swapchain.markFree(f.buffer) }
        finished.removeAll(keepingCapacity: true)
        requested.removeAll(keepingCapacity: true)
        softwareRequests.removeAll(keepingCapacity: true)
        output.sessionLost()
        sessionPaused = true
        // A failed acknowledgement means the seat is already gone; the provider revokes anyway.
        try? seat.acknowledgeDisable()
        events.append(.sessionPaused(at: now()))
    }

    private func resume(into events: inout [BackendEvent]) {
        sessionPaused = false
        let shown = swapchain.onScreen ?? 0
        do {
            try device.acquireMaster()
            try output.modeset(framebuffer: swapchain.buffers[shown].framebuffer)
        } catch let e as DRMError {
            let why = "could not restore the mode after the session resumed: \(e)"
            lost = why
            events.append(.failed(frame: nil, .deviceLost(why)))
            return
        } catch {
            lost = "\(error)"
            events.append(.failed(frame: nil, .deviceLost("\(error)")))
            return
        }
        swapchain.markOnScreen(shown)
        if hasHardwareVBlank, let v = try? output.currentVBlank() {
            widener = SequenceWidener(anchor: v.sequence)
            let seq = v.sequence > 0xffff_ffff ? v.sequence : widener.widen(UInt32(truncatingIfNeeded: v.sequence))
            last = VBlank(sequence: Swift.max(seq, last.sequence), timestamp: v.timestampNs)
        } else {
            last = VBlank(sequence: last.sequence &+ 1, timestamp: now())
        }
        events.append(.sessionResumed(at: now(), vblank: last))
    }
}
