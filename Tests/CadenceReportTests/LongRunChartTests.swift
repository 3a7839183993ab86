import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// The long-run picture (issue 24, item 5): per-bin aggregates built while reading, in memory
/// that does not grow with the log.
@Suite struct LongRunChartTests {
    /// A seeded generator (CadenceCore's SplitMix64), so that a failure repeats.
    struct Rng {
        var g: SplitMix64
        init(state: UInt64) { g = SplitMix64(seed: state) }
        mutating func below(_ n: Int) -> Int { Int(g.next() % UInt64(n)) }
    }

    /// One frame record of a real run, to vary.
    static let template: FrameRecord = {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try! recordRun(config(frames: 3), in: dir).path
        return try! RunLog.read(path: path).records[1]
    }()

    /// `n` records with random drops (bursts and single ones, every cause, discarded frames),
    /// frame numbers from `start`, locally out of order (swapped neighbours) and one far before
    /// the start when `early`.
    static func records(_ n: Int, seed: UInt64, start: Int = 100, early: Bool = false) -> [FrameRecord] {
        var rng = Rng(state: seed)
        var out: [FrameRecord] = []
        var t: Int64 = 1_000_000_000
        var burst = 0
        for i in 0..<n {
            var r = template
            r.frame = start + i
            r.id = UInt64(i)
            if burst == 0 && rng.below(500) == 0 { burst = 1 + rng.below(40) }
            let dropped = burst > 0 ? 1 + rng.below(4) : (rng.below(2000) == 0 ? 1 + rng.below(30) : 0)
            if burst > 0 { burst -= 1 }
            r.droppedRefreshes = dropped
            r.lateRefreshes = dropped > 0 ? rng.below(3) : 0
            r.outcome = dropped > 0 ? .late : (rng.below(1000) == 0 ? .discarded : .onTime)
            r.cause =
                dropped > 0 || r.outcome == .discarded ? DropCause.allCases[rng.below(DropCause.allCases.count)] : nil
            r.intervalRefreshes = r.outcome == .discarded ? 0 : 1 + dropped
            r.intervalNs =
                r.outcome == .discarded
                ? 0 : Int64(r.intervalRefreshes) * 16_666_667 + Int64(rng.below(100_000)) - 50_000
            t += Int64(r.intervalRefreshes) * 16_666_667
            r.flipNs = r.outcome == .discarded ? 0 : t
            out.append(r)
        }
        for i in stride(from: 1, to: n - 1, by: 7) where rng.below(3) == 0 { out.swapAt(i, i + 1) }
        if early && n > 10 { out[n / 2].frame = start - 1000 - rng.below(5000) }
        return out
    }

    /// The bins as a slow per-frame computation over `records` gives them, for the builder's
    /// final origin and width.
    static func slowBins(_ records: [FrameRecord], origin: Int, width: Int, count: Int) -> ([LongRun.Bin], [Int]) {
        var bins = [LongRun.Bin](repeating: LongRun.Bin(), count: count)
        var causes = [Int](repeating: 0, count: count * LongRun.causes)
        for i in 0..<count {
            let lo = origin + i * width, hi = lo + width
            for r in records where r.frame >= lo && r.frame < hi {
                bins[i].frames += 1
                if let c = r.cause { causes[i * LongRun.causes + c.index] += 1 }
                guard r.outcome == .onTime || r.outcome == .late else { continue }
                bins[i].shown += 1
                if r.droppedRefreshes > 0 {
                    bins[i].droppedRefreshes += r.droppedRefreshes
                    bins[i].dropEvents += 1
                }
                if r.flipNs > 0 {
                    bins[i].minTimeNs = min(bins[i].minTimeNs, r.flipNs)
                    bins[i].maxTimeNs = max(bins[i].maxTimeNs, r.flipNs)
                }
                if r.intervalNs > 0 {
                    bins[i].intervals += 1
                    bins[i].minIntervalNs = min(bins[i].minIntervalNs, r.intervalNs)
                    bins[i].maxIntervalNs = max(bins[i].maxIntervalNs, r.intervalNs)
                    bins[i].sumIntervalNs += r.intervalNs
                }
            }
        }
        return (bins, causes)
    }

