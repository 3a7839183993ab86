/// What a renderer is told about the frame it draws.
public struct FrameContext: Equatable, Sendable {
    /// Application frame number, from 0.
    public var frameIndex: Int
    /// Seconds from the first frame's target presentation to this frame's.
    public var time: Double
    /// When the frame is meant to be shown, and the render deadline (display clock, ns).
    public var targetPresentationTime: Nanoseconds
    public var deadline: Nanoseconds
    /// The display's refresh and the rate frames are produced at, Hz.
    public var refreshHz: Double
    public var effectiveRateHz: Double

    /// A context (for a renderer called outside a run: a test, a still picture).
    public init(
        frameIndex: Int, time: Double, targetPresentationTime: Nanoseconds, deadline: Nanoseconds, refreshHz: Double,
        effectiveRateHz: Double
    ) {
        self.frameIndex = frameIndex
        self.time = time
        self.targetPresentationTime = targetPresentationTime
        self.deadline = deadline
        self.refreshHz = refreshHz
        self.effectiveRateHz = effectiveRateHz
    }
}

/// Draws one frame into the backend's shadow surface.
public typealias FrameRenderer = (PixelSurface, FrameContext) -> Void

/// Once-a-second view of a run in progress (for a live status line).
public struct RunStatus: Equatable, Sendable {
    public var elapsedSeconds: Double
    /// Frames shown in the last second.
    public var fps: Double
    public var effectiveRateHz: Double
    public var droppedRefreshes: Int
    public var dropEvents: Int
    public var hitchTimeRatio: Double
    /// True while the seat session is paused (VT switched away).
    public var sessionPaused = false

    public init(elapsedSeconds: Double, fps: Double, effectiveRateHz: Double, droppedRefreshes: Int, dropEvents: Int, hitchTimeRatio: Double) {
        self.elapsedSeconds = elapsedSeconds
        self.fps = fps
        self.effectiveRateHz = effectiveRateHz
        self.droppedRefreshes = droppedRefreshes
        self.dropEvents = dropEvents
        self.hitchTimeRatio = hitchTimeRatio
    }
}

extension PixelSurface {
    /// Fills the whole surface with one XRGB8888 colour.
    public func fill(_ color: UInt32) {
        for y in 0..<height {
            let row = (base + y &* stride).assumingMemoryBound(to: UInt32.self)
            row.update(repeating: color, count: width)
        }
    }
}
