import CadenceCore

/// The recorded run's vblank timeline: each vblank's kernel timestamp (pinned by the log's flips
/// and callbacks, interpolated between them, refined by nanosecond pins) and the vblank nearest
/// or before a time.
///
/// A replay reading its log record by record holds only the pins of a window around the
/// replay's clock (``evict(below:)``): every answer near the clock depends only on the pins
/// around it (the two either side of a vblank, and the nearest nanosecond pins), so it is the
/// answer the whole timeline gives.
struct ReplayTimeline {
    let refreshInterval: Double
    /// Pins sorted by sequence.
    private(set) var seqs: [UInt64] = []
    private(set) var stamps: [Nanoseconds] = []
    /// Pins with nanosecond precision (timestamps not a whole microsecond), when the grid is used.
    private(set) var nsSeqs: [UInt64] = []
    private(set) var nsStamps: [Nanoseconds] = []
    /// Whether nanosecond pins refine the timeline (flips carry whole microseconds).
    var usesGrid = false
    /// Whether a vblank between two pins lies on the earlier pin's grid (a driver without a
    /// vblank interrupt: the run's vblanks between two flip completions were its software grid,
    /// the earlier completion plus whole nominal intervals), not on the line between the pins.
    var stepsFromEarlierPin = false

    init(refreshInterval: Double) { self.refreshInterval = refreshInterval }

    var isEmpty: Bool { seqs.isEmpty }
    var count: Int { seqs.count }
    var firstSequence: UInt64? { seqs.first }
    var lastStamp: Nanoseconds? { stamps.last }
    func pin(at s: UInt64) -> Nanoseconds? {
        let i = index(s, in: seqs)
        return i < seqs.count && seqs[i] == s ? stamps[i] : nil
    }

    private func index(_ s: UInt64, in a: [UInt64]) -> Int {
        // Pins come mostly in order: look at the end first.
        if let last = a.last, last < s { return a.count }
        var lo = 0, hi = a.count
        while lo < hi { let mid = (lo &+ hi) >> 1; if a[mid] < s { lo = mid &+ 1 } else { hi = mid } }
        return lo
    }

    /// Pins vblank `s` at `t` (replacing a pin there).
    mutating func set(_ s: UInt64, _ t: Nanoseconds) {
        let i = index(s, in: seqs)
        if i < seqs.count && seqs[i] == s {
            stamps[i] = t
        } else {
            seqs.insert(s, at: i)
            stamps.insert(t, at: i)
        }
        guard usesGrid else { return }
        let j = index(s, in: nsSeqs)
        let has = j < nsSeqs.count && nsSeqs[j] == s
        if t % 1000 != 0 {
            if has {
                nsStamps[j] = t
            } else {
                nsSeqs.insert(s, at: j)
                nsStamps.insert(t, at: j)
            }
        } else if has {
            nsSeqs.remove(at: j)
            nsStamps.remove(at: j)
        }
    }

    /// Drops the pins before vblank `s`, keeping at least `keep` of them.
    mutating func evict(below s: UInt64, keep: Int = 8) {
        let n = Swift.min(index(s, in: seqs), Swift.max(0, seqs.count - keep))
        if n > 0 {
            seqs.removeFirst(n)
            stamps.removeFirst(n)
        }
        let m = Swift.min(index(s, in: nsSeqs), Swift.max(0, nsSeqs.count - keep))
        if m > 0 {
            nsSeqs.removeFirst(m)
            nsStamps.removeFirst(m)
        }
    }

    /// Kernel timestamp of vblank `s` (recorded, else interpolated by sequence, else extrapolated).
    func time(of s: UInt64) -> Nanoseconds {
        let lo = index(s, in: seqs)
        if lo < seqs.count && seqs[lo] == s {
            // A flip event's microseconds, refined by the nanosecond grid when it truncates to it.
            if stamps[lo] % 1000 == 0, let g = gridEstimate(s), g >= stamps[lo] && g &- stamps[lo] < 1000 { return g }
            return stamps[lo]
        }
        if lo > 0 && lo < seqs.count {
            let s0 = seqs[lo - 1], s1 = seqs[lo]
            let t0 = stamps[lo - 1], t1 = stamps[lo]
            // Before `t1` always: a completion's sequence counts the nominal intervals since the
            // one before, rounded to the nearest (at least one), so s1 − 1 intervals end earlier.
            if stepsFromEarlierPin {
                return Swift.min(
                    Self.time(of: s, steppedFrom: VBlank(sequence: s0, timestamp: t0), refreshInterval), t1 &- 1)
            }
            let linear = t0 &+ clampedNanoseconds((Double(t1 &- t0) * Double(s &- s0) / Double(s1 &- s0)).rounded())
            // Flip events carry microseconds. When a nanosecond timestamp (from a vblank query)
            // of a nearby vblank, stepped by the nominal interval, agrees with them, use it: a
            // timer-driven vblank (vkms) lies on that grid to the nanosecond.
            if let g = gridEstimate(s), abs(g &- linear) <= 2_000 { return g }
            return linear
        }
        if lo == 0 {
            return stamps[0] &- clampedNanoseconds((Double(seqs[0] &- s) * refreshInterval).rounded())
        }
        return stamps[seqs.count - 1]
            &+ clampedNanoseconds((Double(s &- seqs[seqs.count - 1]) * refreshInterval).rounded())
    }

