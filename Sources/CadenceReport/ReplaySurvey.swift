import CadenceCore

/// What a replay needs of a whole log before it starts, gathered in one pass over its frame
/// records in bounded memory: counts, extremes, the first record, the recorded summary, and
/// whether the log can be replayed record by record (``streamable``) and surely passes
/// ``ReplayLimits`` (``withinLimits``).
///
/// A log read record by record must be in the order a run writes it: shown frames at rising
/// vblanks and timestamps, frame numbers and ids rising, and each record's earliest time at
/// most ``ReplayDisplay/disorder`` before an earlier record's. Any other log (a hand-edited
/// or fuzzed one) is replayed from all its records at once, as before.
struct ReplaySurvey {
    let header: RunLogHeader?
    let refreshInterval: Double
    /// Frame records.
    private(set) var count = 0
    /// The first record in log order, and the one with the lowest id.
    private(set) var firstInLog: FrameRecord? = nil
    private(set) var first: FrameRecord? = nil
    private(set) var maxFrame = 0
    private(set) var maxID: UInt64 = 0
    /// The latest time of any record (wake, render end, commit, flip, receipt).
    private(set) var lastEvent: Nanoseconds = 0
    private(set) var loggedDelays = false
    /// Every shown frame's timestamp is a whole microsecond (kernel flip events).
    private(set) var microsecondFlips = true
    private(set) var firstFlipSequence: UInt64? = nil
    /// Render durations of frames without injected lateness (kept only when some frame has it).
    private(set) var durations: [Double]? = nil
    private let injected: [Int: Int]
    /// The recorded frames' accounting (the recorded summary of a log without an end line).
    var recorded: LogSummaryBuilder
    private(set) var streamable = true
    /// Why not, for the first record that is out of order.
    private(set) var outOfOrder: String? = nil
    private(set) var withinLimits = true
    private let disorder: Nanoseconds
    private var latestEarliest: Nanoseconds = .min
    private var lastFlipSequence: UInt64 = 0
    private var lastFlip: Nanoseconds = .min
    private var minFlip: Nanoseconds = .max
    private var maxFlip: Nanoseconds = .min
    private var minTime: Nanoseconds = .max
    private var maxTime: Nanoseconds = .min
    private var lastFrame = Int.min
    /// Ids inside the file's range that it has no record of (at most 256 of them): frames a run
    /// completed out of order across a rotation (a stall's discarded frames logged before the
    /// late frame before them), whose records are in the file before or after this one.
    private(set) var missingIDs: Set<UInt64> = []
    private var lastID: UInt64 = 0

    init(header: RunLogHeader?, refreshInterval: Double, injectLate: [Int: Int]) {
        self.header = header
        self.refreshInterval = refreshInterval
        injected = injectLate
        if !injectLate.isEmpty { durations = [] }
        recorded = LogSummaryBuilder(estimatesRefresh: header == nil)
        disorder = ReplayDisplay.disorder(refreshInterval)
    }

    /// The survey of `log`'s records.
    init(_ log: RunLog) {
        let injected = log.header?.configuration.injectLate ?? [:]
        self.init(header: log.header, refreshInterval: LogAnalysis.refreshIntervalNs(log), injectLate: injected)
        for r in log.records { add(r) }
    }

    /// The earliest and latest times of `r` a replay display looks up by time.
    static func span(_ r: FrameRecord) -> (Nanoseconds, Nanoseconds) {
        var lo = Nanoseconds.max, hi = Nanoseconds.min
        @inline(__always) func see(_ t: Nanoseconds) {
            if t != 0 {
                lo = Swift.min(lo, t)
                hi = Swift.max(hi, t)
            }
        }
        see(r.callbackNs)
        see(r.wakeNs)
        see(r.renderStartNs)
        see(r.renderEndNs)
        see(r.commitNs)
        see(r.flipNs)
        see(r.receivedNs)
        see(r.copyEndNs ?? 0)
        if let d = r.schedulerDelayNs, d > 0 { see(r.wakeNs &- d) }
        if let late = r.lateVBlankEvents { for e in late where e.count == 2 { see(e[1]) } }
        if let seen = r.vblanks { for e in seen where e.count == 2 { see(e[1]) } }
        return lo <= hi ? (lo, hi) : (0, 0)
    }

