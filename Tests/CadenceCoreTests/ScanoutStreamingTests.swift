import PropertyBased
import Testing

@testable import CadenceCore

/// The verifier judges as it goes and keeps a bounded window: its verdicts must be those of the
/// batch algorithm it replaced (kept here as the reference model), whatever the order in which
/// lines and flips reach it within its margin.
@Suite struct ScanoutStreamingTests {
    static let period: Nanoseconds = 16_666_667

    /// Random runs: flips (some stale, some twice at one vblank, now and then far apart), changes
    /// without a flip, missing lines, driver catch-ups, late lines (and lines like them read
    /// before the flip that released their buffer, or showing a frame no buffer's reuse
    /// explains), repeated lines, lines read in batches, flip events late, lines starting after
    /// the first flips or stopping before the last. The streaming verdict (summary and every
    /// frame's) equals the batch model's.
    @Test func judgingAsItGoesGivesTheBatchVerdicts() async {
        let input = zip(
            Gen.int(in: 0...Int(Int32.max)), Gen.int(in: 20...400), Gen.int(in: 0...7), Gen.int(in: 0...4),
            Gen.int(in: 0...5))
        await propertyCheck(count: 3_000, input: input) { t in
            let run = StreamGen.run(seed: UInt64(t.0), vblanks: t.1, faults: t.2, readEvery: t.3, flipDelay: t.4)
            let expected = BatchModel.judge(samples: run.samples, flips: run.flips)
            var v = ScanoutVerifier(margin: run.lateness + 1 + UInt64(t.0 % 3), keepsVerdicts: true)
            var verdicts: [ScanoutVerifier.FrameVerdict] = []
            for input in run.order {
                switch input {
                case .sample(let k): v.add(run.samples[k])
                case .flip(let k): v.add(run.flips[k])
                }
                if t.0 % 2 == 0 { verdicts += v.takeVerdicts() }
            }
            verdicts += v.finishedVerdicts()
            let got = v.finish()
            #expect(got == expected.summary, "\(t): \(got) vs model \(expected.summary)")
            var byFrame: [FrameID: ScanoutVerifier.FrameVerdict.Kind] = [:]
            for x in verdicts {
                #expect(byFrame[x.frame] == nil, "\(t): frame \(x.frame) judged twice")
                byFrame[x.frame] = x.kind
            }
            #expect(byFrame == expected.frames, "\(t): per-frame verdicts differ")
        }
    }

