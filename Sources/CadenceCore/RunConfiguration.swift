/// What a scenario run asks of the pacing core: one display link's rate, presentation mode and
/// latency, when to stop, and scripted lateness or rendering cost to test the accounting with.
public struct RunConfiguration: Equatable, Sendable {
    /// The display link's frame-rate range.
    public var range: FrameRateRange
    /// Present every frame with `present(afterMinimumDuration:)`, this long after the previous one.
    public var minimumDuration: Nanoseconds?
    /// Content frame n is presented at t0 + n/contentRate with `present(at:)` (Hz).
    public var contentRate: Double?
    /// Where ``contentRate``'s content clock stands when the run starts; nil (the usual start):
    /// t0 is the first frame's target and frame n is content frame n.
    public var contentClock: ContentClock?
    /// A replay of a later file of a rotated run log: the pacer's prediction state to restore
    /// when the callback the run began with that state begins (``PacerState``). Nil in a run.
    public var restoredPacerState: PacerStateRestore? = nil
    /// A replay of a later file of a rotated run log: when the run had last reported its status
    /// as the callback the replay starts at began (``FrameReport/statusTime``): the replay's
    /// status, and the loop's waits bounded by it, come when the run's did. Nil in a run (its
    /// status clock starts when it does).
    public var restoredStatusTime: Nanoseconds? = nil
    /// Frame latency 1–3.
    public var latency: Int
    /// Stop after this many frames.
    public var frames: Int?
    /// Stop producing frames after this long.
    public var duration: Nanoseconds?
    /// Frame index → K (1…``maxInjectedLateness``): that frame's rendering ends K − ½ refreshes
    /// after its deadline.
    public var injectLate: [Int: Int]
    /// Commit margin before the target vblank (0 on the fake display).
    public var commitMargin: Nanoseconds
    /// Step the rate down when frames keep missing and back up when there is headroom (see
    /// ``RateAdaptation``).
    public var adapt: Bool
    /// Scripted rendering cost: frames in a span take at least that long to render.
    public var renderCost: [RenderCost]

    /// A configuration, each setting as its property describes; a setting not given keeps its
    /// default: the default range, latency 1, no stop, nothing injected, no commit margin, no
    /// adaptation. Nothing is checked until ``validate()``.
    public init(
        range: FrameRateRange = .default, minimumDuration: Nanoseconds? = nil, contentRate: Double? = nil,
        contentClock: ContentClock? = nil, latency: Int = 1, frames: Int? = nil, duration: Nanoseconds? = nil,
        injectLate: [Int: Int] = [:], commitMargin: Nanoseconds = 0, adapt: Bool = false,
        renderCost: [RenderCost] = []
    ) {
        self.range = range
        self.minimumDuration = minimumDuration
        self.contentRate = contentRate
        self.contentClock = contentClock
        self.latency = latency
        self.frames = frames
        self.duration = duration
        self.injectLate = injectLate
        self.commitMargin = commitMargin
        self.adapt = adapt
        self.renderCost = renderCost
    }

    /// The scripted rendering cost of frame `n`, if any (the last span that holds it wins).
    public func renderCost(of n: Int) -> Nanoseconds? {
        renderCost.last { $0.first <= n && n <= ($0.last ?? Int.max) }?.costNs
    }

    /// Largest K of ``injectLate`` (10,000 refreshes: 2¾ minutes at 60 Hz).
    public static let maxInjectedLateness = 10_000
    /// Largest ``minimumDuration`` (10 s): a frame duration, not a pause.
    public static let maxMinimumDuration: Nanoseconds = 10_000_000_000
    /// ``contentRate`` bounds in Hz.
    public static let contentRateRange = 0.1...10_000.0

