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
    /// Cadence's own render of the frame (the shadow buffer as copied for scanout).
    public var rendered: [UInt32]
    /// The connector's output, read once from the capture buffer after its fence signalled.
    public var captured: [UInt32]
}

/// Why writeback capture cannot run on a display.
public enum WritebackUnavailable: Error, Equatable, Sendable, CustomStringConvertible {
    /// The driver lists no writeback connector (bochs-drm, virtio_gpu, or a kernel without the cap).
    case noConnector(driver: String)
    /// None of the driver's writeback connectors can write the CRTC in use.
    case notForCRTC(driver: String, crtcIndex: Int)
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
    public init() {}
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

    init(
        connector: WritebackConnector, buffers: [ScanoutBuffer], request: @escaping () -> Int?,
        deliver: @escaping (WritebackCapture) -> Void
    ) {
        self.connector = connector
        self.buffers = buffers
        free = Array(buffers.indices.reversed())
        self.request = request
        self.deliver = deliver
    }
}

extension KMSDisplay {
    /// Starts writeback capture: finds a writeback connector for the CRTC that writes
    /// XRGB8888, allocates two capture buffers of the mode's size, and attaches the connector
    /// (a modeset, ALLOW_MODESET, done once now: start a CRC capture after this, not before).
    ///
    /// From then on, when a frame is finished, `request` is asked for its label (the frame
    /// index; nil: not to be captured); a labelled frame's render is kept, its flip commit
    /// also sets `WRITEBACK_FB_ID` and the out fence, the fence is polled beside the flip
    /// events, and once it signals `deliver` gets the render and the capture.
    public func startWriteback(
        request: @escaping () -> Int?, deliver: @escaping (WritebackCapture) -> Void
    ) throws(WritebackUnavailable) {
        guard output.api != .legacy else { throw .legacyAPI }
        let driver = (try? device.version().name) ?? "this driver"
        let list: [WritebackConnector]
        do {
            try device.enableWriteback()
            list = try device.writebackConnectors()
        } catch {
            throw .noConnector(driver: driver)
        }
        guard !list.isEmpty else { throw .noConnector(driver: driver) }
        guard let wb = list.first(where: { $0.canWrite(crtcIndex: output.crtcIndex) }) else {
            throw .notForCRTC(driver: driver, crtcIndex: output.crtcIndex)
        }
        guard wb.formats.contains(.xrgb8888) else {
            throw .noFormat(driver: driver, formats: wb.formats.map(\.description))
        }
        do {
            let buffers = try (0..<2).map { _ in
                try ScanoutBuffer(dumbOn: device, width: shadow.width, height: shadow.height)
            }
            try device.atomicCommit([wb.attach(to: output.crtc)], flags: .allowModeset, object: wb.name)
            writeback = WritebackState(connector: wb, buffers: buffers, request: request, deliver: deliver)
        } catch let e as DRMError {
            throw .failed(e)
        } catch {
            throw .failed(DRMError(call: "writeback", object: wb.name, errno: .ioError))
        }
    }

    /// True while ``startWriteback(request:deliver:)`` runs.
    public var isCapturingWriteback: Bool { writeback != nil }

    /// At finish: keeps the render of a frame the caller wants captured.
    func keepForCapture(_ frame: FrameID) {
        guard let w = writeback, let label = w.request() else { return }
        let t0 = device.monotonicNow()
        var pixels = [UInt32](repeating: 0, count: shadow.width * shadow.height)
        pixels.withUnsafeMutableBytes { dst in
            for y in 0..<shadow.height {
                (dst.baseAddress! + y * shadow.width * 4).copyMemory(
                    from: shadow.pixels + y * shadow.stride, byteCount: shadow.width * 4)
            }
        }
        w.kept[frame] = (label, pixels)
        w.readNs += device.monotonicNow() - t0
    }

    /// The writeback properties for the flip of `frame` (none when it is not to be captured,
    /// or no capture buffer is free: then it is skipped).
    func captureProperties(_ frame: FrameID) -> [AtomicProperty] {
        guard let w = writeback else { return [] }
        if let p = w.planned {
            // The last planned commit failed: its buffer is free again.
            w.free.append(p.buffer)
            w.planned = nil
        }
        guard let k = w.kept.removeValue(forKey: frame) else { return [] }
        guard let b = w.free.popLast() else {
            w.stats.skipped += 1
            return []
        }
        w.planned = (frame, b, k.label, k.pixels)
        return w.connector.capture(into: w.buffers[b].framebuffer, fence: w.slot)
    }

    /// After a successful flip commit: the planned capture is in flight with its fence; kept
    /// renders of earlier frames will never be flipped (skipped).
    func captureCommitted(_ frame: FrameID) {
        guard let w = writeback else { return }
        for old in w.kept.keys where old < frame {
            w.kept[old] = nil
            w.stats.skipped += 1
        }
        guard let p = w.planned, p.frame == frame else { return }
        w.planned = nil
        w.pending.append((p.frame, p.label, p.pixels, p.buffer, w.slot.take(device: device)))
    }

    /// Delivers every capture whose fence has signalled (without waiting).
    func pollCaptures(timeoutNs: Int64 = 0) {
        guard let w = writeback, !w.pending.isEmpty else { return }
        var i = 0
        while i < w.pending.count {
            let p = w.pending[i]
            let done = (try? p.fence?.wait(timeoutNs: timeoutNs)) ?? true
            guard done == true else {
                i += 1
                continue
            }
            w.pending.remove(at: i)
            let t0 = device.monotonicNow()
            let b = w.buffers[p.buffer]
            var captured = [UInt32](repeating: 0, count: b.width * b.height)
            captured.withUnsafeMutableBytes { dst in
                for y in 0..<b.height {
                    (dst.baseAddress! + y * b.width * 4).copyMemory(
                        from: b.pixels + y * b.stride, byteCount: b.width * 4)
                }
            }
            w.readNs += device.monotonicNow() - t0
            w.free.append(p.buffer)
            w.stats.captures += 1
            w.deliver(
                WritebackCapture(
                    frame: p.frame, label: p.label, width: b.width, height: b.height, rendered: p.pixels,
                    captured: captured))
        }
    }

    /// Ends the capture: waits up to 3 refreshes for the fences still pending, delivers those
    /// captures, detaches the connector and returns what was done (nil when none ran).
    public func finishWriteback() -> WritebackStatistics? {
        guard let w = writeback else { return nil }
        let give = device.monotonicNow() + Int64(3 * refreshInterval)
        while !w.pending.isEmpty, device.monotonicNow() < give {
            pollCaptures(timeoutNs: min(1_000_000, max(0, give - device.monotonicNow())))
        }
        w.stats.timedOut = w.pending.count
        w.stats.skipped += w.kept.count
        w.stats.readMicroseconds = Double(w.readNs) / 1e3
        let stats = w.stats
        stopWriteback()
        return stats
    }

    /// Detaches the writeback connector (before the CRTC is restored) and frees the buffers.
    func stopWriteback() {
        guard let w = writeback else { return }
        try? device.atomicCommit([w.connector.attach(to: CRTCID(0))], flags: .allowModeset, object: w.connector.name)
        writeback = nil
    }
}