    mutating func add(_ r: FrameRecord) {
        let index = count
        count += 1
        if firstInLog == nil { firstInLog = r }
        if first == nil || r.id < first!.id { first = r }
        maxFrame = index == 0 ? r.frame : Swift.max(maxFrame, r.frame)
        if index > 0 && r.id > maxID &+ 1 && r.id &- maxID <= 64 && missingIDs.count < 256 {
            for i in (maxID &+ 1)..<r.id { missingIDs.insert(i) }
        }
        missingIDs.remove(r.id)
        maxID = Swift.max(maxID, r.id)
        lastEvent = Swift.max(lastEvent, r.wakeNs, r.renderEndNs, r.commitNs, r.flipNs, r.receivedNs)
        if r.schedulerDelayNs != nil { loggedDelays = true }
        if r.renderEndNs > 0 && injected[r.frame] == nil { durations?.append(Double(r.renderEndNs - r.renderStartNs)) }
        recorded.add(r)
        // In the order a run writes its log.
        if r.frame <= lastFrame || (index > 0 && r.id <= lastID) {
            unordered("frame \(r.frame) id \(r.id) after \(lastFrame) \(lastID)")
        }
        lastFrame = r.frame
        lastID = r.id
        let (earliest, _) = Self.span(r)
        if earliest != 0 {
            if latestEarliest != .min && earliest < latestEarliest &- disorder {
                unordered("frame \(r.frame) earliest \(earliest) before \(latestEarliest)")
            }
            latestEarliest = Swift.max(latestEarliest, earliest)
        }
        // ReplayLimits, record by record (a record it might refuse: the whole log decides).
        let limit = ReplayLimits.maxTime
        @inline(__always) func inside(_ t: Nanoseconds) { if t < 0 || t > limit { withinLimits = false } }
        inside(r.callbackNs)
        inside(r.wakeNs)
        inside(r.deadlineNs)
        inside(r.renderStartNs)
        inside(r.renderEndNs)
        inside(r.commitNs)
        inside(r.flipNs)
        inside(r.receivedNs)
        inside(r.intent.targetTimeNs)
        inside(r.intent.requestedTimeNs ?? 0)
        inside(r.intent.minDurationNs ?? 0)
        inside(r.schedulerDelayNs ?? 0)
        if r.sequence > ReplayLimits.maxSequence || r.intent.targetSequence > ReplayLimits.maxSequence {
            withinLimits = false
        }
        // Frame numbers up to the record count + 64: this record's index + 65 is surely within.
        if r.frame < 0 || r.frame > index + 65 { withinLimits = false }
        if !(0...10_000).contains(r.busyRetries) { withinLimits = false }
        @inline(__always) func near(_ t: Nanoseconds) {
            if t != 0 {
                minTime = Swift.min(minTime, t)
                maxTime = Swift.max(maxTime, t)
            }
        }
        near(r.callbackNs)
        near(r.wakeNs)
        near(r.deadlineNs)
        near(r.renderStartNs)
        near(r.renderEndNs)
        near(r.commitNs)
        near(r.receivedNs)
        near(r.intent.targetTimeNs)
        for pairs in [r.lateVBlankEvents, r.vblanks] {
            for e in pairs ?? [] where e.count == 2 && e[1] != 0 {
                minTime = Swift.min(minTime, e[1])
                maxTime = Swift.max(maxTime, e[1])
            }
        }
        if r.flipNs > 0 && (r.outcome == .onTime || r.outcome == .late) {
            if firstFlipSequence == nil { firstFlipSequence = r.sequence }
            if r.flipNs % 1000 != 0 { microsecondFlips = false }
            if lastFlip != .min && (r.sequence <= lastFlipSequence || r.flipNs <= lastFlip) {
                unordered("frame \(r.frame) flip \(r.sequence) \(r.flipNs) after \(lastFlipSequence) \(lastFlip)")
                withinLimits = false
            }
            lastFlipSequence = r.sequence
            lastFlip = r.flipNs
            minFlip = Swift.min(minFlip, r.flipNs)
            maxFlip = Swift.max(maxFlip, r.flipNs)
            minTime = Swift.min(minTime, r.flipNs)
            maxTime = Swift.max(maxTime, r.flipNs)
        }
    }

    private mutating func unordered(_ why: String) {
        if streamable { outOfOrder = why }
        streamable = false
    }

    /// Whether some shown frame has a flip timestamp.
    var anyFlip: Bool { maxFlip != .min }

    /// Whether the log as a whole surely passes ``ReplayLimits/check(_:)`` (its header checked
    /// on its own): every record within the limits, the flips' span and every time near them.
    var surelyWithinLimits: Bool {
        guard withinLimits, let h = header else { return false }
        guard anyFlip else { return true }
        if Double(maxFlip - minFlip) / h.refreshIntervalNs > ReplayLimits.maxRefreshes { return false }
        return minTime >= minFlip - ReplayLimits.nearFlips && maxTime <= maxFlip + ReplayLimits.nearFlips
    }

    /// The typical render duration (the median of those of frames without injected lateness).
    var typicalRender: Nanoseconds { clampedNanoseconds(SummaryStatistics(durations ?? []).p50) }
}
