/// Low-framerate compensation (LFC), the one model every display uses (``FakeDisplay`` and
/// KMSDisplay's repeats; the fake DRM device's panel only refreshes when flipped): a frame meant
/// to stay up longer than a VRR panel's longest refresh (1/minimum Hz) is shown for k evenly
/// spaced refreshes, k the fewest that keep each refresh inside the range, spread over the time
/// from its refresh until the next frame is due (``repeatStart(_:frameStart:frameEnd:)``).
///
/// The frame's duration is the interval between the last two frames *committed*, the content's
/// own cadence, as amdgpu's freesync module takes it from the flips it is given. The interval
/// between frames *shown* would feed the model its own output: one frame held to the panel's
/// longest refresh makes the next look shorter, and 47 Hz on 48–144 Hz alternated 14.8 and
/// 27.8 ms instead of settling at two refreshes of 10.64 ms.
public struct LowFramerateCompensation: Sendable, Equatable {
    /// The panel's VRR range in Hz.
    public let range: ClosedRange<Double>

    public init(range: ClosedRange<Double>) {
        self.range = range
    }

    /// The panel's shortest refresh (ns, 1/maximum Hz).
    public var minimumIntervalNs: Double { 1e9 / range.upperBound }
    /// The panel's longest refresh (ns, 1/minimum Hz).
    public var maximumIntervalNs: Double { 1e9 / range.lowerBound }

    /// The fewest repeats k (at least 1) with k × `rate` at or above `minimum`: how many times a
    /// frame at `rate` Hz is shown on a panel whose minimum is `minimum` Hz, its refreshes no
    /// longer than the panel's longest. Counted as the numbers are written, within `slack` (a
    /// fraction of `minimum`): a minimum of 1.4 Hz plus 0.2 is 1.5999999999999999 Hz, and 48 /
    /// that rounded up to 31 repeats on a 48 Hz minimum instead of 30. The rate rule
    /// (``EffectiveRate/select(for:refreshHz:vrr:)``) and ``refreshes(forFrameDuration:)`` both
    /// count with it, each with its own slack.
    public static func fewestRepeats(rate: Double, minimum: Double, slack: Double) -> Int {
        guard rate > 0, rate < minimum else { return 1 }
        var k = (minimum / rate).rounded(.up)
        while k > 1 && rate * (k - 1) >= minimum * (1 - slack) { k -= 1 }
        return Int(k)
    }

    /// How many refreshes a frame meant to stay up `duration` ns is shown for: 1 when the panel
    /// holds it (up to its longest refresh, with 0.1% of slack for microsecond-rounded
    /// timestamps), else the fewest k with duration / k inside the range
    /// (``fewestRepeats(rate:minimum:slack:)``, a hair of float slack); 1 when no k fits (the
    /// rate selection never asks for such a rate: ``EffectiveRate/requestedHz``).
    public func refreshes(forFrameDuration duration: Nanoseconds) -> Int {
        let k = refreshesHeld(duration)
        return fits(duration, in: k) ? k : 1
    }

    /// Whether `k` even refreshes of `duration` ns are each no shorter than the panel's
    /// shortest (0.1% of slack).
    private func fits(_ duration: Nanoseconds, in k: Int) -> Bool {
        Double(duration) / Double(k) >= minimumIntervalNs * 0.999
    }

    /// The fewest refreshes, none longer than the panel's longest, that hold a frame `duration`
    /// ns: 1 up to the longest refresh (0.1% of slack), whether or not they fit the range.
    private func refreshesHeld(_ duration: Nanoseconds) -> Int {
        let d = Double(duration)
        guard d > maximumIntervalNs * 1.001 else { return 1 }
        // The fewest (1.6 Hz on 48–144 Hz: 625 ms / 20.833 ms gave 30.000000000000004, 31
        // refreshes instead of 30): as the rate is written, a hair of float slack.
        return Self.fewestRepeats(rate: 1e9 / d, minimum: range.lowerBound, slack: 1e-12)
    }

    /// When the `index`-th repeat (1-based) of a frame begins, or nil when the frame has no such
    /// repeat. The frame's refresh started at `frameStart`; the next frame is due at `frameEnd`
    /// (the frame's commit plus its duration, in the same time as `frameStart`: when it is
    /// committed plus the panel's response). Its repeats are spread evenly over the time left
    /// between the two, the fewest that keep each refresh no longer than the panel's longest:
    /// so a frame shown late has the repeats that fit the time it has left (none when the panel
    /// holds it until `frameEnd`), and, where the time left allows, none comes closer than the
    /// panel's shortest refresh before `frameEnd`. Spread over the whole duration from a late refresh, one repeat came
    /// 6.7 ms before the next frame's commit and that frame waited the shortest refresh after it
    /// (42.1 Hz on 48–144 Hz at latency 2: 198 µs late, a second drop event made by LFC). When
    /// the time left is too short for even spacing inside the range (a panel of less than 2:1,
    /// 30 Hz on 40–60 Hz after a late refresh), the repeats come at the shortest refresh, the
    /// next frame as soon as the panel allows. Rounded up to the ns: a flip committed at the
    /// same time as a repeat wins. Rounded down, a repeat half-way through a frame of an odd
    /// number of ns came 1 ns before the next frame's commit (60 Hz on a 40–60 Hz panel at
    /// frame latency 3, the first frame shown a refresh late: every frame after it was shown a
    /// refresh late, each behind a repeat).
    public func repeatStart(_ index: Int, frameStart: Nanoseconds, frameEnd: Nanoseconds) -> Nanoseconds? {
        let span = frameEnd &- frameStart
        let k = refreshesHeld(span)
        guard index >= 1, index < k else { return nil }
        let kk = Nanoseconds(k)
        guard fits(span, in: k) else {
            return frameStart &+ Nanoseconds((Double(index) * minimumIntervalNs).rounded(.up))
        }
        return frameStart &+ (Nanoseconds(index) &* span &+ kk &- 1) / kk
    }
}

/// The frame duration ``LowFramerateCompensation`` plans from, learnt from commit times: the
/// shorter of the last two commit intervals (the only one after the second commit; 0 before).
/// One late frame makes one long interval; planning repeats from it alone would put a repeat in
/// the middle of the next frame, which then waits for the panel's shortest refresh after the
/// repeat (a second hitch behind the first). A content cadence below the panel's minimum makes
/// both intervals long. The fake display and KMSDisplay's repeats both keep one.
public struct CommitCadence: Sendable, Equatable {
    /// When the last frame was committed, nil before the first.
    public private(set) var lastCommit: Nanoseconds? = nil
    /// The duration to plan the current frame for (ns), 0 before the second commit.
    public private(set) var frameDuration: Nanoseconds = 0
    private var previousInterval: Nanoseconds = 0

    public init() {}

    /// A frame was committed at `t`.
    public mutating func committed(at t: Nanoseconds) {
        if let last = lastCommit {
            let interval = t - last
            frameDuration = previousInterval > 0 ? Swift.min(interval, previousInterval) : interval
            previousInterval = interval
        }
        lastCommit = t
    }
}
