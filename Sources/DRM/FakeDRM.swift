import SystemPackage

/// A scripted DRM device on a virtual clock, so every KMS code path runs in unit tests
/// without /dev/dri: connectors with names, status, EDID and properties; encoders, CRTCs,
/// planes and modes; capabilities; flip, vblank and sequence events whose kernel timestamps
/// fall exactly on the virtual vblank grid; and injected errno (EBUSY, EINVAL, EACCES, ENODEV)
/// for any call by name.
///
/// Time only moves when the code under test waits (``DRMDevice/readEvents(until:into:)``) or
/// busy-waits, so tests never sleep.
///
/// (One type in several files: this one holds the scripted objects, the state and the session
/// calls (open, capabilities, master); FakeDRM+Objects.swift the object and property queries;
/// FakeDRM+Buffers.swift the dumb, framebuffer and GBM calls; FakeDRM+Flips.swift modesets,
/// flips, atomic commits, vblank sequences and events; FakeDRM+Timing, +VRR and +Hotplug the wall
/// clock, the adaptive-sync panel and scripted connector changes. The state is internal, not
/// private, so that the extensions in those files can reach it; nothing else in DRM touches it.)
public final class FakeDRMDevice: DRMSystem {
    // MARK: Script

    /// The node path the fake answers to.
    public var path: String
    /// The card nodes ``DRMDevice/discover(fake:)`` reports (default: just ``path``).
    public var cardNodes: [String]
    /// Error for opening the node (ENOENT for a missing path, EACCES for no permission).
    public var openError: Errno?
    /// The node grants this user read access only (mode 0604, or an ACL with `r`): a
    /// read-write open fails with EACCES, a read-only one works (and, as in the kernel, a
    /// dumb buffer cannot be mapped for writing through it).
    public var writeDenied = false
    /// Pretend the node is not a DRM device: drmGetVersion fails with ENOTTY.
    public var isNotDRM = false
    /// Another process is DRM master: drmSetMaster fails with EBUSY, modesets with EACCES.
    public var masterHeldElsewhere = false
    /// Driver name and version.
    public var driver = DriverVersion(name: "fake", major: 1, minor: 0, patch: 0, date: "20260101", description: "Cadence fake DRM device")
    /// DRM_CAP_* values; absent ones fail with EINVAL like unknown caps.
    public var capabilities: [DeviceCapability: UInt64] = [
        .dumbBuffer: 1, .dumbPreferShadow: 0, .timestampMonotonic: 1, .asyncPageFlip: 0, .crtcInVBlankEvent: 1,
    ]
    /// Whether DRM_CLIENT_CAP_ATOMIC can be enabled.
    public var supportsAtomic = true
    /// False plays bochs/virtio-gpu: no vblank interrupt, drmCrtcGetSequence and drmWaitVBlank
    /// fail with EOPNOTSUPP, flips complete after ``commitLatencyNs`` with sequence 0.
    public var hasVBlank = true
    /// Commit-to-completion time on a device without vblank.
    public var commitLatencyNs: Int64 = 1_000_000
    /// Time from an event's kernel timestamp until it can be read.
    public var receiptLatencyNs: Int64 = 40_000
    /// Under VRR: time from a flip's commit to the start of the refresh it starts (when the
    /// panel's minimum interval has already passed).
    public var vrrResponseNs: Int64 = 100_000
    /// The next flips each miss this many extra vblanks (consumed front first).
    public var flipDelays: [Int] = []
    /// The vblank period follows this rate instead of the mode's timing (a panel whose real
    /// clock differs from its nominal refresh); nil: the mode's `refreshInterval`.
    public var refreshOverrideHz: Double?
    /// Event timestamps move by up to ± this much from the vblank grid (the same offset for a
    /// given CRTC and sequence every time it is read), drawn from ``jitterSeed``.
    public var vblankJitterNs: Int64 = 0
    /// The seed of the timestamp jitter.
    public var jitterSeed: UInt64 = 0
    /// False (default): the virtual clock, which moves only when the code under test waits.
    /// True: CLOCK_MONOTONIC, and waits sleep for real. Set before the first call.
    public var usesWallClock = false
    /// The CRC sources each CRTC offers in debugfs (`crtc-M/crc`, FakeDRM+CRC.swift); empty:
    /// the driver has no CRC (bochs-drm, virtio_gpu). The default is vkms': `auto`.
    public var crcSources: [String] = ["auto"]
    /// debugfs is not reachable: every debugfs path fails with this errno (ENOENT: not mounted;
    /// EACCES: not root).
    public var debugfsError: Errno?
    /// Time from a vblank until its CRC line can be read (the driver's worker).
    public var crcLatencyNs: Int64 = 500_000
    /// Scripted fault: the vblanks whose CRC line never appears.
    public var crcSkippedFrames: Set<UInt64> = []
    /// Scripted fault, as vkms' CRC worker falling behind: for each range, every vblank in it
    /// gets the CRC of the content at its last vblank (catch-up repeats), all readable only after it.
    public var crcCatchUps: [ClosedRange<UInt64>] = []
    /// Scripted fault: the page flips (counted from 1 in the order they were committed) that
    /// latch their framebuffer with the content already on screen, as a renderer flipping a
    /// buffer it never updated would.
    public var staleFlips: Set<Int> = []
    /// The writeback connectors (FakeDRM+Writeback.swift), listed only to a file that enabled
    /// the writeback client cap; empty: the driver has none (every driver but vkms here).
    public var writebackConnectors: [FakeWritebackConnector] = []
    /// Time from the vblank a writeback job's frame is composed at until its out fence signals.
    public var writebackLatencyNs: Int64 = 500_000
    /// Scripted fault: the writeback jobs (counted from 1 in commit order) whose fence signals
    /// without the frame being written (the capture buffer keeps what it held).
    public var writebackDroppedJobs: Set<Int> = []
    /// Nil: the device stands in for a real card (unit tests), and a `KMSDisplay` over it
    /// reports the name "kms". Set (e.g. "fake-drm", when a user asked for the fake DRM
    /// device): the name a `KMSDisplay` over it reports, so that no summary takes the
    /// simulator for a real panel.
    public var simulatorName: String?

