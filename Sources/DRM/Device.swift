import SystemPackage

/// A device capability (DRM_CAP_*), read with ``DRMDevice/capability(_:)``.
public struct DeviceCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static let dumbBuffer = DeviceCapability(rawValue: 0x1)
    public static let vblankHighCRTC = DeviceCapability(rawValue: 0x2)
    public static let dumbPreferredDepth = DeviceCapability(rawValue: 0x3)
    public static let dumbPreferShadow = DeviceCapability(rawValue: 0x4)
    public static let prime = DeviceCapability(rawValue: 0x5)
    public static let timestampMonotonic = DeviceCapability(rawValue: 0x6)
    public static let asyncPageFlip = DeviceCapability(rawValue: 0x7)
    public static let addFB2Modifiers = DeviceCapability(rawValue: 0x10)
    public static let pageFlipTarget = DeviceCapability(rawValue: 0x11)
    public static let crtcInVBlankEvent = DeviceCapability(rawValue: 0x12)

    public var description: String {
        switch self {
        case .dumbBuffer: return "DUMB_BUFFER"
        case .vblankHighCRTC: return "VBLANK_HIGH_CRTC"
        case .dumbPreferredDepth: return "DUMB_PREFERRED_DEPTH"
        case .dumbPreferShadow: return "DUMB_PREFER_SHADOW"
        case .prime: return "PRIME"
        case .timestampMonotonic: return "TIMESTAMP_MONOTONIC"
        case .asyncPageFlip: return "ASYNC_PAGE_FLIP"
        case .addFB2Modifiers: return "ADDFB2_MODIFIERS"
        case .pageFlipTarget: return "PAGE_FLIP_TARGET"
        case .crtcInVBlankEvent: return "CRTC_IN_VBLANK_EVENT"
        default: return "CAP_\(rawValue)"
        }
    }
}

/// A client capability (DRM_CLIENT_CAP_*), set with ``DRMDevice/enable(_:)``.
public struct ClientCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Expose primary and cursor planes, not only overlays.
    public static let universalPlanes = ClientCapability(rawValue: 2)
    /// Use atomic modesetting (implies universal planes).
    public static let atomic = ClientCapability(rawValue: 3)
    public var description: String {
        switch rawValue {
        case 2: return "UNIVERSAL_PLANES"
        case 3: return "ATOMIC"
        default: return "CLIENT_CAP_\(rawValue)"
        }
    }
}

/// An open DRM device (a /dev/dri/card* node). Closes its file descriptor in deinit.
///
/// Every method is a thin wrapper of one libdrm call through the module's system seam;
/// failures throw ``DRMError`` naming the call, the object and the errno, and EINTR is retried.
public final class DRMDevice: DRMEventSource {
    let sys: DRMSystem
    /// The file descriptor (owned).
    public let fd: Int32
    /// The path it was opened from.
    public let path: String

    /// Closes `fd` another way than close(2) (a seat's device: libseat_close_device first).
    private let closer: (() -> Void)?
    /// The seat session the device was opened through (nil: opened directly). Its
    /// ``SeatSession/fileDescriptor`` must be serviced while the device is in use.
    public let seat: SeatSession?
    /// The card's uevent channel after ``watchHotplug()`` (Hotplug.swift).
    var hotplugChannel: HotplugChannel?
    /// True when a wait saw this card's uevent channel readable: call ``takeHotplugEvents()``.
    public internal(set) var hotplugPending = false
    /// Events read for another CRTC while several outputs share this device (EventRouting.swift).
    var routedEvents: [CRTCID: [DRMEvent]] = [:]
    /// CRTC index → CRTC, set by ``routeEvents(crtcs:)`` (EventRouting.swift).
    var routedCRTCs: [CRTCID] = []
    /// The last uevents taken while routing, kept for every output (EventRouting.swift).
    var sharedUevents: [Uevent] = []
    /// How many uevents were ever taken while routing.
    public internal(set) var sharedUeventCount = 0

    /// Whether it was opened read-only (``open(path:readOnly:)``).
    public let isReadOnly: Bool

    init(sys: DRMSystem, path: String, readOnly: Bool = false) throws {
        self.sys = sys
        self.path = path
        isReadOnly = readOnly
        fd = try retrying("open", path) { try sys.open(path, readOnly: readOnly) }
        closer = nil
        seat = nil
    }

