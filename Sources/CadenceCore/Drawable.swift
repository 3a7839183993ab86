/// The frame a display-link callback draws and presents (`CAMetalDrawable` on Linux KMS).
///
/// Each callback's ``DisplayLinkUpdate/drawable`` is a fresh frame: draw into ``canvas``, add
/// presented handlers if you want feedback, then call one of the `present` methods. The pacer
/// measures the render time itself (from the callback's start to `present`), holds the frame
/// until its vblank, and once the kernel's flip event (or a discard) decides its fate, sets
/// ``presentedTime`` and calls the handlers.
///
/// A drawable that is never presented is simply not shown (the callback produced no frame).
/// Presenting a drawable twice is a programming error and traps.
///
///     drawable.addPresentedHandler { d in print(d.drawableID, d.presentedTime) }
///     drawable.present(afterMinimumDuration: .milliseconds(33))
///
/// Drawables are recycled by the pacer once their frame is complete and nobody else holds them,
/// so that a steady run allocates no drawable per frame.
///
/// Thread-safety: a drawable belongs to the thread running its link. ``DisplayLink/updates``
/// hands it to the consuming task while that thread is parked waiting for the task to finish
/// with it, so the two never touch it at once (that handoff is why it is `@unchecked Sendable`).
public final class Drawable: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Identifies the drawable's frame: increases by one per link callback of the pacer, from 1.
    public private(set) var drawableID: UInt64 = 0
    /// The pixels to draw into: the display's shadow surface (XRGB8888). Empty (0×0) on a
    /// display that keeps no pixels (a ``FakeDisplay`` without a surface size).
    public private(set) var canvas: PixelSurface = .empty
    /// When the frame reached the screen: the kernel's vblank timestamp of its flip. ``DisplayInstant/zero``
    /// until then, and for good when the frame was discarded, failed or never presented
    /// (Apple's `presentedTime` = 0).
    public private(set) var presentedTime: DisplayInstant = .zero
    /// The complete record of the frame (outcome, lateness, drops, cause), once its fate is known.
    public private(set) var report: FrameReport?
    /// True once one of the `present` methods was called.
    public private(set) var isPresented = false

    /// The application's frame number, recorded in the frame's ``FrameReport/frameIndex`` and
    /// log (default: the link's callback index). Set it before presenting.
    public var frameIndex = 0

    weak var pacer: FramePacer?
    var update: DisplayLinkUpdate.Timing = .init()
    var renderStart: Nanoseconds = 0
    var frameID: FrameID = 0
    private var handlers: [(Drawable) -> Void] = []

    init() { handlers.reserveCapacity(2) }

    /// Presents at the frame's target: the link's ``DisplayLinkUpdate/targetPresentationTimestamp``.
    public func present() { submit(.nextOpportunity) }

    /// Presents at the vblank nearest to `time`, as Metal's `present(atTime:)` ("as close as
    /// possible"; an exact tie goes to the later vblank). `nearest: false`: the first vblank not
    /// before `time` (less the timestamp uncertainty), so that the frame never shows early.
    public func present(at time: DisplayInstant, nearest: Bool = true) {
        submit(.at(time.nanoseconds, nearest: nearest))
    }

    /// Presents no earlier than the previous frame's actual presentation plus `duration`.
    public func present(afterMinimumDuration duration: Duration) {
        submit(.afterMinimumDuration(Swift.max(0, duration.nanoseconds)))
    }

    /// Calls `handler` on the link's thread once the frame's fate is known: after its flip
    /// completed (``presentedTime`` set) or when it was discarded or failed (``presentedTime``
    /// stays ``DisplayInstant/zero``). Handlers added after that point run at once.
    public func addPresentedHandler(_ handler: @escaping (Drawable) -> Void) {
        if report != nil { handler(self); return }
        handlers.append(handler)
    }

    private func submit(_ intent: PresentIntent) {
        precondition(!isPresented, "drawable \(drawableID) was presented twice")
        isPresented = true
        guard let p = pacer else { return }
        p.present(drawable: self, intent: intent)
    }

    /// Binds a (fresh or recycled) drawable to a callback.
    func bind(pacer: FramePacer, id: UInt64, canvas: PixelSurface, timing: DisplayLinkUpdate.Timing, frameIndex: Int, renderStart: Nanoseconds) {
        self.pacer = pacer
        drawableID = id
        self.canvas = canvas
        update = timing
        self.frameIndex = frameIndex
        self.renderStart = renderStart
        presentedTime = .zero
        report = nil
        isPresented = false
        frameID = 0
        handlers.removeAll(keepingCapacity: true)
    }

    /// The frame is complete: record it and run the handlers.
    func complete(_ r: FrameReport) {
        report = r
        if r.wasPresented { presentedTime = DisplayInstant(nanoseconds: r.presentedTime) }
        var i = 0
        while i < handlers.count {
            handlers[i](self)
            i += 1
        }
        handlers.removeAll(keepingCapacity: true)
    }

    public static func == (a: Drawable, b: Drawable) -> Bool { a === b }
    public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
    public var description: String { "Drawable(\(drawableID), presentedTime: \(presentedTime))" }
}

extension PixelSurface {
    /// A 0×0 surface: the canvas of a display that keeps no pixels. Its base is never read.
    public static let empty = PixelSurface(base: UnsafeMutableRawPointer(bitPattern: 64)!, width: 0, height: 0, stride: 0)
}
