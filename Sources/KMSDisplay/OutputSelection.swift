import DRM

/// Choosing what to drive from user input: the device node, the connector by name, and the
/// mode from "WxH[@HZ]", with one-line errors for every way that can go wrong.

/// A user-facing failure to open or select an output, with one clear line.
///
/// ``kind`` says what went wrong in a way callers can act on (a program that can do without a
/// display, as Cadence's CLI can, falls back to the fake display only for ``Kind/noDevice``). Two errors are equal when their
/// lines are.
public struct OutputSelectionError: Error, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Equatable, Sendable {
        /// The machine has no DRM card at all (/dev/dri has no card* nodes).
        case noDevice
        /// The named node does not exist.
        case noSuchNode
        /// The node exists but this user may not open it (EACCES/EPERM on open).
        case permissionDenied
        /// Another process is DRM master (a compositor, X server or another Cadence).
        case masterHeld
        /// The device refused with EBUSY.
        case busy
        /// VRR was required and the output has none (no VRR range, or the driver cannot enable it).
        case vrrUnavailable
        /// Anything else: not a DRM device, no connector, a bad mode, a driver error…
        case other
    }

    public var description: String
    public var kind: Kind
    public init(_ message: String, kind: Kind = .other) {
        description = message
        self.kind = kind
    }

    public static func == (a: OutputSelectionError, b: OutputSelectionError) -> Bool { a.description == b.description }
}

/// What ``OutputSelection/select(device:connector:mode:)`` picked.
public struct OutputSelection {
    public var connector: Connector
    public var resolution: ModeRequest.Resolution
    /// The refresh asked for with `@HZ`, if any.
    public var requestedHz: Double?
    /// The mode to set.
    public var mode: ModeInfo { resolution.mode }

    /// The note to print when the mode was built rather than listed, else nil.
    public var note: String? {
        switch resolution {
        case .listed: return nil
        case .scaled(let m, let from):
            return "\(connector.name) lists no \(m.hdisplay)x\(m.vdisplay) mode at \(ModeInfo.formatHz(requestedHz ?? m.refreshHz)) Hz: using \(from.description) with its pixel clock scaled \(from.clock) → \(m.clock) kHz (\(ModeInfo.formatHz(m.refreshHz)) Hz)"
        case .cvt(let m):
            return "\(connector.name) lists no \(m.hdisplay)x\(m.vdisplay) mode: using a CVT reduced-blanking timing, clock \(m.clock) kHz, \(m.htotal)x\(m.vtotal) total (\(ModeInfo.formatHz(m.refreshHz)) Hz)"
        }
    }

    /// "listed", "scaled-clock" or "cvt-rb".
    public var source: String {
        switch resolution {
        case .listed: return "listed"
        case .scaled: return "scaled-clock"
        case .cvt: return "cvt-rb"
        }
    }

    /// The line for a machine without any DRM card.
    public static let noDeviceMessage = "no DRM device found: /dev/dri has no card* nodes"

    /// The device node to use: `path`, else the first /dev/dri/card*. Throws a
    /// ``OutputSelectionError/Kind/noDevice`` error when there is none.
    public static func devicePath(_ path: String?, discovered: [String] = DRMDevice.discover()) throws -> String {
        if let path { return path }
        guard let first = discovered.first else {
            throw OutputSelectionError(noDeviceMessage, kind: .noDevice)
        }
        return first
    }

    /// Opens `path` (through `source`: the live /dev/dri by default) and checks it is a DRM
    /// device; `readOnly` uses the source's `openReadOnly` (enough to list it
    /// or read an EDID, not to display).
    public static func open(_ path: String, source: DeviceSource = .live, readOnly: Bool = false) throws -> DRMDevice {
        let dev: DRMDevice
        do {
            dev = try readOnly ? source.openReadOnly(path) : source.open(path)
        } catch let e as DRMError {
            throw failure(e, path: path)
        }
        try check(dev)
        return dev
    }

    /// Fails with one line unless `dev` answers drmGetVersion.
    public static func check(_ dev: DRMDevice) throws {
        do { _ = try dev.version() } catch let e as DRMError { throw failure(e, path: dev.path) }
    }

    /// What to do about a device this user may not open.
    public static let permissionHint = "add your user to the 'video' group (sudo usermod -aG video $USER, then log in again) or run as root"
    /// What to do about a device another DRM master holds.
    public static let masterHint = "stop the compositor or X server on it, or run from a free text VT (Ctrl+Alt+F3)"

    /// The line for a failed open().
    public static func explainOpen(_ e: DRMError, path: String) -> String {
        switch e.errno.rawValue {
        case 2: return "no such device: \(path)"
        case 13, 1: return "permission denied opening \(path): \(permissionHint)"
        default: return "cannot open \(path): \(e)"
        }
    }

    /// The classified one-line error for a DRM error on the device at `path`.
    public static func failure(_ e: DRMError, path: String) -> OutputSelectionError {
        let kind: OutputSelectionError.Kind
        switch (e.call, e.errno.rawValue) {
        case ("open", 2): kind = .noSuchNode
        case ("open", 13), ("open", 1): kind = .permissionDenied
        case ("open", _): kind = .other
        case ("drmSetMaster", _), (_, 13), (_, 1): kind = .masterHeld
        case (_, 16): kind = .busy
        default: kind = .other
        }
        return OutputSelectionError(explain(e, path: path), kind: kind)
    }