    /// A scripted connector.
    public struct FakeConnector: Sendable {
        public var id: ConnectorID
        public var type: UInt32
        public var typeID: UInt32
        public var status: ConnectionStatus
        public var modes: [ModeInfo]
        public var encoders: [EncoderID]
        public var edid: [UInt8]?
        /// Physical size when connected (drm_info's phy_width/phy_height); nil: 260x195.
        public var sizeMM: (width: Int, height: Int)?
        /// Further properties by name (`vrr_capable`, `non-desktop`), read-only range values.
        public var properties: [String: UInt64]
        /// The panel's variable-refresh range in Hz (from its EDID): with `vrr_capable` = 1 and
        /// `VRR_ENABLED` = 1 on the CRTC driving it, refreshes follow flips inside this range
        /// (see ``FakeDRMDevice/vrrResponseNs``). Nil: a fixed-refresh panel.
        public var vrrRangeHz: ClosedRange<Double>?
        public init(id: ConnectorID, type: UInt32 = 15, typeID: UInt32 = 1, status: ConnectionStatus = .connected,
                    modes: [ModeInfo], encoders: [EncoderID], edid: [UInt8]? = nil,
                    sizeMM: (width: Int, height: Int)? = nil, properties: [String: UInt64] = [:]) {
            self.id = id; self.type = type; self.typeID = typeID; self.status = status; self.modes = modes
            self.encoders = encoders; self.edid = edid; self.sizeMM = sizeMM; self.properties = properties
        }
    }

    public var connectors: [FakeConnector]
    public var encoders: [Encoder]
    public var crtcs: [CRTCState]
    public var planes: [(plane: Plane, kind: PlaneKind)]

    // MARK: Observations

