/// ``FakeDRMDevice``'s variable refresh: a CRTC with `VRR_ENABLED` = 1 driving a connector with
/// `vrr_capable` = 1 and a ``FakeDRMDevice/FakeConnector/vrrRangeHz`` refreshes when a flip
/// arrives instead of on a fixed grid, as an adaptive-sync panel does:
///
/// - a flip committed at *t*, at least the minimum interval (1/max Hz) after the last refresh,
///   starts a refresh at *t* + ``FakeDRMDevice/vrrResponseNs``; one committed sooner waits for
///   the minimum interval;
/// - when no flip comes within the maximum interval (1/min Hz) the panel refreshes on its own,
///   showing the same frame again (a vblank without a flip), and keeps doing so every maximum
///   interval.
///
/// The maximum rate is the range's maximum limited by the mode's refresh. Between flips the
/// CRTC's vblank grid is the self-refresh grid (period = maximum interval) from the last
/// refresh; a flip's refresh, once reached, restarts that grid (`settleVRR(_:at:)`).
extension FakeDRMDevice {
    /// The minimum and maximum refresh intervals of a CRTC running variable refresh, nil when it
    /// does not (VRR_ENABLED 0, no mode, or no vrr_capable connector with a range).
    func vrrIntervals(_ rt: CRTCRuntime) -> (minNs: Int64, maxNs: Int64)? {
        guard rt.vrrEnabled, let mode = rt.mode else { return nil }
        guard let c = connectors.first(where: { rt.connectors.contains($0.id) && ($0.properties["vrr_capable"] ?? 0) != 0 }),
              let range = c.vrrRangeHz, range.lowerBound > 0 else { return nil }
        let top = Swift.min(range.upperBound, refreshOverrideHz ?? mode.refreshHz)
        guard top > range.lowerBound else { return nil }
        // The longest rounded up, as the fake display's: it holds a frame up to then, and a flip
        // committed at two of them (24 Hz on 48 Hz) wins over the panel's own refresh, rather
        // than losing to it by the rounding's 1 ns (found by KMSVRRPropertyTests).
        return (Int64((1e9 / top).rounded()), Int64((1e9 / range.lowerBound).rounded(.up)))
    }

    /// Whether `crtc` runs variable refresh now (`VRR_ENABLED` = 1 on a VRR-capable panel).
    public func isRunningVRR(_ crtc: CRTCID) -> Bool {
        ensureState()
        return crtcState[crtc].map { vrrIntervals($0) != nil } ?? false
    }

    /// `VRR_ENABLED` as last committed on `crtc` (what a driver's property reads back).
    public func vrrEnabledProperty(_ crtc: CRTCID) -> Bool {
        ensureState()
        return crtcState[crtc]?.vrrEnabled ?? false
    }

    /// Sets `VRR_ENABLED` on `crtc`; the vblank grid is re-anchored at the latest refresh so
    /// that sequences keep counting across the change.
    func setVRR(_ crtc: CRTCID, _ on: Bool) {
        guard let before = crtcState[crtc], before.vrrEnabled != on else { return }
        let v = vblank(crtc, at: clock)
        crtcState[crtc]?.baseSeq = v.seq
        crtcState[crtc]?.baseTime = v.time
        crtcState[crtc]?.vrrNext = nil
        crtcState[crtc]?.vrrEnabled = on
    }

    /// A flip-started refresh that has happened by `t` becomes the anchor of the self-refresh grid.
    func settleVRR(_ crtc: CRTCID, at t: Int64) {
        guard let n = crtcState[crtc]?.vrrNext, n.time <= t else { return }
        crtcState[crtc]?.baseTime = n.time
        crtcState[crtc]?.baseSeq = n.seq
        crtcState[crtc]?.vrrNext = nil
    }

    /// Under VRR: the refresh a flip committed now starts (its time and sequence), recorded as
    /// the CRTC's next refresh. Nil when `crtc` is not running variable refresh.
    func scheduleVRRRefresh(_ crtc: CRTCID) -> (time: Int64, seq: UInt64)? {
        guard let rt = crtcState[crtc], let r = vrrIntervals(rt) else { return nil }
        var last = vblank(crtc, at: clock)
        let arrival = clock + vrrResponseNs
        while true {
            let start = Swift.max(arrival, last.time + r.minNs)
            if start <= last.time + r.maxNs {
                crtcState[crtc]?.vrrNext = (start, last.seq + 1)
                return (start, last.seq + 1)
            }
            // The panel refreshes on its own before the flip can start one.
            last = (last.seq + 1, last.time + r.maxNs)
        }
    }
}
