import CadenceCore
import Foundation

/// The live status line (at most one per wall-clock second: a virtual-time run produces many
/// display seconds per real second, and the latest one is shown) and a line at each
/// seat-session pause and resume (also when quiet: an event, not the live line). Lines go to
/// ``SinkContext/notice(_:)``, prefixed with the output's name in a run over several.
///
/// Failure rule: none (a notice that cannot be shown is lost).
public final class StatusSink: FrameSink {
    private let quiet: Bool
    private var lastStatusWall = Date()
    private var context: SinkContext?

    /// `quiet`: no status lines, only the session events.
    public init(quiet: Bool) { self.quiet = quiet }

    /// Starts the wall-clock second.
    public func open(_ context: SinkContext) {
        self.context = context
        lastStatusWall = Date()
    }

    /// No use for frames: the status carries the totals.
    public func frame(_ report: FrameReport) {}

    /// Shows ``statusLine(_:)``, at most once a wall-clock second.
    public func status(_ status: RunStatus) {
        guard !quiet, let context else { return }
        let now = Date()
        if now.timeIntervalSince(lastStatusWall) < 1 { return }
        lastStatusWall = now
        context.notice(((context.outputName ?? context.connector).map { "\($0): " } ?? "") + Self.statusLine(status))
    }

    /// Says that the session paused or resumed.
    public func sessionChange(_ change: SessionChange) {
        context?.notice(
            change.event == .paused
                ? "session paused (VT switched away): no frames until it comes back"
                : String(
                    format: "session resumed after %.3f s: mode restored, pacing again", Double(change.gapNs ?? 0) / 1e9
                ))
    }

    /// The live status line: seconds, frames per second, the intended rate, drops and hitch.
    public static func statusLine(_ s: RunStatus) -> String {
        if s.sessionPaused {
            return String(
                format: "[%7.1f s] session paused (VT switched away)  dropped %d refreshes in %d events before it",
                s.elapsedSeconds, s.droppedRefreshes, s.dropEvents)
        }
        return String(
            format: "[%7.1f s] %6.1f fps  effective %.3f Hz  dropped %d refreshes in %d events  hitch %.2f ms/s",
            s.elapsedSeconds, s.fps, s.effectiveRateHz, s.droppedRefreshes, s.dropEvents, s.hitchTimeRatio)
    }
}