    /// Why a configuration is unusable: which setting, and what is wrong with its value.
    /// ``description`` names the setting in words ("latency must be 1, 2 or 3"); a program with
    /// its own names for the settings (a command line's flags) puts them before ``problem``.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        /// A setting of ``RunConfiguration`` (or a combination that cannot go together).
        public enum Setting: String, Equatable, Sendable, CaseIterable {
            case range = "rate range"
            case minimumDuration = "minimum duration"
            case contentRate = "content rate"
            case latency
            case frames = "frame count"
            case duration
            /// ``RunConfiguration/minimumDuration`` and ``RunConfiguration/contentRate`` both set.
            case minimumDurationAndContentRate = "minimum duration and content rate"
            case injectLate = "injected lateness"
            case renderCost = "render cost"
        }
        /// The setting at fault.
        public var setting: Setting
        /// What is wrong, without the setting's name ("must be 1, 2 or 3").
        public var problem: String
        public init(_ setting: Setting, _ problem: String) {
            self.setting = setting
            self.problem = problem
        }
        /// The setting's name in words, then the problem.
        public var description: String { "\(setting.rawValue) \(problem)" }
    }

    /// Throws ``Invalid`` for values no run can use.
    public func validate() throws {
        do { try range.validate() } catch let e as FrameRateRange.Invalid {
            let text = e.description, name = Invalid.Setting.range.rawValue + " "
            throw Invalid(.range, text.hasPrefix(name) ? String(text.dropFirst(name.count)) : text)
        }
        if let d = minimumDuration, d < 0 || d > Self.maxMinimumDuration {
            throw Invalid(.minimumDuration, "must be 0 to 10000 ms")
        }
        if let c = contentRate, !Self.contentRateRange.contains(c) {
            throw Invalid(.contentRate, "must be a rate from 0.1 to 10000 Hz")
        }
        if !(1...3).contains(latency) { throw Invalid(.latency, "must be 1, 2 or 3") }
        if let f = frames, f <= 0 { throw Invalid(.frames, "must be positive") }
        if let d = duration, d <= 0 { throw Invalid(.duration, "must be positive") }
        if let c = contentClock {
            // Content frame times stay within 2^62 ns (146 years) of t0.
            guard c.firstFrame >= 0, Double(c.firstFrame) * 1e9 / (contentRate ?? 1) < 4.6e18 else {
                throw Invalid(.contentRate, "clock's first frame \(c.firstFrame) is out of range")
            }
        }
        if minimumDuration != nil && contentRate != nil {
            throw Invalid(.minimumDurationAndContentRate, "cannot be combined")
        }
        let most = Self.maxInjectedLateness
        for (f, k) in injectLate.sorted(by: { $0.key < $1.key }) where f < 0 || k < 1 || k > most {
            let rule = "the frame must be ≥ 0 and the refreshes 1 to \(most)"
            throw Invalid(.injectLate, "of frame \(f) by \(k) refreshes: \(rule)")
        }
        for c in renderCost where c.first < 0 || (c.last.map { $0 < c.first } ?? false) || c.costNs < 0 {
            throw Invalid(.renderCost, "\(c): the first frame must be ≥ 0, the last ≥ the first and the cost ≥ 0 ms")
        }
    }
}

/// A content clock picked up from another run (a replay of a later file of a rotated log):
/// frame n of this run is content frame `firstFrame + n`, presented at
/// `start + (firstFrame + n) / contentRate`.
public struct ContentClock: Equatable, Sendable {
    /// t0: when content frame 0 was due (display clock, ns).
    public var start: Nanoseconds
    /// The content frame this run's frame 0 is.
    public var firstFrame: Int

    public init(start: Nanoseconds, firstFrame: Int) {
        self.start = start
        self.firstFrame = firstFrame
    }
}

/// Frames `first...last` (`last` nil: to the end) take at least `costNs` to render.
public struct RenderCost: Codable, Equatable, Sendable, CustomStringConvertible {
    public var first: Int
    public var last: Int?
    public var costNs: Nanoseconds

    public init(first: Int, last: Int?, costNs: Nanoseconds) {
        self.first = first
        self.last = last
        self.costNs = costNs
    }

    /// `FIRST-LAST:MS`, `FIRST-:MS` (to the end) or `FRAME:MS` (one frame).
    public var description: String {
        let span = last == first ? "\(first)" : "\(first)-\(last.map(String.init) ?? "")"
        return "\(span):\(Double(costNs) / 1e6)"
    }
}