    /// Runs whose only fault is the driver's late lines (each read after the flip that released
    /// its buffer, showing the frame drawn into it 1 to 3 flips later): no mismatch, every late
    /// line counted and not judged, and the CRCs' repeats those of the flips' timestamps within
    /// the vblanks not judged (scanout.sh's check); the streaming verdict is the batch model's.
    @Test func lateLinesAreNeverMismatches() async {
        let input = zip(Gen.int(in: 0...Int(Int32.max)), Gen.int(in: 20...400), Gen.int(in: 2...8), Gen.int(in: 0...4))
        await propertyCheck(count: 1_000, input: input) { t in
            let run = StreamGen.run(
                seed: UInt64(t.0), vblanks: t.1, faults: 0, readEvery: t.3, flipDelay: 2, lateLines: t.2)
            let expected = BatchModel.judge(samples: run.samples, flips: run.flips)
            var v = ScanoutVerifier(margin: run.lateness + 1, keepsVerdicts: true)
            for input in run.order {
                switch input {
                case .sample(let k): v.add(run.samples[k])
                case .flip(let k): v.add(run.flips[k])
                }
            }
            let got = v.finish()
            #expect(got == expected.summary, "\(t): \(got) vs model \(expected.summary)")
            #expect(
                got.mismatches == 0 && got.catchUpLines == run.lateLines, "\(t): \(run.lateLines) late lines: \(got)")
            var repeats = 0
            for (a, b) in zip(run.flips, run.flips.dropFirst()) { repeats += Int(b.sequence - a.sequence) - 1 }
            #expect(
                abs(got.repeatedRefreshes - repeats) <= got.unjudgedVBlanks, "\(t): flips repeat \(repeats): \(got)")
        }
    }

    /// The same runs with every line and flip given at once (lines first, then flips), as long
    /// as the margin covers the run: the batch verdict.
    @Test func aMarginOverTheWholeRunIsTheBatch() async {
        let input = zip(Gen.int(in: 0...Int(Int32.max)), Gen.int(in: 20...300), Gen.int(in: 0...7))
        await propertyCheck(count: 500, input: input) { t in
            let run = StreamGen.run(seed: UInt64(t.0), vblanks: t.1, faults: t.2, readEvery: 1, flipDelay: 1)
            let expected = BatchModel.judge(samples: run.samples, flips: run.flips)
            var v = ScanoutVerifier(margin: 100_000)
            for x in run.samples { v.add(x) }
            for x in run.flips { v.add(x) }
            #expect(v.finish() == expected.summary)
        }
    }

    /// An hour of 60 Hz vblanks, a flip at each (one in 500 stale, one line in 300 missing),
    /// lines read every vblank and flip events a vblank late: the verifier never holds more
    /// than its margin's worth of lines and flips, and its verdict is the run's.
    @Test func anHourAt60HzKeepsTheWindowBounded() {
        var v = ScanoutVerifier()
        let vblanks: UInt64 = 3_600 * 60
        var content: UInt64 = 0
        var most = 0
        var stale = 0, missing = 0
        for s in 1...vblanks {
            let isStale = s % 500 == 0
            if isStale { stale += 1 } else { content += 1 }
            if s % 300 == 7 {
                missing += 1
            } else {
                v.add(
                    ScanoutVerifier.Sample(
                        sequence: s, crc: content, receivedAt: Nanoseconds(s) * Self.period + 1_000_000))
            }
            if s > 1 {
                v.add(
                    ScanoutVerifier.Flip(
                        frame: FrameID(s - 1), sequence: s - 1, timestamp: Nanoseconds(s - 1) * Self.period))
            }
            most = max(most, v.retained)
        }
        v.add(
            ScanoutVerifier.Flip(
                frame: FrameID(vblanks), sequence: vblanks, timestamp: Nanoseconds(vblanks) * Self.period))
        let s = v.finish()
        #expect(most <= 2 * Int(v.margin) + 2, "retained up to \(most) items over \(vblanks) vblanks")
        #expect(v.retained <= 2 * Int(v.margin) + 2)
        #expect(s.frames == Int(vblanks) && s.stale == stale && s.missingLines == missing)
        // The first flip is at the first line (outside); each missing line leaves its flip and the next one unjudged.
        #expect(s.verified == Int(vblanks) - stale - 1 - 2 * missing)
        print("scanout verifier: \(vblanks) vblanks, at most \(most) items retained (margin \(v.margin))")
    }
}

/// One random run: CRC samples and flips, each list in the order it was produced, and the order
/// in which a reader hands them to the verifier.
struct StreamRun {
    enum Input {
        case sample(Int)
        case flip(Int)
    }
    var samples: [ScanoutVerifier.Sample] = []
    var flips: [ScanoutVerifier.Flip] = []
    var order: [Input] = []
    /// The most vblanks an input came behind the newest sequence handed over before it.
    var lateness: UInt64 = 0
    /// Late lines made: with `lateLines`, each one the rule takes for one; with other faults,
    /// lines like them too.
    var lateLines = 0
}

enum StreamGen {
    /// CadenceCore's ``SplitMix64`` with the draws these streams need.
    struct SplitMix {
        var g: SplitMix64
        init(state: UInt64) { g = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { g.next() }
        /// True one time in `n` (never for 0).
        mutating func oneIn(_ n: Int) -> Bool { n > 0 && next() % UInt64(n) == 0 }
        mutating func int(_ r: ClosedRange<Int>) -> Int { r.lowerBound + Int(next() % UInt64(r.count)) }
    }

