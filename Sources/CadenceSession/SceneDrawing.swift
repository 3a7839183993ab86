import CadenceCore
import Scenes

extension SceneContext {
    /// The scene context of the frame a pacer's renderer is asked to draw (`PacingRun`,
    /// `FrameRenderer`): its index, time and rates, unchanged.
    public init(_ frame: FrameContext) {
        self.init(
            frameIndex: frame.frameIndex, time: frame.time, refreshHz: frame.refreshHz,
            effectiveRateHz: frame.effectiveRateHz)
    }

    /// The scene context of a display link's callback: the callback's index as the frame index,
    /// at the link's rate (the display's refresh is the rate times its refreshes per frame; the
    /// time is the frame index over the rate).
    public init(_ update: DisplayLinkUpdate) {
        let rate = update.rate
        self.init(
            frameIndex: update.callbackIndex, refreshHz: rate.hz * Double(max(1, rate.refreshesPerFrame)),
            effectiveRateHz: rate.hz)
    }
}

extension SceneRenderer {
    /// Draws the scene into a display's surface (a drawable's canvas, a shadow buffer), so a
    /// display link draws a scene in one line:
    /// `renderer.render(into: update.drawable.canvas, context: SceneContext(update))`.
    public func render(into surface: PixelSurface, context: SceneContext, hud: HUDStats? = nil, identity: Bool = false)
    {
        render(
            base: surface.base, width: surface.width, height: surface.height, stride: surface.stride, context: context,
            hud: hud, identity: identity)
    }
}