    /// Vblank `s` stepped by whole nominal intervals from the last pin before it (nil when there
    /// is none): where a grid restarted at each flip completion ticked it.
    func stepped(_ s: UInt64) -> Nanoseconds? {
        let lo = index(s, in: seqs)
        guard lo > 0 else { return nil }
        return Self.time(of: s, steppedFrom: VBlank(sequence: seqs[lo - 1], timestamp: stamps[lo - 1]), refreshInterval)
    }

    /// Vblank `s` stepped from `d` by whole `interval`s (`d`'s own time at or before it): a
    /// software grid's vblanks, restarted at a flip completion.
    static func time(of s: UInt64, steppedFrom d: VBlank, _ interval: Double) -> Nanoseconds {
        guard s > d.sequence else { return d.timestamp }
        return d.timestamp &+ clampedNanoseconds((Double(s &- d.sequence) * interval).rounded())
    }

    /// Vblank `s` from the nearest nanosecond-precision pin, stepped by the nominal interval
    /// (nil when there is none; the caller checks it against the flip timestamps around `s`).
    private func gridEstimate(_ s: UInt64) -> Nanoseconds? {
        guard !nsSeqs.isEmpty else { return nil }
        let lo = index(s, in: nsSeqs)
        var best = -1
        var bestDistance: UInt64 = 0
        for i in [lo - 1, lo] where i >= 0 && i < nsSeqs.count {
            let d = nsSeqs[i] > s ? nsSeqs[i] - s : s - nsSeqs[i]
            if best < 0 || d < bestDistance {
                best = i
                bestDistance = d
            }
        }
        guard best >= 0 else { return nil }
        let d = Int64(bitPattern: s &- nsSeqs[best])
        return nsStamps[best] &+ clampedNanoseconds((Double(d) * refreshInterval).rounded())
    }

    /// The vblank sequence whose time is nearest to `t`.
    func sequence(near t: Nanoseconds) -> UInt64 {
        let k = Double(t &- stamps[0]) / refreshInterval
        let guess = Int64(bitPattern: seqs[0]) &+ clampedNanoseconds(k.rounded())
        let half = clampedNanoseconds(refreshInterval / 2)
        // Correct against the (possibly uneven) timeline.
        let s = step(down: UInt64(Swift.max(0, guess))) { $0 > 0 && self.time(of: $0) > t &+ half }
        return step(up: s) { self.time(of: $0 &+ 1) <= t &- half }
    }

    /// The last vblank at or before `t`.
    func vblank(atOrBefore t: Nanoseconds) -> VBlank {
        let s = step(up: step(down: sequence(near: t)) { self.time(of: $0) > t && $0 > 0 }) {
            self.time(of: $0 &+ 1) <= t
        }
        return VBlank(sequence: s, timestamp: time(of: s))
    }

    /// `while p(s) { s -= 1 }`: one step at a time for the usual few steps, then (a log whose
    /// sequences jump far) by bisection, which gives the same answer on the monotonic timeline
    /// and a bounded number of steps on any other.
    private func step(down start: UInt64, while p: (UInt64) -> Bool) -> UInt64 {
        var s = start
        for _ in 0..<64 {
            guard p(s) else { return s }
            s &-= 1
        }
        guard p(s) else { return s }
        var hi = s, d: UInt64 = 1  // p(hi)
        while true {
            let lo = hi >= d ? hi - d : 0
            if !p(lo) || lo == 0 { return bisect(lo, hi, p, trueAbove: true) }
            hi = lo
            d = d > UInt64.max / 2 ? UInt64.max : d * 2
        }
    }

    /// `while p(s) { s += 1 }`, as ``step(down:while:)``.
    private func step(up start: UInt64, while p: (UInt64) -> Bool) -> UInt64 {
        var s = start
        for _ in 0..<64 {
            guard p(s) else { return s }
            s &+= 1
        }
        guard p(s) else { return s }
        var lo = s, d: UInt64 = 1  // p(lo)
        while true {
            let hi = UInt64.max - lo >= d ? lo + d : UInt64.max
            if !p(hi) || hi == UInt64.max { return bisect(lo, hi, p, trueAbove: false) }
            lo = hi
            d = d > UInt64.max / 2 ? UInt64.max : d * 2
        }
    }

    /// Between `lo` and `hi` (p true at `hi` when `trueAbove`, at `lo` otherwise): the largest
    /// s with !p(s) (trueAbove) or the smallest (otherwise).
    private func bisect(_ lo: UInt64, _ hi: UInt64, _ p: (UInt64) -> Bool, trueAbove: Bool) -> UInt64 {
        var lo = lo, hi = hi
        if trueAbove {
            if p(lo) { return lo }  // reached 0
            while hi - lo > 1 { let mid = lo + (hi - lo) / 2; if p(mid) { hi = mid } else { lo = mid } }
            return lo
        }
        if p(hi) { return hi }  // reached UInt64.max
        while hi - lo > 1 { let mid = lo + (hi - lo) / 2; if p(mid) { lo = mid } else { hi = mid } }
        return hi
    }
}
