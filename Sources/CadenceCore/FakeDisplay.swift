#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A display on virtual time that behaves like a KMS CRTC: vblanks on a grid (or VRR
/// refreshes), one flip in flight, a flip submitted after a vblank shows at the next one,
/// completion events with timestamps and sequences, and scripted faults. Deterministic for a
/// given configuration.
public final class FakeDisplay: DisplayBackend, WorkSimulating {
    public let configuration: FakeDisplayConfiguration
    public var name: String { "fake" }
    public var crtcID: UInt32 { 0 }
    public private(set) var refreshInterval: Double
    public private(set) var vrrRange: ClosedRange<Double>?
    public var hasHardwareVBlank: Bool { configuration.hasHardwareVBlank }
    public let surface: PixelSurface?
    public var queueCapacity: Int { configuration.queueCapacity }

    // Clock.
    private var clockNow: Nanoseconds
    private let wallOrigin: Nanoseconds

    // Fixed-refresh grid: vblank k (since the last rebase) at gridBase + k·period.
    private var period: Double
    private var gridBase: Nanoseconds
    private var gridIndex: Int64 = 0
    /// Time of the next vblank (fixed) or forced repeat (VRR).
    private var nextVBlankTime: Nanoseconds
    private var last: VBlank
    /// No hardware vblank: the last flip completion (sequences count from it).
    private var lastCompletion: VBlank
    private var vblankCount = 0

    // VRR state.
    private var lastRefreshStart: Nanoseconds
    private var lastFlipStart: Nanoseconds = -1
    /// The commit intervals LFC learns a frame's duration from (``CommitCadence``).
    private var cadence = CommitCadence()
    /// When the next frame is due after the frame on screen, its repeats spread over the time
    /// left until then (``LowFramerateCompensation/repeatStart(_:frameStart:frameEnd:)``): that
    /// frame's commit (plus the flip latency) and the cadence's duration when its flip happened
    /// (0: no duration known, no repeat). A commit after the flip does not move them: planned
    /// from it, a repeat fell before the commit that revealed it (47.952 Hz on 48–144: frame 1,
    /// committed at 41.7 ms, met a repeat of frame 0 put back at 38.2 ms and waited the
    /// shortest refresh after it, 3.4 ms late), which no panel, and not KMSDisplay's repeats
    /// (planned at the flip event), can do.
    private var flipEnd: Nanoseconds = 0
    private var repeatIndex: Int64 = 0

    // Flip state.
    private var pending: (frame: FrameID, committed: Nanoseconds, submission: Int)?
    private var submissions = 0
    private var finishes = 0
    private var vblankRequests: [UInt64] = []
    private var gone = false
    private var stallUntil: Nanoseconds = .min
    /// End of a ``FakeFault/processStopped(atVBlank:by:)`` stop begun during the current advance.
    private var stoppedUntil: Nanoseconds = .min
    /// Scripted session pauses done so far, and when the current one ends (nil: active).
    private var sessionPausesDone = 0
    private var sessionResumeAt: Nanoseconds? = nil

    // Events waiting for delivery, ascending by time.
    private var outbox: [(at: Nanoseconds, event: BackendEvent)] = []

    private var rng: SplitMix64
    private var faults: [FakeFault]

    public init(_ configuration: FakeDisplayConfiguration = .init()) {
        precondition(configuration.refreshHz > 0, "refresh must be positive")
        self.configuration = configuration
        faults = configuration.faults
        rng = SplitMix64(seed: configuration.seed)
        vrrRange = configuration.vrrRange
        if let vrr = configuration.vrrRange {
            refreshInterval = 1e9 / vrr.upperBound
        } else {
            refreshInterval = 1e9 / configuration.refreshHz
        }
        period = refreshInterval * (1 + configuration.driftPPM / 1e6)
        clockNow = configuration.startTime
        gridBase = configuration.startTime
        last = VBlank(sequence: configuration.startSequence, timestamp: configuration.startTime)
        lastCompletion = last
        lastRefreshStart = configuration.startTime
        wallOrigin = FakeDisplay.monotonicNow()
        if configuration.surfaceWidth > 0 && configuration.surfaceHeight > 0 {
            let stride = configuration.surfaceWidth * 4
            let bytes = stride * configuration.surfaceHeight
            let base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
            surface = PixelSurface(base: base, width: configuration.surfaceWidth, height: configuration.surfaceHeight, stride: stride)
        } else {
            surface = nil
        }
        outbox.reserveCapacity(64)
        vblankRequests.reserveCapacity(8)
        nextVBlankTime = 0
        nextVBlankTime = computeNextVBlankTime()
    }