    /// The user-facing line for a DRM error on the device at `path`.
    public static func explain(_ e: DRMError, path: String) -> String {
        switch (e.call, e.errno.rawValue) {
        case ("gbm_create_device", _), ("gbm_bo_create", _), ("gbm_bo_map", _):
            return "GBM cannot allocate on \(path) (\(e)): is Mesa's DRI driver for it installed (libgl1-mesa-dri)? The dumb allocator works everywhere"
        case ("choose CRTC", _):
            return "\(path): no CRTC can drive \(e.object ?? "the connector")"
        case (let call, _) where call.hasPrefix("find primary plane") || call.hasPrefix("find property"):
            return "\(path): the driver's atomic interface lacks what Cadence needs (\(call) on \(e.object ?? "?")); try the legacy API"
        case ("open", _):
            return explainOpen(e, path: path)
        case ("drmGetVersion", 25), ("drmGetVersion", 22), ("drmModeGetResources", 25), ("drmModeGetResources", 22):
            return "\(path) is not a DRM device"
        case ("drmSetMaster", _):
            return "\(path) is held by another DRM master (a compositor or X server?): \(masterHint) (\(e))"
        case (_, 13), (_, 1):
            return "\(path) is held by another DRM master: the kernel refused \(e); \(masterHint)"
        case (_, 16):
            return "\(path) is busy (another DRM master or a pending commit): \(e); \(masterHint)"
        case (_, 19):
            return "\(path): the device is gone (\(e))"
        case (let call, 22) where call.hasPrefix("drmModeAtomicCommit") || call == "drmModeSetCrtc":
            return "\(path): the driver rejected the mode: \(e)"
        default:
            return "\(path): \(e)"
        }
    }

    /// The fastest mode `modes` offers at the size of `mode` (same width, height and
    /// interlacing) when it is faster than `mode` by more than 0.5 Hz, else nil: worth a
    /// warning for a display left at 60 Hz that can do more ("stuck at 60").
    public static func fasterMode(than mode: ModeInfo, in modes: [ModeInfo]) -> ModeInfo? {
        let interlaced = mode.flags.contains(.interlace)
        let sameSize = modes.filter {
            $0.hdisplay == mode.hdisplay && $0.vdisplay == mode.vdisplay && $0.flags.contains(.interlace) == interlaced
        }
        guard let fastest = sameSize.max(by: { $0.refreshHz < $1.refreshHz }),
              fastest.refreshHz > mode.refreshHz + 0.5 else { return nil }
        return fastest
    }

    /// Picks the connector (by name, else the first connected one) and the mode (from
    /// "WxH[@HZ]", else the preferred one). Becomes DRM master first so that a device held by
    /// a compositor is reported before anything else.
    public static func select(device dev: DRMDevice, connector name: String?, mode text: String?) throws -> OutputSelection {
        var request: ModeRequest?
        if let text {
            guard let r = ModeRequest(parsing: text) else {
                throw OutputSelectionError("invalid mode '\(text)': expected WxH or WxH@HZ (1 to 1000 Hz), e.g. 1024x768@144")
            }
            request = r
        }
        let conns: [Connector]
        let res: CardResources
        do {
            try dev.acquireMaster()
            res = try dev.resources()
            conns = try dev.connectors()
        } catch let e as DRMError {
            throw failure(e, path: dev.path)
        }
        let conn: Connector
        if let name {
            guard let c = conns.first(where: { $0.name == name }) else {
                throw OutputSelectionError("no connector named \(name) on \(dev.path) (connectors: \(conns.map(\.name).joined(separator: ", ")))")
            }
            guard c.status != .disconnected else { throw OutputSelectionError("connector \(name) is disconnected") }
            conn = c
        } else {
            guard let c = conns.first(where: { $0.status == .connected }) else {
                throw OutputSelectionError("no connected connector on \(dev.path) (connectors: \(conns.map { "\($0.name) \($0.status)" }.joined(separator: ", ")))")
            }
            conn = c
        }
        guard let preferred = conn.preferredMode else { throw OutputSelectionError("connector \(conn.name) lists no modes") }
        guard let request else { return OutputSelection(connector: conn, resolution: .listed(preferred)) }
        if request.width < res.minWidth || request.width > res.maxWidth || request.height < res.minHeight || request.height > res.maxHeight {
            throw OutputSelectionError("mode \(request) is outside what \(dev.path) can scan out (\(res.minWidth)x\(res.minHeight) to \(res.maxWidth)x\(res.maxHeight))")
        }
        guard let r = request.resolve(in: conn.modes) else {
            let sizes = Set(conn.modes.map { "\($0.hdisplay)x\($0.vdisplay)" }).sorted()
            let shown = sizes.prefix(8).joined(separator: " ") + (sizes.count > 8 ? " …" : "")
            throw OutputSelectionError("connector \(conn.name) has no \(request) mode (add @HZ to build one; sizes: \(shown))")
        }
        return OutputSelection(connector: conn, resolution: r, requestedHz: request.hz)
    }
}
