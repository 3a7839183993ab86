/// A fault the fake display injects at a scripted point. Submissions are counted from 0 in the
/// order ``FakeDisplay/submit(frame:)`` is called (rejected calls count too); vblanks are
/// counted from 1 after the display starts.
public enum FakeFault: Equatable, Sendable {
    /// The completion event of submission `submission` reaches the client `by` ns late.
    case lateEvent(submission: Int, by: Nanoseconds)
    /// Submission `submission` flips normally but its completion event is never delivered.
    case missingEvent(submission: Int)
    /// Submission `submission` is rejected with EBUSY although no flip is pending.
    case busy(submission: Int)
    /// The device disappears at vblank number `afterVBlanks`.
    case deviceGone(afterVBlanks: Int)
    /// The client stops receiving events at vblank number `atVBlank` for `by` ns (the process was
    /// descheduled): everything due in that window arrives at its end.
    case stall(atVBlank: Int, by: Nanoseconds)
    /// The process is stopped at vblank number `atVBlank` for `by` ns, as `SIGSTOP` then
    /// `SIGCONT` do: the display goes on (a flip already committed still latches), the client
    /// makes no call until the stop ends, and the events due meanwhile arrive at its end. (On
    /// the wall clock the fake display sleeps for `by`.)
    case processStopped(atVBlank: Int, by: Nanoseconds)
    /// The process is stopped for `by` ns inside submission `submission` (counted as for
    /// ``busy(submission:)``), after the flip was committed and before the call returns: the
    /// flip latches at the next vblank, its event arrives at the stop's end.
    case processStoppedInCommit(submission: Int, by: Nanoseconds)
    /// The mode switches to `refreshHz` (fixed refresh) at vblank number `afterVBlanks`.
    case modeChange(afterVBlanks: Int, refreshHz: Double)
    /// ``FakeDisplay/finish(frame:)`` call number `finish` (counted from 0) takes `cost` ns
    /// instead of ``FakeDisplayConfiguration/copyCost``: a slow copy into the scanout buffer.
    case slowCopy(finish: Int, cost: Nanoseconds)
    /// The seat session is paused (VT switched away) at the first vblank `after` ns past
    /// ``FakeDisplayConfiguration/startTime`` and resumed at the first vblank `for` ns later, as
    /// libseat's disable and enable do: a flip not yet latched at the pause never completes, the
    /// display takes no flip in between, and the resume restores the mode. Several pauses run
    /// in the order given.
    case sessionPaused(after: Nanoseconds, for: Nanoseconds)
}

/// How the fake display's clock relates to real time.
public enum FakeClock: Equatable, Sendable {
    /// Virtual time: waiting and spinning jump the clock forward at once (tests, fast runs).
    case virtual
    /// Wall speed: waiting sleeps and spinning busy-waits, so a run takes as long as on a panel.
    case wall
}

/// Everything that shapes a ``FakeDisplay``.
public struct FakeDisplayConfiguration: Equatable, Sendable {
    /// Nominal refresh rate (from the "mode"): 59.94, 60, 120, 144, 240…
    public var refreshHz: Double = 60
    /// Variable-refresh range in Hz; nil for a fixed-refresh mode.
    public var vrrRange: ClosedRange<Double>? = nil
    /// Reported kernel timestamps deviate from the true vblank by up to ± this (uniform, seeded).
    public var jitter: Nanoseconds = 0
    /// The real vblank period is the nominal one times (1 + driftPPM / 10⁶).
    public var driftPPM: Double = 0
    /// A flip must be committed at least this long before a vblank to latch at it.
    public var flipLatency: Nanoseconds = 0
    /// Time from a vblank to the delivery of its events.
    public var eventLatency: Nanoseconds = 0
    /// How long ``FakeDisplay/finish(frame:)`` takes, as KMSDisplay's copy of the shadow surface
    /// into a scanout buffer does (the clock moves on by this much).
    public var copyCost: Nanoseconds = 0
    /// Virtual time of the first vblank.
    public var startTime: Nanoseconds = 1_000_000_000
    /// Sequence number of the first vblank.
    public var startSequence: UInt64 = 1_000
    /// Seed for jitter.
    public var seed: UInt64 = 0
    /// Scripted faults.
    public var faults: [FakeFault] = []
    /// Virtual or wall-speed clock.
    public var clock: FakeClock = .virtual
    /// Finished frames it holds besides the one on screen and the one in flight (KMS with a
    /// 3-buffer swapchain: 1).
    public var queueCapacity: Int = 2
    /// False models a driver without vblank (bochs, virtio-gpu) as KMSDisplay reports it: a flip
    /// completes `flipLatency` after its commit, not at a vblank; its sequence advances by the
    /// nominal refreshes since the previous completion (at least 1) and the synthetic vblank grid
    /// is re-anchored at the completion.
    public var hasHardwareVBlank: Bool = true
    /// When set, the display owns a zeroed XRGB8888 surface of this size.
    public var surfaceWidth: Int = 0
    public var surfaceHeight: Int = 0

    public init(refreshHz: Double = 60, vrrRange: ClosedRange<Double>? = nil, seed: UInt64 = 0) {
        self.refreshHz = refreshHz
        self.vrrRange = vrrRange
        self.seed = seed
    }
}

/// A small seeded generator (SplitMix64): deterministic across platforms.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }
}
