/// What a display link's callback learns about the frame it should produce, and the drawable
/// to produce it in (`CADisplayLink` / `CAMetalDisplayLink.Update`).
public struct DisplayLinkUpdate: Equatable, Sendable {
    /// The timing of one callback, as the pacer planned it (times in ns on the display clock).
    struct Timing: Equatable, Sendable {
        var timestamp: Nanoseconds = 0
        /// The render deadline: the target presentation minus the commit margin.
        var deadline: Nanoseconds = 0
        var targetPresentationTimestamp: Nanoseconds = 0
        var targetSequence: UInt64 = 0
        /// One frame at the link's rate (ns).
        var frameInterval: Nanoseconds = 0
        /// The display's shortest refresh: 1 / its maximum rate (VRR: the range's maximum).
        var duration: Nanoseconds = 0
        var rate = EffectiveRate(hz: 60, refreshesPerFrame: 1, isVariable: false)
        var callbackIndex = 0
        var latency = 1
        var firedLate = false
    }
    var timing: Timing

    /// The frame to draw and present in this callback.
    public let drawable: Drawable

    init(timing: Timing, drawable: Drawable) {
        self.timing = timing
        self.drawable = drawable
    }

    /// Kernel timestamp of the last vblank when the callback runs (under VRR: the time it runs).
    /// A callback that runs late (see ``FrameReport/schedulerDelay``) reports the vblank it woke
    /// after, not the one it was planned at.
    public var timestamp: DisplayInstant { DisplayInstant(nanoseconds: timing.timestamp) }
    /// When the next frame at the link's rate is displayed, as `CADisplayLink.targetTimestamp`:
    /// ``timestamp`` plus one frame interval, so that `targetTimestamp − timestamp` is the link's
    /// actual frame duration (1 / its effective rate) at every frame latency. At latency 1 it is
    /// ``targetPresentationTimestamp``; at latency 2–3 the frame drawn now is shown
    /// `latency − 1` frames later. After a frame shown late (under VRR: the panel was still in a
    /// refresh) the callbacks run as much later while the presentations keep the link's cadence,
    /// so until the link is back on it ``targetPresentationTimestamp`` is earlier than this by
    /// that lateness. The render deadline is ``deadline``.
    public var targetTimestamp: DisplayInstant { DisplayInstant(nanoseconds: timing.timestamp &+ timing.frameInterval) }
    /// The render deadline: a frame presented by then is shown at
    /// ``targetPresentationTimestamp`` (that time minus the commit margin: about 1 ms on KMS,
    /// 0.1 ms under VRR, 0 on the fake display). Until 0.x this was `targetTimestamp`.
    public var deadline: DisplayInstant { DisplayInstant(nanoseconds: timing.deadline) }
    /// When the frame produced now is meant to reach the screen.
    public var targetPresentationTimestamp: DisplayInstant { DisplayInstant(nanoseconds: timing.targetPresentationTimestamp) }
    /// Vblank sequence of ``targetPresentationTimestamp`` (fixed refresh; estimated under VRR).
    public var targetSequence: UInt64 { timing.targetSequence }
    /// The time between frames at the display's maximum rate, as `CADisplayLink.duration`
    /// ("the amount of time between frames at the maximumFramesPerSecond"): one refresh of a
    /// fixed-refresh display, 1 / the VRR range's maximum under VRR. The link's own frame
    /// duration is `targetTimestamp − timestamp`.
    public var duration: Duration { .nanoseconds(timing.duration) }
    /// The rate the link currently runs at.
    public var rate: EffectiveRate { timing.rate }
    /// Counts this link's callbacks from 0.
    public var callbackIndex: Int { timing.callbackIndex }
    /// Frame latency in effect (1–3).
    public var latency: Int { timing.latency }
    /// True when the callback fired later than planned because the loop was busy (the previous
    /// frame overran): it fires at once instead of waiting for a vblank.
    public var firedLate: Bool { timing.firedLate }
}

/// A per-frame callback aligned to vblanks, at a rate chosen from ``preferredFrameRateRange``
/// (see ``EffectiveRate/select(for:refreshHz:vrr:)``). Add it to a ``FramePacer`` to start it.
///
/// The callback fires `latency` frames before the frame's target presentation; whatever it
/// presents through ``FramePacer/present(intent:update:frameIndex:renderStart:renderEnd:)`` is
/// aimed at ``DisplayLinkUpdate/targetPresentationTimestamp``.
public final class DisplayLink {
    /// Called once per frame on the pacer's thread.
    public typealias Handler = (DisplayLinkUpdate) -> Void

