import CadenceCore
import Foundation

/// The replay display's window on the log: records read as the replay's clock reaches them,
/// pinned on the flips' timeline, their wakes and early or late events derived, and dropped
/// once they are far behind the clock (`ReplayDisplay`'s other job, the display itself, is in
/// ReplayDisplay+Backend.swift).
extension ReplayDisplay {
    /// Reads the next record (false after the last).
    func load() throws -> Bool {
        guard !exhausted else { return false }
        let next: FrameRecord?
        do { next = try nextRecord() } catch {
            // Kept for the replay to throw (the pacer would take it for the display's).
            readError = readError ?? error
            exhausted = true
            throw error
        }
        guard let r = next else {
            exhausted = true
            return false
        }
        let (earliest, latest) = ReplaySurvey.span(r)
        let rec = Recorded(r, earliest: earliest, latest: latest)
        byID[r.id] = rec
        maxLoadedID = Swift.max(maxLoadedID, r.id)
        maxLoadedFrame = Swift.max(maxLoadedFrame, r.frame)
        if r.renderEndNs > 0 { renderEndByFrame[r.frame] = r.renderEndNs }
        if r.busyRetries > 0 { busyLeft[r.id] = r.busyRetries }
        if r.flipNs > 0 && (r.outcome == .onTime || r.outcome == .late) {
            flipsOnly.set(r.sequence, r.flipNs)
            if r.receivedNs > r.flipNs { flipReceivedAt[r.sequence] = r.receivedNs }
            if !callbackPinned.contains(r.sequence) && !learnedPinned.contains(r.sequence) {
                timeline.set(r.sequence, r.flipNs)
            }
        }
        if r.receivedNs > 0 {
            var i = receipts.count
            while i > 0 && receipts[i - 1] > r.receivedNs { i -= 1 }
            receipts.insert(r.receivedNs, at: i)
        }
        if loggedDelays && r.renderEndNs > r.renderStartNs { renders.append((r.renderStartNs, r.renderEndNs)) }
        // The vblank timestamps the run learned from its vblank events and queries: the replay's
        // vblank events and queries give the same (a flip completion keeps its own timestamp).
        for e in r.vblanks ?? [] where e.count == 2 && e[0] >= 0 {
            timeline.set(UInt64(e[0]), e[1])
            learnedPinned.insert(UInt64(e[0]))
        }
        for e in r.lateVBlankEvents ?? [] where e.count == 2 && e[0] >= 0 {
            lateVBlankEventAt[UInt64(e[0])] = Swift.max(lateVBlankEventAt[UInt64(e[0])] ?? 0, e[1])
        }
        if earliest != 0 { latestEarliest = Swift.max(latestEarliest, earliest) }
        loaded.append((r.id, r.frame, latest))
        if modelsEarlyEvents && r.callbackNs > 0 {
            awaitingPin.append(rec)
        } else {
            awaitingDerive.append(rec)
        }
        maxWindow = Swift.max(maxWindow, loaded.count - loadedHead)
        sinceEviction += 1
        return true
    }

    /// Display-link callbacks ran at vblanks no frame was shown at, too: their timestamps
    /// (`callbackNs`) are kernel vblank timestamps; pin them on the timeline. They come from
    /// vblank queries and events, which carry nanoseconds, while flip events carry
    /// microseconds: queries and vblank events replay the nanosecond value, flip completions
    /// keep their own (recorded) timestamp.
    func pin(_ r: Recorded) {
        let s = flipsOnly.sequence(near: r.callbackNs)
        if abs(flipsOnly.time(of: s) &- r.callbackNs) < clampedNanoseconds(refreshInterval / 4) {
            if !learnedPinned.contains(s) { timeline.set(s, r.callbackNs) }
            callbackPinned.insert(s)
        }
    }