    /// A fixed-refresh fake display on virtual time, with a `width`×`height` surface to draw
    /// into (none when 0).
    public convenience init(refreshHz: Double, width: Int = 0, height: Int = 0) {
        var c = FakeDisplayConfiguration(refreshHz: refreshHz)
        c.surfaceWidth = width
        c.surfaceHeight = height
        self.init(c)
    }

    deinit { surface?.base.deallocate() }

    /// Nothing to restore on the fake display; frames submitted after this fail as device lost.
    public func close() { gone = true }

    // MARK: DisplayBackend

    public func now() -> Nanoseconds {
        if configuration.clock == .wall { advance(to: wallMapped()) }
        return clockNow
    }

    public func lastVBlank() throws -> VBlank {
        if gone { throw BackendFailure.deviceLost("fake display removed") }
        _ = now()
        return last
    }

    public func finish(frame: FrameID) throws {
        if gone { throw BackendFailure.deviceLost("fake display removed") }
        let index = finishes
        finishes += 1
        var cost = configuration.copyCost
        for f in faults {
            if case .slowCopy(let n, let c) = f, n == index { cost = c }
        }
        if cost > 0 { spin(until: now() &+ cost) }
    }

    public func submit(frame: FrameID) throws {
        _ = now()
        let index = submissions
        submissions += 1
        if gone { throw BackendFailure.deviceLost("fake display removed") }
        if pending != nil || sessionResumeAt != nil { throw BackendFailure.busy }
        if faults.contains(.busy(submission: index)) { throw BackendFailure.busy }
        pending = (frame, clockNow, index)
        cadence.committed(at: clockNow)
        if vrrRange != nil || !configuration.hasHardwareVBlank { nextVBlankTime = computeNextVBlankTime() }
        for f in faults {
            if case .processStoppedInCommit(let n, let by) = f, n == index { stopProcess(for: by) }
        }
    }

    public func requestVBlank(after sequence: UInt64) throws {
        if gone { throw BackendFailure.deviceLost("fake display removed") }
        _ = now()
        if last.sequence > sequence {
            enqueue(.vblank(last), at: clockNow)
        } else if !vblankRequests.contains(sequence) {
            vblankRequests.append(sequence)
        }
    }

    public func waitForEvents(until deadline: Nanoseconds, into events: inout [BackendEvent]) throws {
        _ = now()
        while true {
            if let first = outbox.first, first.at <= clockNow {
                var n = 0
                while n < outbox.count && outbox[n].at <= clockNow {
                    var e = outbox[n].event
                    // Received now: later than planned when the client was busy or descheduled.
                    if case let .presented(f, vb, at) = e, at < clockNow {
                        e = .presented(frame: f, vblank: vb, receivedAt: clockNow)
                    }
                    events.append(e)
                    n += 1
                }
                outbox.removeFirst(n)
                return
            }
            if gone && outbox.isEmpty {
                throw BackendFailure.deviceLost("fake display removed")
            }
            var next = nextVBlankTime
            if let first = outbox.first, first.at < next { next = first.at }
            if next > deadline || (next == deadline && !vblankDue(by: deadline)) {
                sleepOrJump(to: deadline)
                return
            }
            if next == nextVBlankTime && !vblankDue(by: next) {
                // A VRR repeat: it happens just after `next` unless a flip comes first.
                sleepOrJump(to: next + 1)
                continue
            }
            sleepOrJump(to: next)
        }
    }

    /// Occupies the CPU until `deadline`, as rendering work would: the virtual clock jumps there
    /// (a busy wait at wall speed). Use it in tests to make a frame late.
    public func spin(until deadline: Nanoseconds) {
        if configuration.clock == .wall {
            while wallMapped() < deadline {}
        }
        advance(to: deadline)
    }

    // MARK: Time

    /// The process stops now for `by` ns: the display runs on, events wait for the stop's end.
    private func stopProcess(for by: Nanoseconds) {
        let end = clockNow &+ by
        stallUntil = Swift.max(stallUntil, end)
        if configuration.clock == .wall {
            var ts = timespec(tv_sec: Int(by / 1_000_000_000), tv_nsec: Int(by % 1_000_000_000))
            _ = nanosleep(&ts, nil)
        }
        advance(to: end)
    }

