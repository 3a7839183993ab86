import CadenceCore
import DRM

/// One writeback capture: what Cadence rendered for a frame and what the writeback connector
/// wrote for it, both XRGB8888, `width` pixels a row, no padding.
public struct WritebackCapture: Sendable {
    /// The frame captured.
    public var frame: FrameID
    /// The label the caller gave the frame when it asked for the capture (its frame index).
    public var label: Int
    public var width: Int
    public var height: Int
    /// Cadence's own render of the frame (the shadow buffer as copied for scanout); when
    /// capturing on a mismatch, the copy kept for its job (empty when none was free).
    public var rendered: [UInt32]
    /// The connector's output, read once from the capture buffer after its fence signalled.
    public var captured: [UInt32]
    /// Why the CRC flagged the frame, when capturing on a mismatch (nil: a scheduled capture).
    public var reason: FlaggedCapture.Reason?
    /// The vblank of the change without a flip that flagged it.
    public var changeVBlank: UInt64?
}

/// Why writeback capture cannot run on a display.
public enum WritebackUnavailable: Error, Equatable, Sendable, CustomStringConvertible {
    /// The driver lists no writeback connector (bochs-drm, virtio_gpu, or a kernel without the cap).
    case noConnector(driver: String)
    /// None of the driver's writeback connectors can write the CRTC in use.
    case notForCRTC(driver: String, crtcIndex: Int)
    /// The writeback connector's encoder and the display's do not clone each other
    /// (`possible_clones`): the kernel refuses the two on one CRTC. `cloning` holds the display's
    /// encoder first, the writeback connector's second.
    case cannotClone(writeback: String, connector: String, cloning: EncoderCloning)
    /// The connector writes no XRGB8888.
    case noFormat(driver: String, formats: [String])
    /// The display flips with the legacy API: writeback needs atomic commits.
    case legacyAPI
    /// A call failed (attaching the connector, allocating the capture buffers).
    case failed(DRMError)

    /// One line.
    public var description: String {
        switch self {
        case .noConnector(let driver): return "\(driver) has no writeback connector"
        case .notForCRTC(let driver, let i): return "no writeback connector of \(driver) can write CRTC index \(i)"
        case .cannotClone(let wb, let connector, let c):
            func hex(_ v: UInt32) -> String { "0x" + String(v, radix: 16) }
            let masks = c.possibleClones.map(hex)
            return
                "\(wb) cannot share a CRTC with \(connector): their encoders do not clone each other (possible_clones: \(connector)'s \(masks.first ?? "?"), \(wb)'s \(masks.last ?? "?"); both need \(hex(c.mask)))"
        case .noFormat(let driver, let formats):
            return "the writeback connector of \(driver) writes no XRGB8888 (only \(formats.joined(separator: " ")))"
        case .legacyAPI: return "writeback needs atomic commits (the display uses the legacy API)"
        case .failed(let e): return e.description
        }
    }
}

/// What the capture path did over a run (``KMSDisplay/finishWriteback()``).
public struct WritebackStatistics: Equatable, Sendable {
    /// Captures delivered.
    public var captures = 0
    /// Frames asked for but not captured: no free capture buffer, or never flipped.
    public var skipped = 0
    /// Captures whose fence had not signalled 3 refreshes after the last flip.
    public var timedOut = 0
    /// Time reading capture buffers back and copying renders, in µs.
    public var readMicroseconds = 0.0
    /// Capturing on a mismatch: the ring's counts (nil for scheduled captures; its `flagged`
    /// list is left to the checker, which decodes the captures).
    public var onMismatch: OnMismatchCaptures?
    /// Capturing on a mismatch: frames the early CRC verdicts called stale, captured or not (to
    /// count, at the end, the stale frames the full verdict found and the early one missed).
    public var earlyStaleFlags = 0
    /// Statistics with nothing done.
    public init() {}
}

/// One capture buffer's job while capturing on a mismatch: its frame, the vblank its flip
/// latched at (once known), its fence, and what the CRC's early verdict said.
struct RingJob {
    var frame: FrameID
    var label: Int
    var buffer: Int
    /// Its render's copy (``WritebackState/renders``), nil when none was free.
    var render: Int?
    var fence: WritebackFence?
    var sequence: UInt64?
    /// The early verdict came and did not flag it.
    var judged = false
    var reason: FlaggedCapture.Reason?
    var changeVBlank: UInt64?

    /// The connector has written the buffer (or never will: no fence).
    var written: Bool { (try? fence?.wait(timeoutNs: 0)) ?? true }
}

/// The writeback connector, its capture buffers and the captures in flight.
final class WritebackState {
    let connector: WritebackConnector
    let buffers: [ScanoutBuffer]
    var free: [Int]
    let slot = WritebackFenceSlot()
    let request: () -> Int?
    let deliver: (WritebackCapture) -> Void
    var kept: [FrameID: (label: Int, pixels: [UInt32])] = [:]
    var planned: (frame: FrameID, buffer: Int, label: Int, pixels: [UInt32])?
    var pending: [(frame: FrameID, label: Int, pixels: [UInt32], buffer: Int, fence: WritebackFence?)] = []
    var stats = WritebackStatistics()
    var readNs: Int64 = 0
    /// Capturing on a mismatch: a job on every flip, read only when the CRC flags its frame.
    let onMismatch: Bool
    /// Its jobs not read or recycled yet, in flip order.
    var ring: [RingJob] = []
    var counts = OnMismatchCaptures()
    /// Capturing on a mismatch: copies of the renders of the frames kept, planned or in the ring
    /// (allocated once, ``KMSDisplay/mismatchRing`` + 3), the free ones, and each kept or
    /// planned frame's.
    var renders: [[UInt32]] = []
    var freeRenders: [Int] = []
    var renderOf: [FrameID: Int] = [:]

    init(
        connector: WritebackConnector, buffers: [ScanoutBuffer], onMismatch: Bool, request: @escaping () -> Int?,
        deliver: @escaping (WritebackCapture) -> Void
    ) {
        self.connector = connector
        self.buffers = buffers
        self.onMismatch = onMismatch
        counts.ring = buffers.count
        free = Array(buffers.indices.reversed())
        self.request = request
        self.deliver = deliver
    }
}