    /// Every seam call made, by libdrm name, in order.
    public internal(set) var calls: [String] = []
    /// Time spent in ``DRMDevice/busyWait(until:)`` (the CPU held), in ns.
    public internal(set) var busyWaitNanoseconds: Int64 = 0
    /// Time spent in ``DRMDevice/sleep(until:)`` (the CPU left to other threads), in ns.
    public internal(set) var sleptNanoseconds: Int64 = 0
    /// Mode set on each CRTC (nil: off).
    public var activeMode: [CRTCID: ModeInfo] { crtcState.mapValues { $0.mode }.compactMapValues { $0 } }
    /// The framebuffer each CRTC scans out now.
    public var scanout: [CRTCID: FramebufferID] { crtcState.mapValues(\.fb) }
    /// Framebuffers flipped to, in completion order.
    public internal(set) var presented: [FramebufferID] = []
    /// One completed flip as its event reported it.
    public struct FlipCompletion: Equatable, Sendable {
        public var crtc: CRTCID
        /// The event's 32-bit sequence.
        public var sequence: UInt64
        public var timestampNs: Int64
    }
    /// Every flip completion read, in order (under VRR each starts a refresh: its timestamp).
    public internal(set) var flipCompletions: [FlipCompletion] = []
    /// Live kernel objects created through the fake (leak checks).
    public var liveDumbBuffers: Int { dumbs.count }
    public var liveFramebuffers: Int { fbs.count }
    public var liveBlobs: Int { blobs.keys.filter { $0 >= 1000 }.count }
    public var liveGBMObjects: Int { gbmObjects }
    public internal(set) var liveMappings = 0
    /// The virtual CLOCK_MONOTONIC, ns.
    public internal(set) var clock: Int64 = 1_000_000_000_000

    // MARK: Setup

    /// A device shaped like vkms: one Virtual-1 connector with 1024x768@60.0038 preferred
    /// plus the usual DMT modes, one encoder, one CRTC, primary + cursor + overlay planes.
    public init(path: String = "/dev/dri/card0") {
        self.path = path
        cardNodes = [path]
        let vkmsModes = [
            ModeInfo(clock: 65000, hdisplay: 1024, hsyncStart: 1048, hsyncEnd: 1184, htotal: 1344,
                     vdisplay: 768, vsyncStart: 771, vsyncEnd: 777, vtotal: 806, flags: [.nhsync, .nvsync],
                     type: [.preferred, .driver]),
            ModeInfo(clock: 148500, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                     vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125, flags: [.phsync, .pvsync], type: [.driver]),
            ModeInfo(clock: 40000, hdisplay: 800, hsyncStart: 840, hsyncEnd: 968, htotal: 1056,
                     vdisplay: 600, vsyncStart: 601, vsyncEnd: 605, vtotal: 628, flags: [.phsync, .pvsync], type: [.driver]),
        ]
        connectors = [FakeConnector(id: ConnectorID(35), modes: vkmsModes, encoders: [EncoderID(34)])]
        encoders = [Encoder(id: EncoderID(34), type: 5, possibleCRTCs: 1)]
        crtcs = [CRTCState(id: CRTCID(33))]
        planes = [
            (Plane(id: PlaneID(31), possibleCRTCs: 1, formats: [.xrgb8888, .argb8888]), .primary),
            (Plane(id: PlaneID(32), possibleCRTCs: 1, formats: [.argb8888]), .cursor),
            (Plane(id: PlaneID(30), possibleCRTCs: 1, formats: [.xrgb8888, .argb8888]), .overlay),
        ]
    }

    /// Makes the `index`-th CRTC already show `mode` (as fbcon would leave it) with a
    /// framebuffer the fake pretends someone else owns.
    /// `connectors` (default: the first connector) are the ones it drives.
    public func preset(crtcIndex: Int = 0, mode: ModeInfo, framebuffer: FramebufferID = FramebufferID(900),
                       connectors driven: [ConnectorID]? = nil) {
        ensureState()
        let id = crtcs[crtcIndex].id
        crtcState[id] = CRTCRuntime(mode: mode, fb: framebuffer, connectors: driven ?? [connectors[0].id],
                                    baseSeq: 0, baseTime: clock)
        foreignFBs.insert(framebuffer.rawValue)
    }