    /// The wakes, early and late events a record tells of.
    func derive(_ r: Recorded) {
        // A callback that ran late is replayed late, unless a flip completion arriving just then
        // (within 50 µs) is what woke it: that lateness is the flip's, and replays by itself.
        if r.callbackNs > 0 && r.wakeNs > r.callbackNs {
            var lo = 0, hi = receipts.count
            while lo < hi {
                let mid = (lo + hi) / 2; if receipts[mid] < r.wakeNs &- 50_000 { lo = mid + 1 } else { hi = mid }
            }
            if !(lo < receipts.count && receipts[lo] <= r.wakeNs) {
                wakeAt[r.callbackNs] = Swift.max(wakeAt[r.callbackNs] ?? 0, r.wakeNs)
            } else if timeline.usesGrid && r.callbackNs % 1000 == 0 {
                // Woken with that flip's completion, the callback took its vblank from the flip
                // event (whole µs), not from a vblank event (ns): the run read that vblank's
                // event no sooner than the completion, and neither does the replay (else its
                // callback runs at the vblank with the refined ns timestamp: 24 fps on vkms at
                // latency 2 aimed every other frame 0.8 µs later).
                let s = timeline.sequence(near: r.callbackNs)
                let t = time(of: s)
                if t != r.callbackNs && t &- r.callbackNs < 1_000 {
                    wakeAtSequence[s] = Swift.max(wakeAtSequence[s] ?? 0, r.wakeNs)
                    wakeAt[t] = Swift.max(wakeAt[t] ?? 0, r.wakeNs)
                }
            }
        }
        if r.schedulerDelayNs > 0 {
            let planned = r.wakeNs &- r.schedulerDelayNs
            // Not when the wake is explained by work the replay reproduces anyway: a frame being
            // drawn until then, or a flip completion received just then.
            let drawn = renders.contains(where: {
                $0.start <= planned && $0.end >= r.wakeNs &- 50_000 && $0.end <= r.wakeNs
            })
            if !drawn && !receipts.contains(where: { $0 >= r.wakeNs &- 50_000 && $0 <= r.wakeNs }) {
                let s = timeline.sequence(near: planned)
                if abs(time(of: s) &- planned) < clampedNanoseconds(refreshInterval / 4) {
                    wakeAtSequence[s] = Swift.max(wakeAtSequence[s] ?? 0, r.wakeNs)
                }
            }
        }
        // Vblanks the recorded run knew of before their timestamps (see `knownEarly`).
        if modelsEarlyEvents {
            func early(_ s: UInt64, _ at: Nanoseconds) { knownEarly[s] = Swift.min(knownEarly[s] ?? at, at) }
            if r.callbackNs > 0 && r.wakeNs > 0 && r.wakeNs < r.callbackNs {
                let s = timeline.sequence(near: r.callbackNs)
                if time(of: s) == r.callbackNs { early(s, r.wakeNs) }
            }
            if (r.outcome == .onTime || r.outcome == .late) && r.receivedNs > 0 && r.receivedNs < r.flipNs {
                early(r.sequence, r.receivedNs)
            }
        }
    }

    /// Reads, pins and derives until everything before `t` is in (or the log has ended).
    @inline(__always) func fill(until t: Nanoseconds) throws {
        if ready <= t { try fillSlow(until: t) }
    }

    func fillSlow(until t: Nanoseconds) throws {
        // Every record not read yet has all its times after this.
        var unread: Nanoseconds { exhausted ? .max : latestEarliest == .min ? .min : latestEarliest &- disorderNs }
        while true {
            let pinning = awaitingPinHead < awaitingPin.count
            let deriving = awaitingDeriveHead < awaitingDerive.count
            // Everything before `ready` is read, pinned and derived.
            var bound = unread
            if pinning { bound = Swift.min(bound, awaitingPin[awaitingPinHead].earliest &- disorderNs) }
            if deriving { bound = Swift.min(bound, awaitingDerive[awaitingDeriveHead].earliest &- disorderNs) }
            ready = bound
            if ready > t || (exhausted && !pinning && !deriving) { break }
            if deriving {
                let d = awaitingDerive[awaitingDeriveHead]
                let pinnedPast = pinning ? awaitingPin[awaitingPinHead].earliest &- disorderNs : Nanoseconds.max
                let after = d.latest &+ near
                if whole ? (exhausted && !pinning) : (pinnedPast > after && unread > after) {
                    derive(d)
                    awaitingDeriveHead += 1
                    continue
                }
            }
            if pinning {
                let p = awaitingPin[awaitingPinHead]
                if exhausted || (flipsOnly.lastStamp ?? .min) > p.callbackNs &+ near {
                    pin(p)
                    awaitingDerive.append(p)
                    awaitingPinHead += 1
                    continue
                }
            }
            if try !load() && !pinning && !deriving { break }
        }
        compact()
    }

