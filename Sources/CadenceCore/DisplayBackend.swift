/// The one seam between the pacing core and a display.
///
/// The pacing core (``DisplayLink``, ``FramePacer``, accounting) talks only to this protocol.
/// `KMSDisplay` implements it over a real DRM/KMS device; ``FakeDisplay`` implements it on
/// virtual time so that every pacing rule is tested without sleeping.
///
/// The contract is the kernel's page-flip model, so that the fake display and KMS behave alike:
///
/// - **Fixed refresh** (``DisplayBackend/vrrRange`` is nil): vblanks come every
///   ``DisplayBackend/refreshInterval``. A flip submitted at time *t* latches at the first
///   vblank after *t* (plus whatever the driver needs to arm it) and completes there: the
///   backend then reports `.presented` with that vblank's kernel timestamp and sequence.
///   There is no way to ask for a later vblank: the pacing core holds a frame and submits it
///   in the refresh period before the vblank it wants (it learns about vblanks with
///   ``DisplayBackend/requestVBlank(after:)``).
/// - **Variable refresh** (``DisplayBackend/vrrRange`` non-nil): a flip starts a new refresh
///   as soon as it is submitted, but never sooner than `1/max` after the previous refresh; when
///   no flip comes within `1/min`, the panel repeats the current frame (a vblank without a
///   flip). Every refresh, repeated or not, advances the sequence.
/// - **One flip in flight per CRTC**: ``DisplayBackend/submit(frame:)`` while a flip is still
///   pending throws ``BackendFailure/busy`` (EBUSY), and the frame is not queued.
/// - Completion events for flips arrive in submission order. A flip whose event never comes
///   is the backend's fault; the pacing core times it out.
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
    /// The output was unplugged: its connector reports disconnected (a hotplug uevent), the
    /// string says which. Like ``deviceLost(_:)`` the display accepts nothing more, but the
    /// device itself (and its other outputs) may go on.
    case disconnected(String)
    /// The mode changed under us; ``DisplayBackend/refreshInterval`` and
    /// ``DisplayBackend/vrrRange`` must be re-read.
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
    /// A submitted frame (or the display itself, when `frame` is nil) failed. After
    /// `.failed(frame: nil, .deviceLost)` or `.failed(frame: nil, .disconnected)` the backend
    /// accepts nothing more.
    case failed(frame: FrameID?, BackendFailure)
    /// The display was taken away (a seat session disabled: VT switched away) at `at`. Frames
    /// in flight have resolved or never will; the backend accepts no flips until
    /// `.sessionResumed`.
    case sessionPaused(at: Nanoseconds)
    /// The display is back at `at` with the mode restored (a full modeset); `vblank` is the
    /// latest vblank, from which accounting starts again.
    case sessionResumed(at: Nanoseconds, vblank: VBlank)
}

/// A CPU-writable XRGB8888 pixel surface: the cached shadow buffer a frame is drawn into.
///
/// `@unchecked Sendable`: a value that only points at pixels; the backend hands a surface to
/// one frame at a time and takes it back (the copy to scanout) after that frame's render ends,
/// so the pixels are never written from two threads at once.
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

/// A display the pacing core can drive. See the top of this file for the flip model.
///
/// The pacing core calls it from one thread; implementations need no locking for that use.
public protocol DisplayBackend: AnyObject {
    /// Short name for reports: "kms" or "fake".
    var name: String { get }
    /// The CRTC being driven (KMS object id; 0 on the fake display). Goes into every log record.
    var crtcID: UInt32 { get }
    /// Nominal refresh duration in nanoseconds, exact from the mode (16_683_350.0 for 59.94 Hz).
    /// Under VRR this is the shortest refresh (1/max of ``vrrRange``).
    var refreshInterval: Double { get }
    /// Variable-refresh range in Hz when VRR is active, nil on a fixed-refresh mode.
    var vrrRange: ClosedRange<Double>? { get }
    /// False when the driver has no vblank interrupt (bochs, virtio-gpu): flip timestamps are
    /// then commit-completion times and sequence numbers carry no information.
    var hasHardwareVBlank: Bool { get }
    /// The shadow surface the next frame is drawn into, or nil when the backend keeps no pixels.
    /// Its contents are what ``submit(frame:)`` puts on screen.
    var surface: PixelSurface? { get }

    /// How many finished frames (see ``finish(frame:)``) the backend can hold besides the one on
    /// screen and the one in flight. The pacing core never queues more (frame latency ≤ 1 + this).
    var queueCapacity: Int { get }

    /// The current time.
    func now() -> Nanoseconds
    /// The most recent vblank.
    func lastVBlank() throws -> VBlank
    /// `frame` is completely drawn in ``surface``: keep its pixels (KMS copies the shadow surface
    /// into a free scanout buffer) so that the surface can be drawn again for the next frame.
    /// Called once per frame, before ``submit(frame:)``, which may come a few refreshes later
    /// (frame latency 2–3). A finished frame that is never submitted (the pacing core discarded it)
    /// is released when a later frame is submitted.
    func finish(frame: FrameID) throws
    /// Flip to `frame` (finished earlier with ``finish(frame:)``) at the next vblank (fixed refresh)
    /// or as soon as the panel allows (VRR). Throws ``BackendFailure/busy`` when a flip is still
    /// pending, ``BackendFailure/deviceLost(_:)`` when the device is gone. Completion arrives
    /// later as `.presented`, `.discarded` or `.failed`.
    func submit(frame: FrameID) throws
    /// Ask for one `.vblank` event for the first vblank whose sequence is greater than
    /// `sequence` (delivered at once, with the latest vblank, if that one has already passed).
    func requestVBlank(after sequence: UInt64) throws
    /// Wait until at least one event is ready or `deadline` passes, and append the ready events
    /// in order to `events` (the caller empties it and keeps its capacity, so that waiting does
    /// not allocate). Returns at `deadline` with nothing appended when nothing happened.
    func waitForEvents(until deadline: Nanoseconds, into events: inout [BackendEvent]) throws
    /// True when events are already read and waiting for this display, so that
    /// ``waitForEvents(until:into:)`` would return them at once: on a device shared by several
    /// outputs, another output's wait may have read them. ``PacingGroup`` serves such a display
    /// before it waits on any. False by default.
    var hasEventsReady: Bool { get }
    /// How long before a frame's target vblank a run should commit it on this display
    /// (``RunConfiguration/commitMargin``): the display's own policy, the same for one output or
    /// several. 0 by default (the fake display commits exactly at the deadline).
    var recommendedCommitMargin: Nanoseconds { get }
    /// Gives the display back: restores what it showed before (the console on KMS) and frees its
    /// buffers. Idempotent; a closed display accepts no more frames.
    func close() throws
}

/// A display that can stand for CPU work in simulations (injected lateness, replay): the fake
/// display jumps its virtual clock, KMS busy-waits. Inside the package only: it is a test and
/// benchmark tool, not part of the display contract.
extension DisplayBackend {
    /// A display of its own device never holds events another wait has read.
    public var hasEventsReady: Bool { false }
    /// No margin: the frame is committed at its deadline.
    public var recommendedCommitMargin: Nanoseconds { 0 }
}

package protocol WorkSimulating: DisplayBackend {
    /// Takes the time until `deadline` as rendering work would: a busy wait, or mostly a sleep
    /// where other threads need the CPU (KMSDisplay), or a jump of a virtual clock.
    func spin(until deadline: Nanoseconds)
}