    /// Starts the `index`-th CRTC's vblank counter at `sequence` (to test 32-bit wrap).
    public func setVBlankCounter(crtcIndex: Int = 0, to sequence: UInt64) {
        ensureState()
        crtcState[crtcs[crtcIndex].id]?.baseSeq = sequence
        crtcState[crtcs[crtcIndex].id]?.baseTime = clock
    }

    /// Makes calls named `call` (e.g. "drmModeSetCrtc", "drmModeAtomicCommit",
    /// "drmModePageFlip", "drmSetMaster", "open") fail with `errno` the next `times` times.
    public func inject(_ errno: Errno, into call: String, times: Int = 1) {
        injected[call, default: []].append(contentsOf: Array(repeating: errno, count: times))
    }

    /// Moves the virtual clock forward.
    public func advance(by ns: Int64) { clock += ns }

    // MARK: State

    struct CRTCRuntime {
        var mode: ModeInfo?
        var fb: FramebufferID = FramebufferID(0)
        var connectors: [ConnectorID] = []
        var active: Bool { mode != nil }
        var baseSeq: UInt64 = 0
        var baseTime: Int64 = 0
        var pendingFlip = false
        /// `VRR_ENABLED` as last committed.
        var vrrEnabled = false
        /// Under VRR: the refresh a pending flip starts, not reached yet (FakeDRM+VRR.swift).
        var vrrNext: (time: Int64, seq: UInt64)?
    }
    struct PendingEvent {
        var readyAt: Int64
        var event: DRMEvent
        var fb: FramebufferID?
        var crtc: CRTCID
    }
    var crtcState: [CRTCID: CRTCRuntime] = [:]
    var stateReady = false
    var injected: [String: [Errno]] = [:]
    var pending: [PendingEvent] = []
    var dumbs: [UInt32: (memory: UnsafeMutableRawPointer, size: Int, pitch: UInt32)] = [:]
    var fbs: [UInt32: (handle: UInt32, width: UInt32, height: UInt32)] = [:]
    var foreignFBs: Set<UInt32> = []
    var blobs: [UInt32: [UInt8]] = [:]
    var nextID: UInt32 = 100
    var nextBlob: UInt32 = 1000
    var openFDs: Set<Int32> = []
    var nextFD: Int32 = 3
    var readOnlyFDs: Set<Int32> = []
    var atomicEnabled: Set<Int32> = []
    var masters: Set<Int32> = []
    var gbmObjects = 0
    var gbmBOs: [UnsafeMutableRawPointer: (handle: UInt32, memory: UnsafeMutableRawPointer, stride: UInt32)] = [:]
    var propNames: [String: PropertyID] = [:]
    var planeBinding: [UInt32: CRTCID] = [:]
    var propValues: [UInt32: [PropertyID: UInt64]] = [:]
    /// Scripted connector status changes not yet due, and uevents not yet read (FakeDRM+Hotplug.swift).
    var hotplugScript: [(at: Int64, connector: ConnectorID, status: ConnectionStatus)] = []
    /// CRC captures and the content latched at each vblank (FakeDRM+CRC.swift).
    var crc = FakeCRCState()
    /// Writeback attachments, jobs and fences (FakeDRM+Writeback.swift).
    var wb = FakeWritebackState()
    var ueventsReady: [Uevent] = []

    deinit {
        for d in dumbs.values { d.memory.deallocate() }
        for b in gbmBOs { b.value.memory.deallocate(); b.key.deallocate() }
    }

    func ensureState() {
        guard !stateReady else { return }
        syncWallClock()
        stateReady = true
        for c in crtcs where crtcState[c.id] == nil {
            crtcState[c.id] = CRTCRuntime(mode: c.mode, fb: c.framebufferID, baseTime: clock)
        }
        for c in connectors {
            if let edid = c.edid {
                blobs[UInt32(c.id.rawValue) + 500] = edid
            }
        }
    }

    func record(_ call: String) throws {
        calls.append(call)
        ensureState()
        syncWallClock()
        applyDueHotplug()
        advanceWriteback()
        advanceCRC()
        if var list = injected[call], !list.isEmpty {
            let e = list.removeFirst()
            injected[call] = list
            throw e
        }
    }

