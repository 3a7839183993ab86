import SystemPackage

/// How to program the display.
public enum ModesetAPI: String, CaseIterable, Sendable {
    /// Atomic commits (TEST_ONLY, ALLOW_MODESET, NONBLOCK | PAGE_FLIP_EVENT).
    case atomic
    /// drmModeSetCrtc + drmModePageFlip.
    case legacy
    /// Atomic when the driver offers it, legacy otherwise.
    case auto
}

/// Whether the CRTC has a vblank interrupt.
public enum VBlankSupport: String, Sendable {
    /// Real vblank: flip timestamps and sequences come from the vblank interrupt.
    case hardware
    /// No vblank (bochs, virtio-gpu): flip timestamps are commit-completion times and
    /// sequences are 0.
    case none
}

/// The notice printed for drivers without vblank.
public let noHardwareVBlankNotice = "no hardware vblank: timestamps are commit-completion times"

/// One connector driven by one CRTC and its primary plane: modeset, flips, events, vblank
/// queries, and restoring what was on screen before.
public final class KMSOutput: DRMEventSource {
    public let device: DRMDevice
    public let connector: Connector
    public let crtc: CRTCID
    /// Index of ``crtc`` in the card's CRTC list (for drmWaitVBlank and possible_crtcs).
    public let crtcIndex: Int
    public let primaryPlane: PlaneID?
    public let mode: ModeInfo
    /// The API in use (never `.auto`).
    public let api: ModesetAPI
    /// Whether DRM_CAP_TIMESTAMP_MONOTONIC is set (else timestamps are wall-clock).
    public let timestampsMonotonic: Bool

    /// True while a flip is submitted and its completion event has not arrived.
    public private(set) var flipPending = false
    /// Set once the mode is programmed; cleared by ``restore()``.
    public private(set) var isModeSet = false
    /// The connector's `vrr_capable` value (true: the panel and link can run variable refresh),
    /// nil when the driver has no such property. Read when the output is prepared.
    public let vrrCapable: Bool?
    /// Whether the last ``modeset(framebuffer:vrr:)`` set `VRR_ENABLED` = 1 on the CRTC; back to
    /// false after ``restore()``.
    public private(set) var vrrEnabled = false
    /// What ``modeset(framebuffer:vrr:)`` asks for when `vrr` is nil (the last explicit choice).
    private var vrrWanted = false

    private let original: CRTCState
    private let originalConnectors: [ConnectorID]
    private var modeBlob: PropertyBlob?
    /// Atomic only: the properties set by modesets and flips, and the primary plane.
    private var atomic: (connector: ConnectorProperties, crtc: CRTCProperties, plane: PlaneProperties, planeID: PlaneID)?
    private var restored = false

    /// Prepares `connector` for `mode`: becomes DRM master, enables universal planes (and
    /// atomic when `api` allows), picks a CRTC and its primary plane, and saves the CRTC's
    /// current state for ``restore()``. Nothing on screen changes yet. `crtc` drives the
    /// connector with that CRTC (several outputs at once: KMSDisplay chooses one per connector).
    public init(device: DRMDevice, connector: Connector, mode: ModeInfo, api: ModesetAPI = .auto, crtc requestedCRTC: CRTCID? = nil) throws {
        self.device = device
        self.connector = connector
        self.mode = mode
        try device.acquireMaster()
        try? device.enable(.universalPlanes)
        var chosen = api
        switch api {
        case .atomic:
            try device.enable(.atomic)
        case .auto:
            chosen = (try? device.enable(.atomic)) != nil ? .atomic : .legacy
        case .legacy:
            break
        }
        self.api = chosen
        timestampsMonotonic = device.has(.timestampMonotonic)
        vrrCapable = (try? device.properties(of: connector.id, type: .connector))?
            .first { $0.info.name == "vrr_capable" }.map { $0.value != 0 }

        let res = try device.resources()
        // Prefer the CRTC already driving the connector, else the first one an encoder allows.
        var pick: CRTCID? = requestedCRTC
        if pick == nil, !connector.encoderID.isNone, let enc = try? device.encoder(connector.encoderID), !enc.crtcID.isNone {
            pick = enc.crtcID
        }
        if pick == nil {
            for e in connector.encoders {
                guard let enc = try? device.encoder(e) else { continue }
                if let i = res.crtcs.indices.first(where: { enc.possibleCRTCs & (1 << UInt32($0)) != 0 }) {
                    pick = res.crtcs[i]
                    break
                }
            }
        }
        guard let crtc = pick, let index = res.crtcs.firstIndex(of: crtc) else {
            throw DRMError(call: "choose CRTC", object: connector.name, errno: .enodev)
        }
        self.crtc = crtc
        crtcIndex = index
        original = try device.crtc(crtc)
        originalConnectors = try res.connectors.filter { id in
            let c = id == connector.id ? connector : try device.connector(id)
            guard !c.encoderID.isNone, let enc = try? device.encoder(c.encoderID) else { return false }
            return enc.crtcID == crtc
        }

        var primary: PlaneID?
        if let ids = try? device.planeIDs() {
            for id in ids {
                guard let p = try? device.plane(id), p.possibleCRTCs & (1 << UInt32(index)) != 0 else { continue }
                if (try? device.planeKind(id)) == .primary { primary = id; break }
            }
        }
        primaryPlane = primary
        if chosen == .atomic {
            guard let primary else {
                throw DRMError(call: "find primary plane", object: "\(crtc)", errno: .enodev)
            }
            atomic = (try device.connectorProperties(connector.id, name: connector.name),
                      try device.crtcProperties(crtc), try device.planeProperties(primary), primary)
        }
    }