    @Test(arguments: [(1, 16), (37, 16), (1000, 16), (5000, 64), (20000, 10), (20001, 2)])
    func binsEqualASlowPerFrameComputation(n: Int, maxBins: Int) {
        for seed in 1...3 as ClosedRange<UInt64> {
            let records = Self.records(n, seed: seed &* 7919 &+ UInt64(n), early: seed == 2)
            var b = LongRunBuilder(maxBins: maxBins)
            for r in records {
                b.add(r)
                // Bounded by construction: never more bins than the limit.
                #expect(b.bins.count <= b.maxBins && b.causeCounts.count == b.bins.count * LongRun.causes)
            }
            let (slow, slowCauses) = Self.slowBins(records, origin: b.origin!, width: b.width, count: b.bins.count)
            #expect(b.bins == slow, "n \(n) seed \(seed): bins differ")
            #expect(b.causeCounts == slowCauses, "n \(n) seed \(seed): cause counts differ")
            // Nothing lost: every record is in a bin, and the sums are the totals.
            let shown = records.filter { $0.outcome == .onTime || $0.outcome == .late }
            #expect(b.bins.map(\.frames).reduce(0, +) == records.count)
            #expect(b.bins.map(\.shown).reduce(0, +) == shown.count)
            #expect(b.bins.map(\.droppedRefreshes).reduce(0, +) == shown.map(\.droppedRefreshes).reduce(0, +))
            #expect(b.bins.map(\.dropEvents).reduce(0, +) == shown.filter { $0.droppedRefreshes > 0 }.count)
            #expect(b.causeCounts.reduce(0, +) == records.filter { $0.cause != nil }.count)
            let binSum: Int64 = b.bins.map(\.sumIntervalNs).reduce(0, +)
            let intervals: [Int64] = shown.map(\.intervalNs).filter { $0 > 0 }
            let frameSum: Int64 = intervals.reduce(0, +)
            #expect(binSum == frameSum)
        }
    }