    /// Adopts `fd`, already open on `path` (by a seat); `closer` releases it in deinit.
    init(sys: DRMSystem, path: String, adopting fd: Int32, seat: SeatSession?, closer: @escaping () -> Void) {
        self.sys = sys
        self.path = path
        self.fd = fd
        isReadOnly = false
        self.seat = seat
        self.closer = closer
    }

    deinit {
        if let closer { closer() } else { sys.close(fd) }
    }

    /// Opens the device node at `path` read-write, or with `readOnly` read-only (O_RDONLY): enough
    /// to read the version, capabilities, resources, connectors, properties and blobs (an EDID),
    /// and all that a node with read permission only (mode 0604, an ACL with `r`) allows. A
    /// read-only descriptor cannot map a dumb buffer for drawing, so displaying needs read-write.
    public static func open(path: String, readOnly: Bool = false) throws -> DRMDevice {
        try DRMDevice(sys: LiveDRM.shared, path: path, readOnly: readOnly)
    }

    /// Opens the scripted fake device (for tests and demos without /dev/dri).
    public static func open(fake: FakeDRMDevice) throws -> DRMDevice {
        try DRMDevice(sys: fake, path: fake.path)
    }

    /// Opens `path` on the scripted fake device (ENOENT unless it is one of its nodes),
    /// read-only with `readOnly` (see ``FakeDRMDevice/writeDenied``).
    public static func open(path: String, fake: FakeDRMDevice, readOnly: Bool = false) throws -> DRMDevice {
        try DRMDevice(sys: fake, path: path, readOnly: readOnly)
    }

    /// The /dev/dri/card* nodes present, in numeric order.
    public static func discover() -> [String] { LiveDRM.shared.cardPaths() }

    /// The card nodes the fake device pretends exist.
    public static func discover(fake: FakeDRMDevice) -> [String] { fake.cardPaths() }

    // MARK: Device

    /// The driver name and version (drmGetVersion). Fails with ENOTTY on a non-DRM file.
    public func version() throws -> DriverVersion {
        try retrying("drmGetVersion", path) { try sys.getVersion(fd) }
    }

    /// A capability's value (drmGetCap).
    public func capability(_ cap: DeviceCapability) throws -> UInt64 {
        try retrying("drmGetCap", "\(cap)") { try sys.getCap(fd, cap.rawValue) }
    }

    /// True when `cap` is present and non-zero; false when absent or unreadable.
    public func has(_ cap: DeviceCapability) -> Bool { ((try? capability(cap)) ?? 0) != 0 }

    /// Enables a client capability (drmSetClientCap).
    public func enable(_ cap: ClientCapability) throws {
        try retrying("drmSetClientCap", "\(cap)") { try sys.setClientCap(fd, cap.rawValue, 1) }
    }

    /// Becomes DRM master (drmSetMaster). EBUSY/EACCES/EPERM: another process holds it.
    public func setMaster() throws { try retrying("drmSetMaster", path) { try sys.setMaster(fd) } }
    /// Gives up DRM master (drmDropMaster).
    public func dropMaster() throws { try retrying("drmDropMaster", path) { try sys.dropMaster(fd) } }
    /// True when this file is DRM master (drmIsMaster).
    public var isMaster: Bool { sys.isMaster(fd) }

    /// Ensures this file is DRM master, becoming it if needed.
    public func acquireMaster() throws {
        if isMaster { return }
        try setMaster()
    }

    /// The name a fake device used as a simulator reports (``FakeDRMDevice/simulatorName``);
    /// nil on a real card and on a fake standing in for one.
    public var simulatorName: String? { (sys as? FakeDRMDevice)?.simulatorName }

    /// CLOCK_MONOTONIC now, in ns (the fake device's virtual clock on the fake).
    public func monotonicNow() -> Int64 { sys.monotonicNow() }

    /// Occupies the CPU until CLOCK_MONOTONIC reaches `deadline` (jumps the fake's clock).
    public func busyWait(until deadline: Int64) { sys.busyWait(until: deadline) }

    /// Sleeps until CLOCK_MONOTONIC reaches `deadline`, the CPU left to other threads
    /// (clock_nanosleep; jumps the fake's clock).
    public func sleep(until deadline: Int64) { sys.sleep(until: deadline) }

    // MARK: Objects

    /// The card's object ids (drmModeGetResources).
    public func resources() throws -> CardResources {
        try retrying("drmModeGetResources", path) { try sys.getResources(fd) }
    }

