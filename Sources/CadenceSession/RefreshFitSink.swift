import CadenceCore

/// The CRTC's refresh measured during a run: a least-squares line through the (sequence,
/// kernel timestamp) of every shown frame, in constant memory. Every ``SessionSinks`` has one,
/// first, so that the sinks after it see a fit that includes the frame they receive.
public final class RefreshFitSink: FrameSink {
    private var fit = RefreshFit()
    /// False on drivers without a vblank interrupt (their sequences are synthetic): no fit.
    public private(set) var hardwareVBlank = true

    /// A fit with no frames yet.
    public init() {}

    /// Notes whether the display has a vblank interrupt.
    public func open(_ context: SinkContext) { hardwareVBlank = context.run.backend.hasHardwareVBlank }

    /// Adds a shown frame's sequence and timestamp.
    public func frame(_ report: FrameReport) {
        if report.wasPresented && report.sequence > 0 {
            fit.add(sequence: report.sequence, timestamp: report.presentedTime)
        }
    }

    /// The refresh in Hz (nil when unknown, and on drivers without a vblank interrupt).
    public var measuredRefreshHz: Double? {
        hardwareVBlank ? fit.hz : nil
    }
}