    /// `faults` picks how often each fault happens (0: a clean run); lines are read every
    /// `readEvery` vblanks or so (0: at random), flip events come up to `flipDelay` vblanks late.
    /// `lateLines` (with no other fault) makes only late lines the rule takes for one, that often.
    static func run(
        seed: UInt64, vblanks: Int, faults: Int, readEvery: Int, flipDelay: Int, lateLines: Int = 0
    ) -> StreamRun {
        var r = SplitMix(state: seed)
        let period = ScanoutStreamingTests.period
        let base = UInt64(r.int(0...1_000_000))
        let rate = faults == 0 ? 0 : max(3, 40 / faults)
        let lateRate = lateLines > 0 ? max(3, 40 / lateLines) : rate
        // Content at each vblank and the flips latched there.
        var content: UInt64 = 1
        var nextContent: UInt64 = 2
        var frame: FrameID = 1
        var crcs: [UInt64] = []
        var flipsAt: [[ScanoutVerifier.Flip]] = []
        let flipEvery = r.oneIn(10) ? r.int(4...40) : r.int(1...3)
        for i in 0..<vblanks {
            let seq = base + UInt64(i)
            var here: [ScanoutVerifier.Flip] = []
            if i % flipEvery == 0 || r.oneIn(rate) {
                let stale = r.oneIn(rate)
                if !stale {
                    content = nextContent
                    nextContent += 1
                }
                here.append(ScanoutVerifier.Flip(frame: frame, sequence: seq, timestamp: Nanoseconds(seq) * period))
                frame += 1
                if r.oneIn(rate * 3) {
                    here.append(
                        ScanoutVerifier.Flip(frame: frame, sequence: seq, timestamp: Nanoseconds(seq) * period + 1000))
                    frame += 1
                }
            } else if r.oneIn(rate) {
                content = nextContent  // a change without a flip
                nextContent += 1
            }
            // Back to a picture shown before (a CRC equal to an older one) now and then.
            if r.oneIn(rate * 2) { content = 1 }
            crcs.append(content)
            flipsAt.append(here)
        }
        // Lines: which vblanks have one, when each is read; catch-ups write several at once with
        // the last one's CRC, read together after the last one's vblank.
        let firstLine = r.oneIn(3) ? r.int(0...min(20, vblanks - 1)) : 0
        let lastLine = r.oneIn(3) ? r.int(firstLine...(vblanks - 1)) : vblanks - 1
        var lines: [(seq: UInt64, crc: UInt64, readAt: Nanoseconds)] = []
        let flipIndices = flipsAt.indices.filter { !flipsAt[$0].isEmpty }
        var lateCount = 0
        var i = firstLine
        var readAt = Nanoseconds(base + UInt64(i)) * period + 500_000
        while i <= lastLine {
            let every = readEvery > 0 ? readEvery : r.int(1...6)
            let batchEnd = min(lastLine, i + every - 1)
            readAt = max(
                readAt, Nanoseconds(base + UInt64(batchEnd)) * period + Nanoseconds(r.int(100_000...4_000_000)))
            if r.oneIn(rate) && batchEnd > i {
                // Catch-up: every line of the batch carries the last one's CRC.
                for k in i...batchEnd { lines.append((base + UInt64(k), crcs[batchEnd], readAt)) }
            } else {
                for k in i...batchEnd where !r.oneIn(rate) {
                    var crc = crcs[k]
                    if flipsAt[k].isEmpty, k > firstLine, r.oneIn(lateRate) {
                        // A late line: the worker ran after the next flip released the buffer
                        // and the app drew a later frame (1 to 3 flips after that one) into it.
                        // With other faults, also such lines read before that flip, or showing
                        // the frame of that flip or of a fourth one.
                        let after = Array(flipIndices.drop { $0 <= k })
                        let m = lateLines > 0 ? r.int(1...3) : r.int(0...4)
                        if m < after.count,
                            lateLines == 0
                                || (after[m] <= lastLine && after[m] - k <= Int(ScanoutVerifier.lateLineReach))
                        {
                            crc = crcs[after[m]]
                            let released = flipsAt[after[0]][0].timestamp
                            if lateLines > 0 || !r.oneIn(3) {
                                readAt = max(readAt, released + Nanoseconds(r.int(1...3_000_000)))
                            } else {
                                readAt = max(readAt, released - Nanoseconds(r.int(1...1_000_000)))
                            }
                            lateCount += 1
                        }
                    }
                    lines.append((base + UInt64(k), crc, readAt))
                }
            }
            if r.oneIn(rate), let old = lines.last, old.seq > base + 2 {
                // A repeated line, for a vblank seen already.
                lines.append((old.seq - UInt64(r.int(0...2)), old.crc &+ 1, readAt))
            }
            i = batchEnd + 1
        }
        // Hand-over order: lines at their read, flip events at their vblank plus a delay.
        var events: [(at: Nanoseconds, input: StreamRun.Input, seq: UInt64)] = []
        var run = StreamRun()
        run.lateLines = lateCount
        for l in lines {
            events.append((l.readAt, .sample(run.samples.count), l.seq))
            run.samples.append(ScanoutVerifier.Sample(sequence: l.seq, crc: l.crc, receivedAt: l.readAt))
        }
        var flipTime: Nanoseconds = 0
        for here in flipsAt {
            for f in here {
                let delay = Nanoseconds(r.int(0...max(0, flipDelay))) * period + 200_000
                flipTime = max(flipTime, f.timestamp + delay)  // events in completion order
                events.append((flipTime, .flip(run.flips.count), f.sequence))
                run.flips.append(f)
            }
        }
        events.sort { a, b in a.at != b.at ? a.at < b.at : order(a.input) < order(b.input) }
        var newest: UInt64?
        var lastAccepted: UInt64?  // a line not past it is a repeat, ignored whenever it comes
        for e in events {
            run.order.append(e.input)
            var counts = true
            if case .sample = e.input {
                counts = lastAccepted.map { e.seq > $0 } ?? true
                if counts { lastAccepted = e.seq }
            }
            if counts, let n = newest, e.seq < n { run.lateness = max(run.lateness, n - e.seq) }
            newest = max(newest ?? e.seq, e.seq)
        }
        return run
    }

