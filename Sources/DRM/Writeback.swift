import SystemPackage

extension ClientCapability {
    /// Expose writeback connectors (DRM_CLIENT_CAP_WRITEBACK_CONNECTORS); the kernel refuses it
    /// (EINVAL) unless ``atomic`` is set on the same file first.
    public static let writebackConnectors = ClientCapability(rawValue: 5)
}

/// A writeback connector's atomic properties.
public struct WritebackProperties: Equatable, Sendable {
    /// `CRTC_ID`: the CRTC whose composed output it writes (attaching it changes the CRTC's
    /// connectors: a modeset).
    public var crtcID: PropertyID
    /// `WRITEBACK_FB_ID`: the framebuffer the next composition is written to (a writeback job
    /// runs only for a commit that sets it).
    public var framebufferID: PropertyID
    /// `WRITEBACK_OUT_FENCE_PTR`: the address of an s32 the kernel fills with a sync_file
    /// descriptor, signalled when the frame is written.
    public var outFencePointer: PropertyID
}

/// A writeback connector (DRM_MODE_CONNECTOR_WRITEBACK): the CRTC's composed output written to
/// a framebuffer. Listed only after ``DRMDevice/enableWriteback()``.
public struct WritebackConnector: Equatable, Sendable {
    /// DRM_MODE_CONNECTOR_WRITEBACK.
    public static let connectorType: UInt32 = 18

    /// The connector's object id.
    public var id: ConnectorID
    /// 1-based index among writeback connectors (the kernel names it `Writeback-<typeID>`).
    public var typeID: UInt32
    /// Bit i set: it can write the output of the i-th CRTC of ``CardResources/crtcs`` (the union
    /// of its encoders' possible CRTCs).
    public var possibleCRTCs: UInt32
    /// The formats it can write (`WRITEBACK_PIXEL_FORMATS`, a blob of u32 fourccs).
    public var formats: [PixelFormat]
    /// The CRTC it is attached to now (0: none).
    public var crtc: CRTCID
    /// Its atomic properties.
    public var properties: WritebackProperties
    /// Its encoders (the kernel gives a writeback connector one).
    public var encoders: [EncoderID] = []

    /// The kernel's name for it, `Writeback-1`.
    public var name: String { "\(Connector.typeName(Self.connectorType))-\(typeID)" }

    /// True when it can write the output of the CRTC at `crtcIndex`.
    public func canWrite(crtcIndex: Int) -> Bool { crtcIndex < 32 && possibleCRTCs & (1 << UInt32(crtcIndex)) != 0 }

    /// The properties of a commit that writes the next composition to `framebuffer`, its out
    /// fence going to `fence` (``WritebackFenceSlot``).
    public func capture(into framebuffer: FramebufferID, fence: WritebackFenceSlot) -> [AtomicProperty] {
        fence.reset()
        return [
            AtomicProperty(
                object: id.rawValue, property: properties.framebufferID, value: UInt64(framebuffer.rawValue)),
            AtomicProperty(object: id.rawValue, property: properties.outFencePointer, value: fence.address)
        ]
    }

    /// The property that attaches it to `crtc` (0: detaches it); needs an ALLOW_MODESET commit.
    public func attach(to crtc: CRTCID) -> AtomicProperty {
        AtomicProperty(object: id.rawValue, property: properties.crtcID, value: UInt64(crtc.rawValue))
    }
}

/// Encoders that would drive one CRTC together (a display's and a writeback connector's), and
/// whether the kernel lets them: its clone check (drm_atomic_helper_check_modeset, "failed valid
/// clone check") wants each to list all of them in `possible_clones`.
public struct EncoderCloning: Equatable, Sendable {
    /// The encoders.
    public var encoders: [EncoderID]
    /// Each one's `possible_clones` as the kernel reports it (bit i: the i-th encoder of
    /// ``CardResources/encoders``).
    public var possibleClones: [UInt32]
    /// Their own bits among the card's encoders.
    public var mask: UInt32

    /// True when every one of them clones all of them.
    public var allowed: Bool { possibleClones.allSatisfy { $0 & mask == mask } }
}

extension DRMDevice {
    /// Whether `encoders` can drive one CRTC together (``EncoderCloning``), from each one's
    /// `possible_clones` and its index among the card's encoders.
    public func cloning(_ encoders: [EncoderID]) throws -> EncoderCloning {
        let all = try resources().encoders
        var mask: UInt32 = 0
        for e in encoders {
            guard let i = all.firstIndex(of: e), i < 32 else {
                throw DRMError(call: "find encoder", object: "\(e)", errno: .noSuchFileOrDirectory)
            }
            mask |= 1 << UInt32(i)
        }
        return EncoderCloning(
            encoders: encoders, possibleClones: try encoders.map { try encoder($0).possibleClones }, mask: mask)
    }
}

/// The s32 a commit's `WRITEBACK_OUT_FENCE_PTR` points at: the kernel writes the out fence's
/// descriptor there during the commit. Allocated once and reused for every capture.
public final class WritebackFenceSlot {
    let pointer: UnsafeMutablePointer<Int32>