    @Test func theBinsOfALogAreThoseOfItsSummary() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let limit = ReportChart.perFrameLimit(width: 1200)
        let (path, summary) = try recordRun(config(frames: limit + 1, injectLate: [500: 2, 5000: 5, 9000: 3]), in: dir)
        let (chart, _) = try ReportChart.read(path: path)
        let lr = try #require(chart.longRun)
        #expect(
            lr.bins.map(\.droppedRefreshes).reduce(0, +) == summary.droppedRefreshes && summary.droppedRefreshes == 10)
        #expect(lr.bins.map(\.dropEvents).reduce(0, +) == summary.dropEvents)
        #expect(
            lr.bins.map(\.frames).reduce(0, +) == summary.frames
                && lr.bins.map(\.shown).reduce(0, +) == summary.presented)
        #expect(lr.bins.count <= lr.maxBins)
        #expect(lr.worst.map(\.drop.frame) == [5000, 9000, 500] && chart.markedFrames == 3)
        // The SVG's bins carry the same dropped refreshes.
        let svg = SVGReport.svg(chart)
        let counts = svg.matches(of: /class="bin" data-frame="\d+" data-frames="\d+" data-dropped-refreshes="(\d+)"/)
            .map { Int($0.1)! }
        #expect(counts.reduce(0, +) == 10 && svg.contains("class=\"worst\" data-frame=\"5000\""))
        #expect(chart.histogramLogScale && svg.contains("(count: log scale)"))
    }

    @Test func theWorstEventsAreTheWorstN() {
        for seed in 1...5 as ClosedRange<UInt64> {
            let records = Self.records(30000, seed: seed)
            var b = LongRunBuilder(maxBins: 100)
            for r in records { b.add(r) }
            let worse = { (a: FrameRecord, c: FrameRecord) in
                LongRunBuilder.worse(
                    ReportChart.Drop(
                        frame: a.frame, cause: a.cause!, outcome: a.outcome, droppedRefreshes: a.droppedRefreshes,
                        lateRefreshes: a.lateRefreshes), a.id,
                    than: ReportChart.Drop(
                        frame: c.frame, cause: c.cause!, outcome: c.outcome, droppedRefreshes: c.droppedRefreshes,
                        lateRefreshes: c.lateRefreshes), c.id)
            }
            // The candidates: the worst of all; then greedily those more than 60 frames apart.
            let candidates = Array(records.filter { $0.cause != nil }.sorted(by: worse).prefix(LongRun.candidateCount))
            var slow: [FrameRecord] = []
            for r in candidates where slow.count < LongRun.worstCount {
                if slow.allSatisfy({ abs($0.frame - r.frame) > LongRun.neighbourhood }) { slow.append(r) }
            }
            for r in candidates where slow.count < LongRun.worstCount && !slow.contains(where: { $0.id == r.id }) {
                slow.append(r)
            }
            slow.sort(by: worse)
            let lr = b.longRun(context: [])
            #expect(lr.worst.map(\.drop.frame) == slow.map(\.frame), "seed \(seed)")
            #expect(lr.worst.map(\.drop.droppedRefreshes) == slow.map(\.droppedRefreshes))
            // Each with its neighbourhood: the 60 shown frames before it in log order (and itself
            // when shown), the 60 after.
            let shownIdx = records.indices.filter {
                (records[$0].outcome == .onTime || records[$0].outcome == .late) && records[$0].intervalNs > 0
            }
            for (e, r) in zip(lr.worst, slow) {
                let at = records.firstIndex { $0.id == r.id }!
                let before = shownIdx.filter { $0 <= at }.suffix(
                    LongRun.neighbourhood + (shownIdx.contains(at) ? 1 : 0))
                let after = shownIdx.filter { $0 > at }.prefix(LongRun.neighbourhood)
                let want = (Array(before) + Array(after)).map { records[$0].frame }.sorted()
                #expect(e.points.map(\.frame) == want, "seed \(seed) event at \(r.frame)")
                #expect(e.points.count <= 2 * LongRun.neighbourhood + 1)
            }
        }
    }

    @Test func theThresholdEdge() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let limit = ReportChart.perFrameLimit(width: 1200)
        #expect(limit == 10_000 && ReportChart.perFrameLimit(width: 4000) == 8 * (4000 - 88))
        let (path, _) = try recordRun(config(frames: limit + 1, injectLate: [100: 2, 9000: 3]), in: dir)
        var log = try RunLog.read(path: path)
        #expect(log.records.count == limit + 1)
        let long = ReportChart(log: log)
        #expect(long.longRun != nil && long.points.isEmpty && long.markedFrames == 2)
        // The same chart read in one pass.
        let (streamed, _) = try ReportChart.read(path: path)
        #expect(PNGReport.encode(streamed) == PNGReport.encode(long) && SVGReport.svg(streamed) == SVGReport.svg(long))
        // One frame fewer: today's picture, a point for every shown frame with an interval.
        log.records.removeLast()
        let perFrame = ReportChart(log: log)
        #expect(perFrame.longRun == nil && perFrame.longRunLayout == nil)
        #expect(
            perFrame.points.count
                == log.records.filter { ($0.outcome == .onTime || $0.outcome == .late) && $0.intervalNs > 0 }.count)
        #expect(perFrame.drops.map(\.frame) == [100, 9000] && perFrame.markedFrames == 2)
        #expect(
            !SVGReport.svg(perFrame).contains("class=\"long-run\"")
                && SVGReport.svg(long).contains("class=\"long-run\""))
    }

    @Test func memoryIsBoundedByConstruction() {
        var b = ReportChart.Builder(estimatesRefresh: false, width: 600)
        let records = Self.records(60_000, seed: 42)
        for (i, r) in records.enumerated() {
            b.add(r)
            if i == b.perFrameLimit - 1 { #expect(b.shown.count > 0 && !b.isLongRun) }
        }
        // Past the limit the per-frame points are let go; what is kept is bounded by the limits.
        #expect(b.isLongRun && b.shown.isEmpty && b.drops.isEmpty)
        #expect(b.long.bins.count <= ReportChart.maxBins(width: 600) && b.long.worst.count <= LongRun.candidateCount)
        #expect(b.long.worst.allSatisfy { $0.event.points.count <= 2 * LongRun.neighbourhood + 1 })
        #expect(
            b.long.ring.count <= LongRun.neighbourhood + 1
                && b.long.histogram.count <= ReportChart.maxHistogramRefreshes + 1)
    }

    @Test func theHistogramScale() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A few drops in 600 frames: linear, as before.
        let (path, _) = try recordRun(config(frames: 600, injectLate: [100: 1, 250: 3]), in: dir)
        let chart = ReportChart(log: try RunLog.read(path: path))
        #expect(!chart.histogramLogScale && SVGReport.svg(chart).contains(">intervals in refresh units</text>"))
        // 2,997 against 1 (a 3,000-frame run with two drops): log scale, each bar of 1 at least 2 px.
        let (path3, _) = try recordRun(config(frames: 3000, injectLate: [7: 2, 2000: 1]), in: dir, name: "b.jsonl")
        let chart3 = ReportChart(log: try RunLog.read(path: path3))
        #expect(
            chart3.histogramLogScale
                && SVGReport.svg(chart3).contains(">intervals in refresh units (count: log scale)</text>"))
        let bars = chart3.histogramBars.filter { $0.count > 0 }
        #expect(
            bars.count == 3 && bars.allSatisfy { $0.box.height >= 2 } && bars[0].box.height > 4 * bars[1].box.height)
    }

    @Test func theHTMLReportZoomsWithoutTheNetwork() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 600, injectLate: [100: 1, 250: 3]), in: dir)
        let log = try RunLog.read(path: path)
        let html = HTMLReport.html(ReportChart(log: log), log: log, source: "run.jsonl")
        #expect(html.contains("<div id=\"chart\" data-first-frame=\"0\" data-last-frame=\"599\""))
        #expect(html.contains("<span id=\"visible-range\">0-599</span>") && html.contains("data-zoom-ready"))
        #expect(
            !html.contains("<script src")
                && !html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http"))
        #expect(html.components(separatedBy: "<script").count == 2)
    }
}
