/// The one seam between the pacing core and a display.
///
/// The pacing core (``DisplayLink``, presentation, accounting) talks only to this protocol.
/// `KMSDisplay` implements it over a real DRM/KMS device; ``FakeDisplay`` implements it on
/// virtual time so that every pacing rule is tested without sleeping.
///
/// All times are nanoseconds on `CLOCK_MONOTONIC` (or the fake display's virtual clock).

/// Nanoseconds on the display's monotonic clock.
public typealias Nanoseconds = Int64

/// One vertical blank as the kernel reported it.
public struct VBlank: Equatable, Hashable, Sendable {
    /// The CRTC's vblank counter (64-bit, widened from the kernel's 32-bit page-flip sequence).
    public var sequence: UInt64
    /// Kernel timestamp of the vblank.
    public var timestamp: Nanoseconds
    public init(sequence: UInt64, timestamp: Nanoseconds) {
        self.sequence = sequence
        self.timestamp = timestamp
    }
}

/// Identifies a submitted frame across submit and completion.
public typealias FrameID = UInt64

/// Why a backend could not take or show a frame.
public enum BackendFailure: Error, Equatable, Sendable {
    /// The display still had a flip pending (EBUSY).
    case busy
    /// The device went away (ENODEV, unplug, lost DRM master).
    case deviceLost(String)
    /// The mode changed under us; refresh values must be re-read.
    case modeChanged
    /// Anything else, with a one-line description.
    case other(String)
}

/// What a backend reports back to the pacing core.
public enum BackendEvent: Equatable, Sendable {
    /// `frame` reached the screen at `vblank`; the event was received at `receivedAt`.
    case presented(frame: FrameID, vblank: VBlank, receivedAt: Nanoseconds)
    /// `frame` was replaced or dropped before it was ever scanned out.
    case discarded(frame: FrameID)
    /// A vblank passed (reported when one was requested with ``DisplayBackend/requestVBlank(after:)``).
    case vblank(VBlank)
    /// A submitted frame (or the display itself, when `frame` is nil) failed.
    case failed(frame: FrameID?, BackendFailure)
}

/// A CPU-writable XRGB8888 pixel surface: the cached shadow buffer a frame is drawn into.
public struct PixelSurface: @unchecked Sendable {
    public var base: UnsafeMutableRawPointer
    public var width: Int
    public var height: Int
    /// Bytes per row.
    public var stride: Int
    public init(base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int) {
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
    }
}

/// A display the pacing core can drive.
public protocol DisplayBackend: AnyObject {
    /// Short name for reports: "kms" or "fake".
    var name: String { get }
    /// Nominal refresh duration in nanoseconds, exact from the mode (16_683_350.0 for 59.94 Hz).
    var refreshInterval: Double { get }
    /// Variable-refresh range in Hz, if the panel has one.
    var vrrRange: ClosedRange<Double>? { get }
    /// False when the driver has no vblank interrupt (bochs, virtio-gpu): flip timestamps are
    /// then commit-completion times and sequence numbers carry no information.
    var hasHardwareVBlank: Bool { get }
    /// The shadow surface the next frame is drawn into, or nil when the backend keeps no pixels.
    var surface: PixelSurface? { get }

    /// The current time.
    func now() -> Nanoseconds
    /// The most recent vblank.
    func lastVBlank() throws -> VBlank
    /// Queue `frame` (the current contents of ``surface``) for vblank `targetSequence`, or for
    /// the next vblank when nil. A target already in the past means "as soon as possible".
    /// Completion arrives later as `.presented`, `.discarded` or `.failed`.
    func submit(frame: FrameID, targetSequence: UInt64?) throws
    /// Ask for a `.vblank` event for the first vblank whose sequence is greater than `sequence`.
    func requestVBlank(after sequence: UInt64) throws
    /// Wait until at least one event is ready or `deadline` passes; returns the events in order.
    func waitForEvents(until deadline: Nanoseconds) throws -> [BackendEvent]
    /// Occupy the CPU until `deadline` (stands for rendering work): virtual time on the fake
    /// display, a real busy wait on KMS.
    func spin(until deadline: Nanoseconds)
}
