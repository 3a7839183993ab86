import CadenceCore
import Scenes

/// The figures of the performance HUD (`cadence run --hud`): the renderer creates ``stats``
/// at the first frame (when the rates are known) and draws them over each frame; every
/// completed frame adds its dropped refreshes and, when shown, its interval.
///
/// Failure rule: none.
public final class HUDSink: FrameSink {
    /// The HUD's figures (nil until the renderer starts them).
    public var stats: HUDStats?

    /// No figures yet.
    public init() {}

    /// Adds a completed frame: its dropped refreshes and, when shown, its interval.
    public func frame(_ report: FrameReport) {
        guard stats != nil else { return }
        stats!.droppedRefreshes += report.droppedRefreshes
        if report.wasPresented && report.interval > 0 { stats!.recordFrame(intervalMs: Double(report.interval) / 1e6) }
    }
}