    /// Drops what the replay is past (not in a whole-log replay).
    func compact() {
        if awaitingPinHead > 1024 && awaitingPinHead * 2 > awaitingPin.count {
            awaitingPin.removeFirst(awaitingPinHead)
            awaitingPinHead = 0
        }
        if awaitingDeriveHead > 1024 && awaitingDeriveHead * 2 > awaitingDerive.count {
            awaitingDerive.removeFirst(awaitingDeriveHead)
            awaitingDeriveHead = 0
        }
        guard !whole, sinceEviction >= 256 else { return }
        sinceEviction = 0
        var before = clock &- 2 &* near
        if awaitingPinHead < awaitingPin.count {
            before = Swift.min(before, awaitingPin[awaitingPinHead].earliest &- near)
        }
        if awaitingDeriveHead < awaitingDerive.count {
            before = Swift.min(before, awaitingDerive[awaitingDeriveHead].earliest &- near)
        }
        while loadedHead < loaded.count && loaded[loadedHead].latest < before {
            let l = loaded[loadedHead]
            byID[l.id] = nil
            busyLeft[l.id] = nil
            renderEndByFrame[l.frame] = nil
            loadedHead += 1
        }
        if loadedHead > 1024 && loadedHead * 2 > loaded.count {
            loaded.removeFirst(loadedHead)
            loadedHead = 0
        }
        var n = 0
        while n < receipts.count && receipts[n] < before { n += 1 }
        receipts.removeFirst(n)
        renders.removeAll { $0.end < before }
        guard !timeline.isEmpty, let first = timeline.firstSequence, time(of: first) < before else { return }
        let s = timeline.vblank(atOrBefore: before).sequence
        wakeAt = wakeAt.filter { $0.key >= before }
        wakeAtSequence = wakeAtSequence.filter { $0.key >= s }
        knownEarly = knownEarly.filter { $0.key >= s }
        lateVBlankEventAt = lateVBlankEventAt.filter { $0.key >= s }
        flipReceivedAt = flipReceivedAt.filter { $0.key >= s }
        callbackPinned = callbackPinned.filter { $0 >= s }
        learnedPinned = learnedPinned.filter { $0 >= s }
        timeline.evict(below: s)
        flipsOnly.evict(below: s)
    }

    /// The recorded record of frame `id` (read up to it).
    func record(_ id: FrameID) throws -> Recorded? {
        while id > maxLoadedID, try load() {}
        return byID[id]
    }

    /// When the recorded run finished rendering frame `frame` (0: not recorded).
    func renderEnd(frame: Int) throws -> Nanoseconds {
        while frame > maxLoadedFrame, try load() {}
        return renderEndByFrame[frame] ?? 0
    }
}

/// What a replay display keeps of a recorded frame.
struct Recorded {
    var id: FrameID
    var frame: Int
    var callbackNs: Nanoseconds
    var wakeNs: Nanoseconds
    /// 0 when not logged.
    var schedulerDelayNs: Nanoseconds
    var commitNs: Nanoseconds
    /// 0 when not logged.
    var copyEndNs: Nanoseconds
    var flipNs: Nanoseconds
    var sequence: UInt64
    var receivedNs: Nanoseconds
    var outcome: FrameOutcome
    /// Discarded because the seat session paused.
    var sessionPaused: Bool
    /// The earliest and latest times of the record (``ReplaySurvey/span(_:)``).
    var earliest: Nanoseconds
    var latest: Nanoseconds

    init(_ r: FrameRecord, earliest: Nanoseconds, latest: Nanoseconds) {
        id = r.id
        frame = r.frame
        callbackNs = r.callbackNs
        wakeNs = r.wakeNs
        schedulerDelayNs = r.schedulerDelayNs ?? 0
        commitNs = r.commitNs
        copyEndNs = r.copyEndNs ?? 0
        flipNs = r.flipNs
        sequence = r.sequence
        receivedNs = r.receivedNs
        outcome = r.outcome
        sessionPaused = r.cause == .sessionPaused
        self.earliest = earliest
        self.latest = latest
    }
}
