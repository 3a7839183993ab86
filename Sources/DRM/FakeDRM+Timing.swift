#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// ``FakeDRMDevice``'s timing behaviour beyond the ideal grid: seeded timestamp jitter and the
/// wall clock (``FakeDRMDevice/usesWallClock``), where waits sleep for real instead of jumping
/// the virtual clock.
extension FakeDRMDevice {
    /// The timestamp offset of `crtc`'s vblank `sequence`, in ±``vblankJitterNs``: a hash of
    /// the seed, the CRTC and the sequence, so that every reading of one vblank agrees.
    func jitter(_ crtc: CRTCID, _ sequence: UInt64) -> Int64 {
        guard vblankJitterNs > 0 else { return 0 }
        var z = jitterSeed &+ UInt64(crtc.rawValue) &* 0x9E37_79B9_7F4A_7C15 &+ sequence &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let span = UInt64(2 * vblankJitterNs + 1)
        return Int64(z % span) - vblankJitterNs
    }

    /// On the wall clock: the virtual clock follows CLOCK_MONOTONIC.
    func syncWallClock() {
        guard usesWallClock else { return }
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        clock = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC); false when a signal ended the sleep early.
    @discardableResult
    func wallSleep(until deadline: Int64) -> Bool {
        syncWallClock()
        guard deadline > clock else { return true }
        let slept = LiveDRM.sleepMonotonic(until: deadline)
        syncWallClock()
        return slept
    }

    /// poll(2) on the wall clock: sleeps until the first pending event is readable or the
    /// deadline; true when an event is readable. A signal ends the sleep with EINTR, as poll's does.
    func wallPoll(until deadline: Int64) throws -> Bool {
        let first = pending.map(\.readyAt).min() ?? Int64.max
        if !wallSleep(until: min(deadline, first)) && first > clock { throw Errno.interrupted }
        return first <= clock
    }
}
