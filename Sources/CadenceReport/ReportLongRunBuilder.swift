import CadenceCore
import Foundation

/// Builds a ``LongRun`` from frame records added one at a time in log order.
struct LongRunBuilder {
    let maxBins: Int
    var origin: Int? = nil
    var width = 1
    var bins: [LongRun.Bin] = []
    var causeCounts: [Int] = []
    /// The worst events so far, worst first; `after` counts the points they still take.
    var worst: [(event: LongRun.Event, id: UInt64, after: Int)] = []
    /// The last ``LongRun/neighbourhood`` shown frames (log order), a ring.
    var ring: [ReportChart.Point] = []
    var ringNext = 0
    /// The kept events still taking points after them.
    var pending = 0
    /// The histogram (as ``ReportChart/histogram``) of frames that give their interval in refreshes.
    var histogram = [Int](repeating: 0, count: 2)
    /// Intervals of frames that do not (`intervalRefreshes` 0), by 0.1 ms: placed at the end.
    var unplaced: [Int64: Int] = [:]
    var maxIntervalNs: Int64 = 0

    /// `maxBins` is rounded up to an even number (at least 2).
    init(maxBins: Int) { self.maxBins = Swift.max(2, maxBins + (maxBins & 1)) }

    /// Halves the bins: bin i becomes bins 2i and 2i+1, the width doubles.
    mutating func mergePairs() {
        let n = (bins.count + 1) / 2
        let k = LongRun.causes
        for i in 0..<n {
            var b = bins[2 * i]
            if 2 * i + 1 < bins.count { b.merge(bins[2 * i + 1]) }
            bins[i] = b
            for c in 0..<k {
                causeCounts[i * k + c] =
                    causeCounts[2 * i * k + c] &+ (2 * i + 1 < bins.count ? causeCounts[(2 * i + 1) * k + c] : 0)
            }
        }
        bins.removeLast(bins.count - n)
        causeCounts.removeLast(causeCounts.count - n * k)
        width &*= 2
    }

    /// The bin of frame `frame`, making room for it.
    mutating func bin(of frame: Int) -> Int {
        guard let o = origin else {
            origin = frame
            bins.append(LongRun.Bin())
            causeCounts += [Int](repeating: 0, count: LongRun.causes)
            return 0
        }
        if frame < o {
            // Frames before the first: bins in front (fewer, wider ones first when needed).
            while Double(bins.count) + ((Double(o) - Double(frame)) / Double(width)).rounded(.up) > Double(maxBins) {
                mergePairs()
            }
            let k = (o - frame + width - 1) / width
            bins.insert(contentsOf: [LongRun.Bin](repeating: LongRun.Bin(), count: k), at: 0)
            causeCounts.insert(contentsOf: [Int](repeating: 0, count: k * LongRun.causes), at: 0)
            origin = o - k * width
            return (frame - origin!) / width
        }
        while (Double(frame) - Double(o)) / Double(width) >= Double(maxBins) { mergePairs() }
        let i = (frame - o) / width
        if i >= bins.count {
            let add = i + 1 - bins.count
            bins.append(contentsOf: [LongRun.Bin](repeating: LongRun.Bin(), count: add))
            causeCounts.append(contentsOf: [Int](repeating: 0, count: add * LongRun.causes))
        }
        return i
    }

    mutating func add(_ r: FrameRecord) {
        let i = bin(of: r.frame)
        let shown = r.outcome == .onTime || r.outcome == .late
        bins[i].frames &+= 1
        if shown {
            bins[i].shown &+= 1
            if r.droppedRefreshes > 0 {
                bins[i].droppedRefreshes &+= r.droppedRefreshes
                bins[i].dropEvents &+= 1
            }
            if r.flipNs > 0 {
                bins[i].minTimeNs = Swift.min(bins[i].minTimeNs, r.flipNs)
                bins[i].maxTimeNs = Swift.max(bins[i].maxTimeNs, r.flipNs)
            }
            if r.intervalNs > 0 {
                bins[i].intervals &+= 1
                bins[i].minIntervalNs = Swift.min(bins[i].minIntervalNs, r.intervalNs)
                bins[i].maxIntervalNs = Swift.max(bins[i].maxIntervalNs, r.intervalNs)
                bins[i].sumIntervalNs &+= r.intervalNs
                maxIntervalNs = Swift.max(maxIntervalNs, r.intervalNs)
                if r.intervalRefreshes > 0 {
                    let k = Swift.min(ReportChart.maxHistogramRefreshes, r.intervalRefreshes)
                    if k >= histogram.count { histogram += [Int](repeating: 0, count: k - histogram.count + 1) }
                    histogram[k] &+= 1
                } else {
                    unplaced[Swift.min(r.intervalNs / 100_000, 1_000_000), default: 0] &+= 1
                }
                let p = ReportChart.Point(frame: r.frame, intervalMs: Double(r.intervalNs) / 1e6)
                if pending > 0 {
                    for j in worst.indices where worst[j].after > 0 {
                        worst[j].event.points.append(p)
                        worst[j].after -= 1
                        if worst[j].after == 0 { pending -= 1 }
                    }
                }
                if ring.count < LongRun.neighbourhood + 1 {
                    ring.append(p)
                } else {
                    ring[ringNext] = p
                    ringNext = (ringNext + 1) % ring.count
                }
            }
        }
        if let c = r.cause {
            causeCounts[i * LongRun.causes + c.index] &+= 1
            consider(r, cause: c)
        }
    }

