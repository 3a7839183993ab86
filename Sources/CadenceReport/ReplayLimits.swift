import CadenceCore

/// What a log must hold to be replayed: numbers a real run produces. A hand-edited, corrupted
/// or hostile log outside them is refused with one line (``ReplayDisplay/Unreplayable``)
/// instead of driving the pacing core into arithmetic it was never meant for (found by
/// fuzzing `cadence replay`, tools/fuzz/Targets/replay).
enum ReplayLimits {
    /// Latest time a log may name: 2^62 ns (146 years of CLOCK_MONOTONIC).
    static let maxTime: Int64 = 1 << 62
    /// Largest vblank sequence: 2^53 (exact in a Double; 47,000 years at 60 Hz).
    static let maxSequence: UInt64 = 1 << 53
    /// Longest recording replayed, in refreshes between its first and last flip.
    static let maxRefreshes = 1e8
    /// How far from the flips any other time of a record may be: 60 s.
    static let nearFlips: Int64 = 60_000_000_000

    static func refuse(_ why: String) -> ReplayDisplay.Unreplayable { .init(description: "cannot replay: \(why)") }

    /// The checks of the header alone (the first of ``check(_:)``'s).
    static func check(header h: RunLogHeader) throws {
        guard h.refreshIntervalNs.isFinite, (100_000...10_000_000_000).contains(h.refreshIntervalNs) else {
            throw refuse("the header's refresh interval \(h.refreshIntervalNs) ns is not 0.1 ms to 10 s")
        }
        if let v = h.vrrRangeHz {
            guard v.count == 2, v[0].isFinite, v[1].isFinite, v[0] >= 0.1, v[0] <= v[1], v[1] <= 10_000 else {
                throw refuse("the header's VRR range \(v) is not MIN, MAX within 0.1 to 10000 Hz")
            }
        }
        guard (0...16).contains(h.queueCapacity) else { throw refuse("queueCapacity \(h.queueCapacity) is not 0 to 16") }
        guard (0...1_000_000_000).contains(h.commitMarginNs) else {
            throw refuse("commitMarginNs \(h.commitMarginNs) is not 0 to 1 s")
        }
        do { try h.configuration.validate() } catch { throw refuse("the header's configuration: \(error)") }
    }

    static func check(_ log: RunLog) throws {
        guard let h = log.header else { return }
        try check(header: h)
        let n = log.records.count
        var flips: [UInt64: Int64] = [:]
        for r in log.records {
            let times = [r.callbackNs, r.wakeNs, r.deadlineNs, r.renderStartNs, r.renderEndNs, r.commitNs, r.flipNs, r.receivedNs,
                         r.intent.targetTimeNs, r.intent.requestedTimeNs ?? 0, r.intent.minDurationNs ?? 0, r.schedulerDelayNs ?? 0]
            guard times.allSatisfy({ (0...maxTime).contains($0) }) else { throw refuse("frame \(r.frame): a time outside 0…2^62 ns") }
            guard r.sequence <= maxSequence, r.intent.targetSequence <= maxSequence else {
                throw refuse("frame \(r.frame): a vblank sequence above 2^53")
            }
            guard (0...(n + 64)).contains(r.frame) else { throw refuse("frame number \(r.frame) in a log of \(n) frames") }
            guard (0...10_000).contains(r.busyRetries) else { throw refuse("frame \(r.frame): \(r.busyRetries) busy retries") }
            if r.flipNs > 0 && (r.outcome == .onTime || r.outcome == .late) { flips[r.sequence] = r.flipNs }
        }
        // Replay works through the recording refresh by refresh: its cost is the span of the
        // flips in refreshes, and every other time must lie near them (within a minute).
        if let first = flips.values.min(), let last = flips.values.max() {
            let span = Double(last - first) / h.refreshIntervalNs
            guard span <= maxRefreshes else {
                throw refuse("the flips span \(Int(span)) refreshes; replay handles up to 10^8 (8 days at 144 Hz)")
            }
            let window = (first - nearFlips)...(last + nearFlips)
            for r in log.records {
                let times = [r.callbackNs, r.wakeNs, r.deadlineNs, r.renderStartNs, r.renderEndNs, r.commitNs, r.receivedNs, r.intent.targetTimeNs]
                    + ((r.lateVBlankEvents ?? []) + (r.vblanks ?? [])).map { $0.count == 2 ? $0[1] : 0 }
                if let t = times.first(where: { $0 != 0 && !window.contains($0) }) {
                    throw refuse("frame \(r.frame): time \(t) ns is more than a minute from every flip")
                }
            }
        }
        // A kernel's flips: a later vblank has a later timestamp (the replay's timeline, which
        // keeps the last flip logged at each vblank as ReplayDisplay does, must be monotonic).
        let sequences = flips.keys.sorted()
        for (a, b) in zip(sequences, sequences.dropFirst()) where flips[b]! <= flips[a]! {
            throw refuse("flip timestamps go backwards at vblank \(b)")
        }
    }
}