    public init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: -1)
    }

    deinit { pointer.deallocate() }

    /// The address passed as the property's value.
    public var address: UInt64 { UInt64(UInt(bitPattern: pointer)) }

    /// Sets the slot to -1 (no fence).
    public func reset() { pointer.pointee = -1 }

    /// The fence the last successful commit put there (nil: none), owned by the caller from
    /// now on (closed in its deinit); the slot is reset.
    public func take(device: DRMDevice) -> WritebackFence? {
        let fd = pointer.pointee
        pointer.pointee = -1
        return fd >= 0 ? WritebackFence(device: device, fd: fd) : nil
    }
}

/// A writeback job's out fence (a sync_file): readable once the frame has been written. Closed
/// in deinit.
public final class WritebackFence {
    let device: DRMDevice
    /// The sync_file descriptor.
    public let fileDescriptor: Int32

    init(device: DRMDevice, fd: Int32) {
        self.device = device
        fileDescriptor = fd
    }

    deinit { device.sys.closeFile(fileDescriptor) }

    /// Waits up to `timeoutNs` (0: not at all) for the fence; true once it has signalled.
    public func wait(timeoutNs: Int64 = 0) throws -> Bool {
        let sys = device.sys
        let fd = fileDescriptor
        return try retrying("poll(writeback fence)", "fence \(fd)") {
            try sys.pollFence(fd, timeoutNs: max(0, timeoutNs))
        }
    }
}

extension DRMDevice {
    /// Enables the atomic and writeback-connector client caps (writeback needs atomic).
    public func enableWriteback() throws {
        try enable(.atomic)
        try enable(.writebackConnectors)
    }

    /// The card's writeback connectors, in resource order (none before ``enableWriteback()``:
    /// the kernel hides them from clients without the cap).
    public func writebackConnectors() throws -> [WritebackConnector] {
        let res = try resources()
        var out: [WritebackConnector] = []
        for id in res.connectors {
            let c = try connector(id)
            guard c.type == WritebackConnector.connectorType else { continue }
            let props = try properties(of: id, type: .connector)
            func need(_ name: String) throws -> PropertyValue {
                guard let p = props.first(where: { $0.info.name == name }) else {
                    throw DRMError(call: "find property \(name)", object: c.name, errno: .invalidArgument)
                }
                return p
            }
            let crtcProp = try need("CRTC_ID")
            let formatsProp = try need("WRITEBACK_PIXEL_FORMATS")
            var formats: [PixelFormat] = []
            if formatsProp.value != 0 {
                let bytes = try blob(BlobID(UInt32(truncatingIfNeeded: formatsProp.value)))
                for i in stride(from: 0, to: bytes.count - bytes.count % 4, by: 4) {
                    var v: UInt32 = 0
                    for k in 0..<4 { v |= UInt32(bytes[i + k]) << UInt32(8 * k) }
                    formats.append(PixelFormat(rawValue: v))
                }
            }
            var possible: UInt32 = 0
            for e in c.encoders { possible |= (try? encoder(e).possibleCRTCs) ?? 0 }
            out.append(
                WritebackConnector(
                    id: id, typeID: c.typeID, possibleCRTCs: possible, formats: formats,
                    crtc: CRTCID(UInt32(truncatingIfNeeded: crtcProp.value)),
                    properties: WritebackProperties(
                        crtcID: crtcProp.info.id, framebufferID: try need("WRITEBACK_FB_ID").info.id,
                        outFencePointer: try need("WRITEBACK_OUT_FENCE_PTR").info.id),
                    encoders: c.encoders))
        }
        return out
    }

    /// The CRC sources the CRTC at `crtcIndex` offers, read from debugfs `crtc-M/crc/control`
    /// (one per line, the selected one marked with `*`, which is dropped here), under `root`.
    ///
    /// Throws ``CRCError/unsupported(driver:path:)`` when the driver has no CRC for the CRTC,
    /// ``CRCError/noAccess(path:errno:)`` without debugfs (not mounted, not root).
    public func crcSources(crtcIndex: Int, root: String = DRMDevice.debugfsRoot) throws(CRCError) -> [String] {
        let card = try debugfsDirectory(root: root)
        try DRMDevice.requireDirectory(sys, card) { .noAccess(path: card, errno: $0) }
        let dir = card + "/crtc-\(crtcIndex)/crc"
        let driver = (try? version().name) ?? "this driver"
        try DRMDevice.requireDirectory(sys, dir) { e in
            e == .noSuchFileOrDirectory ? .unsupported(driver: driver, path: dir) : .noAccess(path: dir, errno: e)
        }
        let control = dir + "/control"
        let fd = try CRCCapture.open(sys, control, writeOnly: false)
        defer { sys.closeFile(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while bytes.count < 4096 {
            let n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { raw in
                    try retrying("read", control) { try sys.readFile(fd, into: raw) }
                }
            } catch let e as DRMError {
                if e.errno == .resourceTemporarilyUnavailable { break }
                throw .failed(e)
            } catch {
                throw .failed(DRMError(call: "read", object: control, errno: .ioError))
            }
            if n <= 0 { break }
            bytes += chunk.prefix(n)
        }
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\0" }).compactMap {
            var s = $0.trimmingWhitespace()
            if s.hasSuffix("*") { s.removeLast() }
            return s.isEmpty || s == "(null)" ? nil : String(s)
        }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