    private static func monotonicNow() -> Nanoseconds {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Nanoseconds(ts.tv_sec) &* 1_000_000_000 &+ Nanoseconds(ts.tv_nsec)
    }

    private func wallMapped() -> Nanoseconds {
        configuration.startTime &+ (FakeDisplay.monotonicNow() &- wallOrigin)
    }

    private func sleepOrJump(to t: Nanoseconds) {
        if configuration.clock == .wall {
            let wait = t - wallMapped()
            if wait > 0 {
                var ts = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                _ = nanosleep(&ts, nil)
            }
        }
        advance(to: t)
    }

    /// Whether the next vblank has happened by `t`. A VRR repeat (no flip pending) happens only
    /// once `t` is past it, so that a flip submitted exactly at the repeat time still wins.
    private func vblankDue(by t: Nanoseconds) -> Bool {
        if vrrRange != nil && pending == nil { return nextVBlankTime < t }
        return nextVBlankTime <= t
    }

    /// Moves the clock to `t`, running every vblank on the way.
    private func advance(to target: Nanoseconds) {
        var t = target
        while !gone && vblankDue(by: t) {
            clockNow = max(clockNow, nextVBlankTime)
            runVBlank()
            // A stopped process resumes only at the stop's end: its next look at the clock is then.
            if stoppedUntil > t { t = stoppedUntil }
        }
        if t > clockNow { clockNow = t }
    }

    private func computeNextVBlankTime() -> Nanoseconds {
        guard let vrr = vrrRange else {
            let grid = gridBase + Nanoseconds((Double(gridIndex + 1) * period).rounded())
            if !configuration.hasHardwareVBlank, let p = pending {
                return Swift.min(grid, p.committed + configuration.flipLatency)
            }
            return grid
        }
        let minInterval = Nanoseconds((1e9 / vrr.upperBound * (1 + configuration.driftPPM / 1e6)).rounded())
        // Rounded up: the panel holds a frame up to its longest refresh, so that a flip committed
        // exactly then (a frame of k × the longest refresh, 1 Hz on 48–144 Hz) still wins over the
        // panel's own refresh; rounded to the nearest ns that refresh came 1 ns before the flip
        // and every second frame waited the shortest refresh after it.
        let maxInterval = Nanoseconds((1e9 / vrr.lowerBound * (1 + configuration.driftPPM / 1e6)).rounded(.up))
        // Forced repeat: evenly spaced over the time from the frame's flip until the next frame
        // is due (its commit plus the shorter of the last two commit intervals) when that is
        // longer than the panel can hold (low-framerate compensation,
        // ``LowFramerateCompensation``), else at the longest refresh.
        var repeatAt = lastRefreshStart + maxInterval
        // The panel's real range: every interval × (1 + drift), as above.
        let drift = 1 + configuration.driftPPM / 1e6
        let lfc = LowFramerateCompensation(range: vrr.lowerBound / drift...vrr.upperBound / drift)
        if lastFlipStart >= 0, flipEnd > 0,
           let at = lfc.repeatStart(Int(repeatIndex) + 1, frameStart: lastFlipStart, frameEnd: flipEnd), at > lastRefreshStart {
            repeatAt = at
        }
        if let p = pending {
            let flipAt = max(p.committed + configuration.flipLatency, lastRefreshStart + minInterval)
            if flipAt <= repeatAt { return flipAt }
        }
        return repeatAt
    }

    private func randomJitter() -> Nanoseconds {
        let j = configuration.jitter
        guard j > 0 else { return 0 }
        let span = UInt64(2 * j + 1)
        return Nanoseconds(rng.next() % span) - j
    }

    private func enqueue(_ event: BackendEvent, at requested: Nanoseconds) {
        let time = Swift.max(requested, stallUntil)
        var i = outbox.count
        while i > 0 && outbox[i - 1].at > time { i -= 1 }
        outbox.insert((time, event), at: i)
    }