    private static func order(_ i: StreamRun.Input) -> Int {
        switch i {
        case .sample(let k): return 2 * k
        case .flip(let k): return 2 * k + 1
        }
    }
}

/// The batch algorithm the verifier used before it judged as it goes (every sample and flip
/// kept to the end), with each frame's verdict besides the summary.
enum BatchModel {
    static func judge(
        samples: [ScanoutVerifier.Sample], flips: [ScanoutVerifier.Flip]
    ) -> (summary: ScanoutSummary, frames: [FrameID: ScanoutVerifier.FrameVerdict.Kind]) {
        var s = ScanoutSummary()
        var frames: [FrameID: ScanoutVerifier.FrameVerdict.Kind] = [:]
        var crc: [UInt64: ScanoutVerifier.Sample] = [:]
        var last: UInt64?
        for x in samples {
            if let l = last, x.sequence <= l { s.repeatedLines += 1; continue }
            crc[x.sequence] = x
            last = x.sequence
        }
        s.lines = crc.count
        guard let first = samples.first?.sequence, let end = last else {
            s.frames = flips.count
            s.inexact = flips.count
            for f in flips { frames[f.frame] = .inexact }
            return (s, frames)
        }
        var flipAt: [UInt64: Int] = [:]
        for (i, f) in flips.enumerated() where flipAt[f.sequence] == nil { flipAt[f.sequence] = i }

        // Late lines: a change without a flip read after the first flip past it, showing the
        // content of one of the 3 flips after that one (all within 120 vblanks).
        let flipVBlanks = flipAt.keys.sorted()
        func isLate(_ v: UInt64, _ line: ScanoutVerifier.Sample) -> Bool {
            let after = flipVBlanks.filter { $0 > v && $0 <= v + 120 }
            guard let released = after.first, line.receivedAt > flips[flipAt[released]!].timestamp else { return false }
            return after.dropFirst().prefix(3).contains { crc[$0]?.crc == line.crc }
        }

        enum Kind { case flipChanged, flipUnchanged, changeWithoutFlip, lateLine }
        var events: [(v: UInt64, kind: Kind)] = []
        var inexact = Set<Int>()
        var firstSeen: [Int: UInt64] = [:]
        // The line each vblank is compared with: the one before it, or before a late line.
        var comparedWith: [UInt64: ScanoutVerifier.Sample] = [:]
        var late = Set<UInt64>()
        if first < end {
            var previous = crc[first]
            for v in (first + 1)...end {
                let flip = flipAt[v]
                let before = previous
                previous = crc[v]
                guard let cur = crc[v] else {
                    s.missingLines += 1
                    if let f = flip { inexact.insert(f) }
                    continue
                }
                guard let prev = before else {
                    if let f = flip { inexact.insert(f) }
                    continue
                }
                comparedWith[v] = prev
                let changed = cur.crc != prev.crc
                if flip == nil, changed, isLate(v, cur) {
                    late.insert(v)
                    previous = prev
                    events.append((v, .lateLine))
                    continue
                }
                switch (flip, changed) {
                case (let f?, true): events.append((v, .flipChanged)); firstSeen[f] = v
                case (_?, false): events.append((v, .flipUnchanged))
                case (nil, true): events.append((v, .changeWithoutFlip))
                case (nil, false): break
                }
            }
        }
        var staleVBlanks: [UInt64] = []
        var catchUp = Set<UInt64>()
        var i = 0
        while i < events.count {
            let e = events[i]
            guard e.kind != .flipUnchanged else {
                staleVBlanks.append(e.v)
                i += 1
                continue
            }
            // A late line ends the catch-up before it (as a change does) and is no change itself.
            guard e.kind != .lateLine else {
                i += 1
                continue
            }
            var j = i + 1
            var absorbed: [UInt64] = []
            while j < events.count, events[j].kind == .flipUnchanged,
                let line = crc[e.v], let later = crc[events[j].v], let f = flipAt[events[j].v],
                later.receivedAt <= line.receivedAt, line.receivedAt >= flips[f].timestamp
            {
                absorbed.append(events[j].v)
                j += 1
            }
            if absorbed.isEmpty {
                if e.kind == .changeWithoutFlip {
                    s.changesWithoutFlip += 1
                    if s.changeWithoutFlipVBlanks.count < 10 { s.changeWithoutFlipVBlanks.append(e.v) }
                }
            } else {
                s.catchUpLines += Int(absorbed.last! - e.v)
                for v in (e.v + 1)...absorbed.last! { catchUp.insert(v) }
                if let f = flipAt[e.v] { inexact.insert(f); firstSeen[f] = nil }
                for v in absorbed { inexact.insert(flipAt[v]!) }
            }
            i = j
        }
        var staleSet = Set<Int>()
        for v in staleVBlanks {
            let f = flipAt[v]!
            staleSet.insert(f)
            s.stale += 1
            if s.staleFrames.count < 10 { s.staleFrames.append(flips[f].frame) }
        }
        s.longestFrozen = ScanoutVerifier.longestFrozen(
            stale: staleVBlanks,
            changes: events.filter { $0.kind == .flipChanged || $0.kind == .changeWithoutFlip }.map(\.v),
            firstLine: first)
        s.catchUpLines += late.count
        s.frames = flips.count
        let outside = flips.indices.filter { flips[$0].sequence <= first || flips[$0].sequence > end }
        s.inexact = inexact.count + outside.count
        s.verified = flips.indices.filter { firstSeen[$0] != nil && !inexact.contains($0) }.count
        if let lo = flips.map(\.sequence).min(), let hi = flips.map(\.sequence).max(), lo < hi {
            for v in (lo + 1)...hi {
                guard let cur = crc[v], let prev = comparedWith[v], !catchUp.contains(v), !late.contains(v) else {
                    s.unjudgedVBlanks += 1
                    continue
                }
                if cur.crc == prev.crc { s.repeatedRefreshes += 1 }
            }
        }
        s.mismatches = s.stale + s.changesWithoutFlip
        // Each frame's verdict.
        for (k, f) in flips.enumerated() {
            let kind: ScanoutVerifier.FrameVerdict.Kind
            if f.sequence <= first || f.sequence > end {
                kind = .inexact
            } else if flipAt[f.sequence] != k {
                kind = .duplicate
            } else if inexact.contains(k) {
                kind = .inexact
            } else if staleSet.contains(k) {
                kind = .stale
            } else {
                precondition(firstSeen[k] != nil, "a frame the batch did not judge")
                kind = .verified
            }
            frames[f.frame] = kind
        }
        return (s, frames)
    }
}