    /// A connector snapshot (drmModeGetConnector; probes the connector).
    public func connector(_ id: ConnectorID) throws -> Connector {
        try retrying("drmModeGetConnector", "\(id)") { try sys.getConnector(fd, id) }
    }

    /// All connectors, in resource order.
    public func connectors() throws -> [Connector] {
        try resources().connectors.map { try connector($0) }
    }

    /// An encoder snapshot (drmModeGetEncoder).
    public func encoder(_ id: EncoderID) throws -> Encoder {
        try retrying("drmModeGetEncoder", "\(id)") { try sys.getEncoder(fd, id) }
    }

    /// A CRTC snapshot (drmModeGetCrtc).
    public func crtc(_ id: CRTCID) throws -> CRTCState {
        try retrying("drmModeGetCrtc", "\(id)") { try sys.getCRTC(fd, id) }
    }

    /// The plane ids (drmModeGetPlaneResources); needs universal planes for primary planes.
    public func planeIDs() throws -> [PlaneID] {
        try retrying("drmModeGetPlaneResources", path) { try sys.getPlaneResources(fd) }
    }

    /// A plane snapshot (drmModeGetPlane).
    public func plane(_ id: PlaneID) throws -> Plane {
        try retrying("drmModeGetPlane", "\(id)") { try sys.getPlane(fd, id) }
    }

    /// A property's metadata (drmModeGetProperty).
    public func property(_ id: PropertyID) throws -> PropertyInfo {
        try retrying("drmModeGetProperty", "\(id)") { try sys.getProperty(fd, id) }
    }

    /// An object's properties with metadata (drmModeObjectGetProperties + drmModeGetProperty).
    public func properties<ID: DRMObjectID>(of id: ID, type: ObjectType) throws -> [PropertyValue] {
        let raw = try retrying("drmModeObjectGetProperties", "\(id)") {
            try sys.getObjectProperties(fd, id.rawValue, type)
        }
        return try raw.map { PropertyValue(info: try property($0.id), value: $0.value) }
    }

    /// Property ids by name for an object (for atomic requests).
    public func propertyIDs<ID: DRMObjectID>(of id: ID, type: ObjectType) throws -> [String: PropertyID] {
        var out: [String: PropertyID] = [:]
        for p in try properties(of: id, type: type) { out[p.info.name] = p.info.id }
        return out
    }

    /// A blob's bytes (drmModeGetPropertyBlob).
    public func blob(_ id: BlobID) throws -> [UInt8] {
        try retrying("drmModeGetPropertyBlob", "\(id)") { try sys.getPropertyBlob(fd, id) }
    }

    /// The connector's EDID bytes, or nil when it has none.
    public func edid(of connector: ConnectorID) throws -> [UInt8]? {
        guard let p = try properties(of: connector, type: .connector).first(where: { $0.info.name == "EDID" }),
              p.value != 0 else { return nil }
        return try blob(BlobID(UInt32(truncatingIfNeeded: p.value)))
    }

    /// A plane's kind from its "type" property (overlay when it has none).
    public func planeKind(_ id: PlaneID) throws -> PlaneKind {
        let type = try properties(of: id, type: .plane).first { $0.info.name == "type" }
        return type.flatMap { PlaneKind(rawValue: $0.value) } ?? .overlay
    }

    /// Creates a property blob (drmModeCreatePropertyBlob), destroyed with the returned object.
    public func createBlob(_ bytes: [UInt8]) throws -> PropertyBlob {
        let id = try retrying("drmModeCreatePropertyBlob", nil) { try sys.createPropertyBlob(fd, bytes) }
        return PropertyBlob(device: self, id: id)
    }

    // MARK: Modeset and flips

    /// Legacy modeset (drmModeSetCrtc). A nil mode with framebuffer 0 turns the CRTC off.
    public func setCRTC(_ crtc: CRTCID, framebuffer: FramebufferID, x: Int = 0, y: Int = 0,
                        connectors: [ConnectorID], mode: ModeInfo?) throws {
        try retrying("drmModeSetCrtc", "\(crtc)") {
            try sys.setCRTC(fd, crtc, framebuffer: framebuffer, x: UInt32(x), y: UInt32(y), connectors: connectors, mode: mode)
        }
    }