    /// Whether event a is worse than event b.
    static func worse(_ a: ReportChart.Drop, _ aID: UInt64, than b: ReportChart.Drop, _ bID: UInt64) -> Bool {
        if a.droppedRefreshes != b.droppedRefreshes { return a.droppedRefreshes > b.droppedRefreshes }
        if a.lateRefreshes != b.lateRefreshes { return a.lateRefreshes > b.lateRefreshes }
        return (a.frame, aID) < (b.frame, bID)
    }

    mutating func consider(_ r: FrameRecord, cause c: DropCause) {
        let d = ReportChart.Drop(
            frame: r.frame, cause: c, outcome: r.outcome, droppedRefreshes: r.droppedRefreshes,
            lateRefreshes: r.lateRefreshes)
        if worst.count == LongRun.candidateCount, let last = worst.last,
            !Self.worse(d, r.id, than: last.event.drop, last.id)
        {
            return
        }
        // The ring in log order: the frames before (and the frame itself when shown).
        var before: [ReportChart.Point] = []
        before.reserveCapacity(2 * LongRun.neighbourhood + 1)
        for j in 0..<ring.count { before.append(ring[(ringNext + j) % ring.count]) }
        if before.count > LongRun.neighbourhood + 1 { before.removeFirst(before.count - LongRun.neighbourhood - 1) }
        // The frame itself is the ring's last point only when it was shown with an interval.
        let shownHere =
            before.last?.frame == r.frame && (r.outcome == .onTime || r.outcome == .late) && r.intervalNs > 0
        if !shownHere && before.count > LongRun.neighbourhood { before.removeFirst() }
        let e = (event: LongRun.Event(drop: d, points: before), id: r.id, after: LongRun.neighbourhood)
        let at = worst.firstIndex { Self.worse(d, r.id, than: $0.event.drop, $0.id) } ?? worst.count
        worst.insert(e, at: at)
        pending += 1
        if worst.count > LongRun.candidateCount, let gone = worst.popLast(), gone.after > 0 { pending -= 1 }
    }

    /// The ``LongRun/worstCount`` events of `candidates` (worst first) chosen to be apart.
    static func apart(_ candidates: [LongRun.Event]) -> [LongRun.Event] {
        var chosen: [Int] = []
        for (i, e) in candidates.enumerated() where chosen.count < LongRun.worstCount {
            let far = chosen.allSatisfy { abs(candidates[$0].drop.frame - e.drop.frame) > LongRun.neighbourhood }
            if far { chosen.append(i) }
        }
        for i in candidates.indices where chosen.count < LongRun.worstCount && !chosen.contains(i) { chosen.append(i) }
        return chosen.sorted().map { candidates[$0] }
    }

    /// The histogram with the frames that gave no interval in refreshes placed by `refreshMs`.
    func fullHistogram(refreshMs: Double) -> [Int] {
        var h = histogram
        for (key, n) in unplaced {
            let ms = (Double(key) + 0.5) / 10
            let k = Swift.min(
                ReportChart.maxHistogramRefreshes,
                Swift.max(1, Int(Swift.min(Double(ReportChart.maxHistogramRefreshes), (ms / refreshMs).rounded()))))
            if k >= h.count { h += [Int](repeating: 0, count: k - h.count + 1) }
            h[k] &+= n
        }
        return h
    }

    /// The long run with the context records placed in the bins.
    func longRun(context: [ContextRecord]) -> LongRun {
        var events = Self.apart(worst.map(\.event))
        for i in events.indices { events[i].points.sort { $0.frame < $1.frame } }
        let partial = LongRun(
            maxBins: maxBins, origin: origin ?? 0, binWidth: width, bins: bins, causeCounts: causeCounts, worst: events,
            context: [])
        var byBin: [Int: (lo: Double, hi: Double, fSum: Double, fN: Int, t: Bool)] = [:]
        for c in context {
            let t = c.cpuTemperatureC.flatMap { $0.isFinite ? $0 : nil }
            let f = c.meanFrequencyMHz.flatMap { $0.isFinite ? $0 : nil }
            guard t != nil || f != nil, let pos = partial.framePosition(timeNs: c.timeNs) else { continue }
            let i = Swift.min(
                bins.count - 1, Swift.max(0, Int(((pos - Double(origin ?? 0)) / Double(width)).rounded(.down))))
            var e = byBin[i] ?? (lo: .infinity, hi: -.infinity, fSum: 0, fN: 0, t: false)
            if let t {
                e.lo = Swift.min(e.lo, t)
                e.hi = Swift.max(e.hi, t)
                e.t = true
            }
            if let f {
                e.fSum += f
                e.fN += 1
            }
            byBin[i] = e
        }
        let ctx = byBin.keys.sorted().map { i in
            let e = byBin[i]!
            return LongRun.ContextBin(
                bin: i, minCelsius: e.t ? e.lo : nil, maxCelsius: e.t ? e.hi : nil,
                meanFrequencyMHz: e.fN > 0 ? e.fSum / Double(e.fN) : nil)
        }
        return LongRun(
            maxBins: maxBins, origin: origin ?? 0, binWidth: width, bins: bins, causeCounts: causeCounts, worst: events,
            context: ctx)
    }
}