    private func runVBlank() {
        let t = nextVBlankTime
        vblankCount += 1
        if faults.contains(.deviceGone(afterVBlanks: vblankCount)) {
            // The device vanishes at this instant, before the vblank could latch anything.
            gone = true
            if let p = pending {
                enqueue(.failed(frame: p.frame, .deviceLost("fake display removed")), at: t)
                pending = nil
            }
            enqueue(.failed(frame: nil, .deviceLost("fake display removed")), at: t)
            vblankRequests.removeAll(keepingCapacity: true)
            nextVBlankTime = .max
            return
        }
        var vb = VBlank(sequence: last.sequence &+ 1, timestamp: t + randomJitter())
        var completesWithoutVBlank = false
        if !configuration.hasHardwareVBlank && vrrRange == nil, let p = pending, p.committed + configuration.flipLatency <= t {
            // No vblank: the flip completes now; count nominal refreshes since the last one.
            let refreshes = (Double(t - lastCompletion.timestamp) / refreshInterval).rounded()
            vb = VBlank(sequence: lastCompletion.sequence &+ UInt64(Swift.max(1, refreshes)), timestamp: t)
            lastCompletion = vb
            completesWithoutVBlank = true
        }
        last = vb
        for f in faults {
            switch f {
            case .stall(let n, let by) where n == vblankCount:
                stallUntil = t + by
            case .processStopped(let n, let by) where n == vblankCount:
                stallUntil = t + by
                stoppedUntil = t + by
                if configuration.clock == .wall {
                    var ts = timespec(tv_sec: Int(by / 1_000_000_000), tv_nsec: Int(by % 1_000_000_000))
                    _ = nanosleep(&ts, nil)
                }
            default: break
            }
        }
        let deliver = t + configuration.eventLatency

        var flippedCommit: Nanoseconds? = nil
        if let p = pending {
            if p.committed + configuration.flipLatency <= t {
                pending = nil
                flippedCommit = p.committed
                var delay: Nanoseconds = 0
                var missing = false
                for f in faults {
                    switch f {
                    case .lateEvent(let s, let by) where s == p.submission: delay += by
                    case .missingEvent(let s) where s == p.submission: missing = true
                    default: break
                    }
                }
                if !missing {
                    let at = Swift.max(deliver + delay, stallUntil)
                    enqueue(.presented(frame: p.frame, vblank: vb, receivedAt: at), at: at)
                }
            }
        }
        if !vblankRequests.isEmpty {
            var i = 0
            while i < vblankRequests.count {
                if vblankRequests[i] < vb.sequence {
                    enqueue(.vblank(vb), at: deliver)
                    vblankRequests.remove(at: i)
                } else {
                    i += 1
                }
            }
        }

        // Advance the refresh model.
        if vrrRange != nil {
            if let c = flippedCommit {
                lastFlipStart = t
                let d = cadence.frameDuration
                flipEnd = d > 0 ? c + configuration.flipLatency + d : 0
                repeatIndex = 0
            } else {
                repeatIndex += 1
            }
            lastRefreshStart = t
        } else if completesWithoutVBlank {
            gridBase = t
            gridIndex = 0
        } else {
            gridIndex += 1
        }

        // Scripted display-level faults.
        for f in faults {
            switch f {
            case .modeChange(let n, let hz) where n == vblankCount:
                vrrRange = nil
                refreshInterval = 1e9 / hz
                period = refreshInterval * (1 + configuration.driftPPM / 1e6)
                gridBase = t
                gridIndex = 0
                enqueue(.failed(frame: nil, .modeChanged), at: deliver)
            default: break
            }
        }
        scriptSession(at: t, vblank: vb, deliver: deliver)
        nextVBlankTime = gone ? Nanoseconds.max : computeNextVBlankTime()
    }

    /// ``FakeFault/sessionPaused(after:for:)``: pauses at the first vblank past its time (a flip
    /// still pending is dropped with its event) and resumes at the first vblank past its end.
    private func scriptSession(at t: Nanoseconds, vblank vb: VBlank, deliver: Nanoseconds) {
        if let end = sessionResumeAt {
            if t >= end {
                sessionResumeAt = nil
                enqueue(.sessionResumed(at: t, vblank: vb), at: deliver)
            }
            return
        }
        var k = 0
        for f in faults {
            guard case .sessionPaused(let after, let d) = f else { continue }
            defer { k += 1 }
            guard k == sessionPausesDone else { continue }
            guard t >= configuration.startTime &+ after else { return }
            sessionPausesDone += 1
            sessionResumeAt = t &+ d
            pending = nil
            vblankRequests.removeAll(keepingCapacity: true)
            enqueue(.sessionPaused(at: t), at: deliver)
            return
        }
    }
}