    /// Legacy page flip (drmModePageFlip); completion arrives as a flip event with `userData`.
    public func pageFlip(_ crtc: CRTCID, to framebuffer: FramebufferID, flags: PageFlipFlags = .event, userData: UInt64 = 0) throws {
        try retrying("drmModePageFlip", "\(crtc)") {
            try sys.pageFlip(fd, crtc, framebuffer: framebuffer, flags: flags, userData: userData)
        }
    }

    /// Atomic commit (drmModeAtomicCommit).
    public func atomicCommit(_ properties: [AtomicProperty], flags: AtomicFlags, userData: UInt64 = 0,
                             object: @autoclosure () -> String? = nil) throws {
        let call = flags.contains(.testOnly) ? "drmModeAtomicCommit(TEST_ONLY)" : "drmModeAtomicCommit"
        try retrying(call, object()) { try sys.atomicCommit(fd, properties, flags: flags, userData: userData) }
    }

    // MARK: Vblank and events

    /// The CRTC's current vblank counter and timestamp (drmCrtcGetSequence).
    /// EOPNOTSUPP: the driver has no vblank interrupt.
    public func crtcSequence(_ crtc: CRTCID) throws -> VBlankReading {
        try retrying("drmCrtcGetSequence", "\(crtc)") { try sys.crtcGetSequence(fd, crtc) }
    }

    /// Asks for a sequence event at vblank `sequence` (drmCrtcQueueSequence); returns the
    /// sequence actually queued.
    @discardableResult
    public func queueSequence(_ crtc: CRTCID, _ sequence: UInt64, flags: SequenceFlags = .nextOnMiss, userData: UInt64) throws -> UInt64 {
        try retrying("drmCrtcQueueSequence", "\(crtc)") {
            try sys.crtcQueueSequence(fd, crtc, flags: flags, sequence: sequence, userData: userData)
        }
    }

    /// The current vblank of the `index`-th CRTC via drmWaitVBlank (relative 0).
    public func waitVBlankQuery(crtcIndex: Int) throws -> VBlankReading {
        try retrying("drmWaitVBlank", "CRTC index \(crtcIndex)") { try sys.waitVBlankQuery(fd, crtcIndex: crtcIndex) }
    }

    /// Asks for a vblank event at the 32-bit `sequence` of the `index`-th CRTC (drmWaitVBlank
    /// with DRM_VBLANK_EVENT | NEXTONMISS); returns the sequence it will fire at.
    @discardableResult
    public func waitVBlankEvent(crtcIndex: Int, sequence: UInt32, userData: UInt64) throws -> UInt32 {
        try retrying("drmWaitVBlank(EVENT)", "CRTC index \(crtcIndex)") {
            try sys.waitVBlankEvent(fd, crtcIndex: crtcIndex, absoluteSequence: sequence, userData: userData)
        }
    }

    /// Waits until the device has events or `deadline` (CLOCK_MONOTONIC ns) passes, then
    /// reads them (poll + drmHandleEvent) into `events` (no allocation when it has capacity);
    /// nothing on timeout. After ``watchHotplug()`` a uevent for the card also ends the wait
    /// (with ``hotplugPending`` set). Returns true when a signal interrupted the wait (EINTR is
    /// not retried here, so that a caller can look at why it was woken).
    @discardableResult
    public func readEvents(until deadline: Int64, into events: inout [DRMEvent]) throws -> Bool {
        let timeout = deadline - sys.monotonicNow()
        let ready: Bool
        do {
            if let channel = hotplugChannel {
                let r = try sys.poll(fd, hotplug: channel, timeoutNs: max(0, timeout))
                if r.hotplug { hotplugPending = true }
                ready = r.events
            } else {
                ready = try sys.poll(fd, timeoutNs: max(0, timeout))
            }
        } catch let e as Errno where e == .interrupted {
            return true
        } catch let e as Errno {
            throw DRMError(call: "poll", object: path, errno: e)
        }
        guard ready else { return false }
        while true {
            do {
                try sys.handleEvents(fd, into: &events)
                return false
            } catch let e as Errno {
                if e == .interrupted { continue }
                throw DRMError(call: "drmHandleEvent", object: path, errno: e)
            }
        }
    }
}

/// A property blob owned by this process (e.g. a MODE_ID); destroyed in deinit.
public final class PropertyBlob {
    public let id: BlobID
    let device: DRMDevice
    init(device: DRMDevice, id: BlobID) { self.device = device; self.id = id }
    deinit { try? device.sys.destroyPropertyBlob(device.fd, id) }
}