    deinit { try? restore() }

    // MARK: Modeset and flips

    /// Why `VRR_ENABLED` cannot be set on this output (legacy API, no property), nil when it can.
    /// Whether the panel can follow is ``vrrCapable``'s business.
    public var vrrUnavailableReason: String? {
        if api == .legacy { return "the legacy (non-atomic) API cannot set VRR_ENABLED" }
        if atomic?.crtc.vrrEnabled == nil { return "\(crtc) has no VRR_ENABLED property" }
        return nil
    }

    /// Programs the mode with `framebuffer` on screen and waits for it to take effect:
    /// atomic (TEST_ONLY first, then ALLOW_MODESET) or drmModeSetCrtc. `vrr` true sets the
    /// CRTC's `VRR_ENABLED` = 1 in the same commit (atomic only: EOPNOTSUPP otherwise, see
    /// ``vrrUnavailableReason``); nil repeats the previous choice (a modeset after a seat resume).
    public func modeset(framebuffer: FramebufferID, vrr: Bool? = nil) throws {
        let wantVRR = vrr ?? vrrWanted
        if wantVRR, let why = vrrUnavailableReason {
            throw DRMError(call: "set VRR_ENABLED (\(why))", object: "\(crtc)", errno: .eopnotsupp)
        }
        switch api {
        case .atomic, .auto:
            guard let a = atomic else { preconditionFailure("atomic API without atomic properties") }
            let blob = try device.createBlob(mode.kernelBytes)
            var props = [
                AtomicProperty(object: connector.id.rawValue, property: a.connector.crtcID, value: UInt64(crtc.rawValue)),
                AtomicProperty(object: crtc.rawValue, property: a.crtc.modeID, value: UInt64(blob.id.rawValue)),
                AtomicProperty(object: crtc.rawValue, property: a.crtc.active, value: 1),
            ]
            props += a.plane.fullScreen(a.planeID, framebuffer: framebuffer, crtc: crtc,
                                        width: UInt64(mode.hdisplay), height: UInt64(mode.vdisplay))
            if let p = a.crtc.vrrEnabled, wantVRR || vrrEnabled {
                props.append(AtomicProperty(object: crtc.rawValue, property: p, value: wantVRR ? 1 : 0))
            }
            try device.atomicCommit(props, flags: [.testOnly, .allowModeset], object: "\(connector.name) \(mode)")
            try device.atomicCommit(props, flags: [.allowModeset], object: "\(connector.name) \(mode)")
            modeBlob = blob
            vrrEnabled = wantVRR
        case .legacy:
            try device.setCRTC(crtc, framebuffer: framebuffer, connectors: [connector.id], mode: mode)
        }
        vrrWanted = wantVRR
        isModeSet = true
        restored = false
    }

    /// The session lost the device (a seat disabled: DRM master is gone): a flip whose event
    /// never came is forgotten, and nothing is restored until ``modeset(framebuffer:vrr:)`` runs
    /// again (the seat's new owner has the CRTC).
    public func sessionLost() {
        flipPending = false
        isModeSet = false
    }