    /// Frame-rate range; a change takes effect at the next callback.
    public var preferredFrameRateRange: FrameRateRange {
        didSet { if preferredFrameRateRange != oldValue { rateDirty = true } }
    }
    /// Pipelining depth 1–3: how many frames ahead of its presentation a frame is started.
    public var preferredFrameLatency: Int {
        didSet { preferredFrameLatency = Swift.min(3, Swift.max(1, preferredFrameLatency)) }
    }
    /// A paused link gets no callbacks; on resume it restarts at the next vblank.
    public var isPaused: Bool = false {
        didSet { if oldValue && !isPaused { needsReanchor = true } }
    }
    /// False after ``invalidate()``.
    public private(set) var isValid = true

    /// The callback; may be replaced (e.g. once `self` can be captured) before the link is added.
    public var handler: Handler
    var rate = EffectiveRate(hz: 60, refreshesPerFrame: 1, isVariable: false)
    var rateDirty = true
    var needsReanchor = true
    /// Fixed refresh: target presentation sequence of the next callback.
    var nextTargetSequence: UInt64 = 0
    /// VRR: target presentation time of the next callback.
    var nextTargetTime: Nanoseconds = 0
    var callbacks = 0
    /// Whether the last callback presented a frame (late callbacks then fire at once instead of
    /// skipping, so that the frame after an overrun is not held back further).
    var lastCallbackPresented = false
    /// Presenting every callback since the link was (re)anchored: its frames are due one frame
    /// interval after each other (see ``FrameReport/cadenceRefreshes``).
    var steadyCadence = false
    /// The callback was held back while earlier frames were pending.
    var heldByPendingFlip = false
    /// When the last callback's own work ended: the copy of the frame it presented (a commit
    /// that returns late, the process stopped inside it, is not the callback's work), or the
    /// callback's return when it presented nothing.
    var lastHandlerEnd: Nanoseconds = .min
    /// The frame whose predicted latch (the vblank counter had passed its target when the
    /// callback returned) pushed ``nextTargetSequence`` back, with the target it would have had
    /// and the latch assumed: if that frame latches earlier (it was committed before those
    /// vblanks and the process was then held up), the target is pulled back at its completion.
    var pushedBy: (frame: FrameID, unpushed: UInt64, latch: UInt64, pushed: UInt64)?
    /// The latency the next callback is planned with.
    var plannedLatency = 1
    /// The display given to ``init(display:preferredFrameRateRange:preferredFrameLatency:_:)``.
    let display: (any DisplayBackend)?
    /// The pacer running this link (created by the first `run` when the link has a display).
    var pacer: FramePacer?
    /// The first error the callback threw; it ends the run, which rethrows it.
    var callbackError: (any Error)?

    public init(preferredFrameRateRange: FrameRateRange = .default, preferredFrameLatency: Int = 1, handler: @escaping Handler) {
        self.preferredFrameRateRange = preferredFrameRateRange
        self.preferredFrameLatency = Swift.min(3, Swift.max(1, preferredFrameLatency))
        self.handler = handler
        display = nil
    }

    /// A link that drives `display` (`CAMetalDisplayLink`): `body` runs once per frame with the
    /// frame's ``DisplayLinkUpdate/drawable``; start it with ``run(for:)`` (or iterate
    /// ``updates`` instead of giving a body). An error thrown by `body` ends the run, and `run`
    /// rethrows it after the frames already presented have completed.
    ///
    ///     let link = DisplayLink(display: FakeDisplay(refreshHz: 120),
    ///                            preferredFrameRateRange: .init(minimum: 30, maximum: 120, preferred: 60)) { update in
    ///         update.drawable.present()
    ///     }
    ///     let result = try link.run(for: .seconds(10))
    public init(display: any DisplayBackend, preferredFrameRateRange: FrameRateRange = .default, preferredFrameLatency: Int = 1,
                _ body: @escaping (DisplayLinkUpdate) throws -> Void = { $0.drawable.present() }) {
        self.preferredFrameRateRange = preferredFrameRateRange
        self.preferredFrameLatency = Swift.min(3, Swift.max(1, preferredFrameLatency))
        self.display = display
        handler = { _ in }
        handler = { [unowned self] update in
            guard self.callbackError == nil else { return }
            do { try body(update) } catch { self.callbackError = error }
        }
    }

    /// Stops the link for good; the pacer drops it.
    public func invalidate() { isValid = false }

    /// The rate the link runs at now (after its last callback).
    public var effectiveRate: EffectiveRate { rate }
}