    func prop(_ name: String) -> PropertyID {
        if let id = propNames[name] { return id }
        let id = PropertyID(UInt32(2000 + propNames.count))
        propNames[name] = id
        return id
    }

    func crtcIndex(_ id: CRTCID) -> Int? { crtcs.firstIndex { $0.id == id } }

    func period(_ rt: CRTCRuntime) -> Int64 {
        if let r = vrrIntervals(rt) { return r.maxNs }
        if let hz = refreshOverrideHz, hz > 0, rt.mode != nil { return Int64((1e9 / hz).rounded()) }
        let p = rt.mode?.refreshInterval ?? 0
        return p > 0 ? Int64(p.rounded()) : 16_666_667
    }

    /// The vblank count of `crtc` at time `t`, and the time of that vblank.
    func vblank(_ crtc: CRTCID, at t: Int64) -> (seq: UInt64, time: Int64) {
        settleVRR(crtc, at: t)
        let rt = crtcState[crtc] ?? CRTCRuntime()
        let p = period(rt)
        let n = max(0, (t - rt.baseTime) / p)
        return (rt.baseSeq + UInt64(n), rt.baseTime + n * p)
    }

    func vblankTime(_ crtc: CRTCID, seq: UInt64) -> Int64 {
        settleVRR(crtc, at: clock)
        let rt = crtcState[crtc] ?? CRTCRuntime()
        if let n = rt.vrrNext, seq >= n.seq { return n.time + Int64(seq - n.seq) * period(rt) }
        return rt.baseTime + Int64(seq &- rt.baseSeq) * period(rt)
    }

    // MARK: DRMSystem

    func cardPaths() -> [String] { cardNodes }

    func open(_ path: String, readOnly: Bool) throws -> Int32 {
        try record(readOnly ? "open(O_RDONLY)" : "open")
        if let openError { throw openError }
        guard path == self.path || cardNodes.contains(path) else { throw Errno.noSuchFileOrDirectory }
        if writeDenied && !readOnly { throw Errno.permissionDenied }
        let fd = nextFD
        nextFD += 1
        openFDs.insert(fd)
        if readOnly { readOnlyFDs.insert(fd) }
        if !masterHeldElsewhere && masters.isEmpty { masters.insert(fd) }
        return fd
    }

    func close(_ fd: Int32) {
        calls.append("close")
        openFDs.remove(fd)
        readOnlyFDs.remove(fd)
        wb.enabledFDs.remove(fd)
        masters.remove(fd)
    }

    func getVersion(_ fd: Int32) throws -> DriverVersion {
        try record("drmGetVersion")
        if isNotDRM { throw Errno(rawValue: 25) } // ENOTTY
        return driver
    }

    func getCap(_ fd: Int32, _ cap: UInt64) throws -> UInt64 {
        try record("drmGetCap")
        if isNotDRM { throw Errno(rawValue: 25) }
        guard let v = capabilities[DeviceCapability(rawValue: cap)] else { throw Errno.invalidArgument }
        return v
    }

    func setClientCap(_ fd: Int32, _ cap: UInt64, _ value: UInt64) throws {
        try record("drmSetClientCap")
        if cap == ClientCapability.atomic.rawValue {
            guard supportsAtomic else { throw Errno.eopnotsupp }
            if value != 0 { atomicEnabled.insert(fd) } else { atomicEnabled.remove(fd) }
        }
        if cap == ClientCapability.writebackConnectors.rawValue {
            // drm_ioctl.c: the writeback cap needs the atomic cap first.
            guard atomicEnabled.contains(fd) else { throw Errno.invalidArgument }
            if value != 0 { wb.enabledFDs.insert(fd) } else { wb.enabledFDs.remove(fd) }
        }
    }

    func setMaster(_ fd: Int32) throws {
        try record("drmSetMaster")
        if masterHeldElsewhere { throw Errno.resourceBusy }
        masters.insert(fd)
    }

    func dropMaster(_ fd: Int32) throws {
        try record("drmDropMaster")
        masters.remove(fd)
    }

    func isMaster(_ fd: Int32) -> Bool { masters.contains(fd) }
}