    /// Queues a flip to `framebuffer` at the next vblank with a completion event carrying
    /// `userData` (atomic NONBLOCK | PAGE_FLIP_EVENT, or drmModePageFlip). `extra` properties
    /// (a writeback capture's) go into the same atomic commit; the legacy API takes none (EINVAL).
    public func flip(to framebuffer: FramebufferID, userData: UInt64, extra: [AtomicProperty] = []) throws {
        switch api {
        case .atomic, .auto:
            // The plane is already configured by the modeset: a flip only changes FB_ID.
            guard let a = atomic else { preconditionFailure("atomic API without atomic properties") }
            let fbProperty = AtomicProperty(object: a.planeID.rawValue, property: a.plane.framebufferID, value: UInt64(framebuffer.rawValue))
            let props = extra.isEmpty ? [fbProperty] : [fbProperty] + extra
            try device.atomicCommit(props, flags: [.nonblock, .pageFlipEvent], userData: userData, object: "\(crtc)")
        case .legacy:
            guard extra.isEmpty else {
                throw DRMError(call: "drmModePageFlip", object: "\(crtc)", errno: .invalidArgument)
            }
            try device.pageFlip(crtc, to: framebuffer, flags: .event, userData: userData)
        }
        flipPending = true
    }

    /// Reads events until `deadline` into `events` (see ``DRMDevice/readEvents(until:into:)``);
    /// a flip event for this CRTC clears ``flipPending``. True when a signal interrupted the wait.
    @discardableResult
    public func readEvents(until deadline: Int64, into events: inout [DRMEvent]) throws -> Bool {
        let start = events.count
        let interrupted = device.routesEvents
            ? try device.readEvents(for: crtc, until: deadline, into: &events)
            : try device.readEvents(until: deadline, into: &events)
        for e in events[start...] where e.kind == .flipComplete && (e.crtcID == crtc || e.crtcID.isNone) { flipPending = false }
        return interrupted
    }

    // MARK: Vblank

    /// Probes the vblank interrupt with drmCrtcGetSequence (falling back to drmWaitVBlank):
    /// EOPNOTSUPP means none. Needs the mode set.
    public func probeVBlank() -> VBlankSupport {
        do {
            _ = try device.crtcSequence(crtc)
            return .hardware
        } catch let e as DRMError where e.errno == .eopnotsupp {
            return .none
        } catch {
            do {
                _ = try device.waitVBlankQuery(crtcIndex: crtcIndex)
                return .hardware
            } catch {
                return .none
            }
        }
    }

    /// The current vblank (64-bit sequence and timestamp).
    public func currentVBlank() throws -> VBlankReading {
        do {
            return try device.crtcSequence(crtc)
        } catch let e as DRMError where e.errno == .eopnotsupp || e.errno == .invalidArgument {
            return try device.waitVBlankQuery(crtcIndex: crtcIndex)
        }
    }

    // MARK: Restore

    /// Waits (up to 200 ms) for a pending flip, then puts back what the CRTC showed before:
    /// the original mode and framebuffer, or off. Idempotent; also called from deinit.
    public func restore() throws {
        guard isModeSet, !restored else { return }
        let deadline = device.monotonicNow() + 200_000_000
        while flipPending, device.monotonicNow() < deadline {
            _ = try? readEvents(until: deadline)
        }
        restored = true
        isModeSet = false
        defer { modeBlob = nil }
        if vrrEnabled, let a = atomic, let p = a.crtc.vrrEnabled {
            // Fixed refresh again before the console (or nothing) comes back; a failure here
            // must not keep the console from being restored.
            vrrEnabled = false
            try? device.atomicCommit([AtomicProperty(object: crtc.rawValue, property: p, value: 0)], flags: [], object: "restore \(crtc) VRR_ENABLED")
        }
        if let mode = original.mode, !original.framebufferID.isNone {
            try device.setCRTC(crtc, framebuffer: original.framebufferID, x: original.x, y: original.y,
                               connectors: originalConnectors.isEmpty ? [connector.id] : originalConnectors, mode: mode)
            return
        }
        switch api {
        case .atomic, .auto:
            guard let a = atomic else { preconditionFailure("atomic API without atomic properties") }
            let props = [
                AtomicProperty(object: connector.id.rawValue, property: a.connector.crtcID, value: 0),
                AtomicProperty(object: crtc.rawValue, property: a.crtc.modeID, value: 0),
                AtomicProperty(object: crtc.rawValue, property: a.crtc.active, value: 0),
                AtomicProperty(object: a.planeID.rawValue, property: a.plane.framebufferID, value: 0),
                AtomicProperty(object: a.planeID.rawValue, property: a.plane.crtcID, value: 0),
            ]
            try device.atomicCommit(props, flags: [.allowModeset], object: "restore \(crtc)")
        case .legacy:
            try device.setCRTC(crtc, framebuffer: FramebufferID(0), connectors: [], mode: nil)
        }
    }
}
