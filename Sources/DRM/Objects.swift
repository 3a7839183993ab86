/// Plain value snapshots of KMS objects, as the kernel reported them.

/// The driver behind a device (drmGetVersion).
public struct DriverVersion: Equatable, Sendable {
    /// Driver name: "vkms", "bochs-drm", "virtio_gpu", "i915".
    public var name: String
    public var major: Int, minor: Int, patch: Int
    public var date: String
    public var description: String
    public init(name: String, major: Int, minor: Int, patch: Int, date: String = "", description: String = "") {
        self.name = name; self.major = major; self.minor = minor; self.patch = patch
        self.date = date; self.description = description
    }
    /// "1.0.0".
    public var versionString: String { "\(major).\(minor).\(patch)" }
}

/// The object ids of a card (drmModeGetResources).
public struct CardResources: Equatable, Sendable {
    public var framebuffers: [FramebufferID]
    public var crtcs: [CRTCID]
    public var connectors: [ConnectorID]
    public var encoders: [EncoderID]
    public var minWidth: Int, maxWidth: Int, minHeight: Int, maxHeight: Int
    public init(framebuffers: [FramebufferID] = [], crtcs: [CRTCID], connectors: [ConnectorID], encoders: [EncoderID],
                minWidth: Int = 0, maxWidth: Int = 8192, minHeight: Int = 0, maxHeight: Int = 8192) {
        self.framebuffers = framebuffers; self.crtcs = crtcs; self.connectors = connectors; self.encoders = encoders
        self.minWidth = minWidth; self.maxWidth = maxWidth; self.minHeight = minHeight; self.maxHeight = maxHeight
    }
}

/// Whether something is plugged into a connector.
public enum ConnectionStatus: UInt32, Sendable, CustomStringConvertible {
    case connected = 1, disconnected = 2, unknown = 3
    public var description: String {
        switch self {
        case .connected: return "connected"
        case .disconnected: return "disconnected"
        case .unknown: return "unknown"
        }
    }
}

/// A connector snapshot (drmModeGetConnector).
public struct Connector: Equatable, Sendable {
    public var id: ConnectorID
    /// The encoder currently driving it (0 when none).
    public var encoderID: EncoderID
    /// DRM_MODE_CONNECTOR_* (11 = HDMI-A, 15 = Virtual).
    public var type: UInt32
    /// 1-based index among connectors of the same type.
    public var typeID: UInt32
    public var status: ConnectionStatus
    public var widthMM: Int, heightMM: Int
    public var modes: [ModeInfo]
    public var encoders: [EncoderID]
    /// Property ids with their current values.
    public var properties: [(id: PropertyID, value: UInt64)]

    public init(id: ConnectorID, encoderID: EncoderID = EncoderID(0), type: UInt32, typeID: UInt32,
                status: ConnectionStatus, widthMM: Int = 0, heightMM: Int = 0, modes: [ModeInfo],
                encoders: [EncoderID], properties: [(id: PropertyID, value: UInt64)] = []) {
        self.id = id; self.encoderID = encoderID; self.type = type; self.typeID = typeID; self.status = status
        self.widthMM = widthMM; self.heightMM = heightMM; self.modes = modes; self.encoders = encoders
        self.properties = properties
    }

    public static func == (a: Connector, b: Connector) -> Bool {
        a.id == b.id && a.encoderID == b.encoderID && a.type == b.type && a.typeID == b.typeID
            && a.status == b.status && a.modes == b.modes && a.encoders == b.encoders
            && a.properties.map(\.id) == b.properties.map(\.id) && a.properties.map(\.value) == b.properties.map(\.value)
    }

    /// The kernel's name for it: type name plus type id ("Virtual-1", "HDMI-A-1").
    public var name: String { "\(Self.typeName(type))-\(typeID)" }

    /// The connector type names the kernel uses (drm_connector_enum_list).
    public static func typeName(_ type: UInt32) -> String {
        let names = ["Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO", "LVDS", "Component",
                     "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP", "Virtual", "DSI", "DPI", "Writeback", "SPI", "USB"]
        return Int(type) < names.count ? names[Int(type)] : "Unknown\(type)"
    }

    /// The preferred mode, else the first.
    public var preferredMode: ModeInfo? { modes.first(where: \.isPreferred) ?? modes.first }
}

/// An encoder snapshot (drmModeGetEncoder).
public struct Encoder: Equatable, Sendable {
    public var id: EncoderID
    public var type: UInt32
    /// The CRTC it is attached to (0 when none).
    public var crtcID: CRTCID
    /// Bit i set: it can be driven by the i-th CRTC of ``CardResources/crtcs``.
    public var possibleCRTCs: UInt32
    /// Bit i set: it can drive one CRTC together with the i-th encoder of
    /// ``CardResources/encoders`` (a clone). The kernel always sets the encoder's own bit (a
    /// driver's 0 becomes "only itself").
    public var possibleClones: UInt32
    public init(
        id: EncoderID, type: UInt32 = 0, crtcID: CRTCID = CRTCID(0), possibleCRTCs: UInt32, possibleClones: UInt32 = 0
    ) {
        self.id = id; self.type = type; self.crtcID = crtcID; self.possibleCRTCs = possibleCRTCs
        self.possibleClones = possibleClones
    }
}

/// A CRTC snapshot (drmModeGetCrtc): what it scans out now.
public struct CRTCState: Equatable, Sendable {
    public var id: CRTCID
    /// The framebuffer on screen (0 when none).
    public var framebufferID: FramebufferID
    public var x: Int, y: Int
    /// The mode, or nil when the CRTC is off.
    public var mode: ModeInfo?
    public var gammaSize: Int
    public init(id: CRTCID, framebufferID: FramebufferID = FramebufferID(0), x: Int = 0, y: Int = 0,
                mode: ModeInfo? = nil, gammaSize: Int = 0) {
        self.id = id; self.framebufferID = framebufferID; self.x = x; self.y = y; self.mode = mode
        self.gammaSize = gammaSize
    }
}

/// A plane snapshot (drmModeGetPlane).
public struct Plane: Equatable, Sendable {
    public var id: PlaneID
    public var crtcID: CRTCID
    public var framebufferID: FramebufferID
    /// Bit i set: usable with the i-th CRTC of ``CardResources/crtcs``.
    public var possibleCRTCs: UInt32
    public var formats: [PixelFormat]
    public init(id: PlaneID, crtcID: CRTCID = CRTCID(0), framebufferID: FramebufferID = FramebufferID(0),
                possibleCRTCs: UInt32, formats: [PixelFormat]) {
        self.id = id; self.crtcID = crtcID; self.framebufferID = framebufferID
        self.possibleCRTCs = possibleCRTCs; self.formats = formats
    }
}

/// The kind of plane, from its "type" property.
public enum PlaneKind: UInt64, Sendable, CustomStringConvertible {
    case overlay = 0, primary = 1, cursor = 2
    public var description: String {
        switch self {
        case .overlay: return "overlay"
        case .primary: return "primary"
        case .cursor: return "cursor"
        }
    }
}

/// A property's metadata (drmModeGetProperty).
public struct PropertyInfo: Equatable, Sendable {
    public var id: PropertyID
    public var name: String
    /// DRM_MODE_PROP_* flags (range, enum, blob, bitmask, object, signed range, immutable, atomic).
    public var flags: UInt32
    /// Range bounds or enum values.
    public var values: [UInt64]
    /// Enum names with their values.
    public var enums: [EnumEntry]
    public struct EnumEntry: Equatable, Sendable {
        public var name: String
        public var value: UInt64
        public init(name: String, value: UInt64) { self.name = name; self.value = value }
    }
    public init(id: PropertyID, name: String, flags: UInt32 = 0, values: [UInt64] = [], enums: [EnumEntry] = []) {
        self.id = id; self.name = name; self.flags = flags; self.values = values; self.enums = enums
    }
    /// True when the value is a blob id (DRM_MODE_PROP_BLOB).
    public var isBlob: Bool { flags & 0x10 != 0 }
    /// True when the property cannot be changed (DRM_MODE_PROP_IMMUTABLE).
    public var isImmutable: Bool { flags & 0x4 != 0 }
    /// The enum name of `value`, if this is an enum property.
    public func enumName(_ value: UInt64) -> String? { enums.first { $0.value == value }?.name }
}

/// One property of an object with its current value.
public struct PropertyValue: Equatable, Sendable {
    public var info: PropertyInfo
    public var value: UInt64
    public init(info: PropertyInfo, value: UInt64) { self.info = info; self.value = value }
    /// The value for display: the enum name when there is one.
    public var displayValue: String { info.enumName(value) ?? String(value) }
}

/// A kernel vblank reading: counter and timestamp (CLOCK_MONOTONIC ns).
public struct VBlankReading: Equatable, Sendable {
    public var sequence: UInt64
    public var timestampNs: Int64
    public init(sequence: UInt64, timestampNs: Int64) { self.sequence = sequence; self.timestampNs = timestampNs }
}

/// One event read from the device.
public struct DRMEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A flip (atomic or legacy) completed; the new buffer is on screen.
        case flipComplete
        /// A drmWaitVBlank event.
        case vblank
        /// A drmCrtcQueueSequence event.
        case sequence
    }
    public var kind: Kind
    /// The CRTC (flip events only; 0 otherwise).
    public var crtcID: CRTCID
    /// The kernel sequence: 32-bit for flips and vblank events, 64-bit for sequence events.
    public var sequence: UInt64
    /// Kernel timestamp in ns (µs precision for flip and vblank events).
    public var timestampNs: Int64
    /// The user data given with the request.
    public var userData: UInt64
    public init(kind: Kind, crtcID: CRTCID = CRTCID(0), sequence: UInt64, timestampNs: Int64, userData: UInt64) {
        self.kind = kind; self.crtcID = crtcID; self.sequence = sequence; self.timestampNs = timestampNs
        self.userData = userData
    }
}

/// A 32-bit kernel sequence widened to 64 bits against the last widened value.
///
/// The one place where Cadence turns the kernel's 32-bit vblank counters (flip and vblank
/// events, the `frame` of debugfs CRC lines) into 64-bit sequences that can be compared and
/// subtracted across a wrap (0xFFFF_FFFF → 0): serial-number arithmetic, each value taken as the
/// one congruent to it mod 2³² nearest the newest value so far. Every stream of one CRTC's counter
/// that is compared with another must be widened against the same 64-bit reference (the kernel's
/// 64-bit count, drmCrtcGetSequence, as ``init(anchor:)``; or the other stream's newest value,
/// ``note(_:)``), so that both are in one epoch.
public struct SequenceWidener: Sendable {
    /// The newest 64-bit sequence widened or noted (nil before the first).
    public private(set) var last: UInt64?
    public init() {}
    /// A widener whose first value is interpreted relative to the 64-bit sequence `anchor`
    /// (e.g. from drmCrtcGetSequence), so the high bits are right from the start.
    public init(anchor: UInt64) { last = anchor }
    /// The 64-bit sequence for `raw32`: the value congruent to it mod 2³² nearest after `last`
    /// (a wrap forward is assumed when the low bits go backwards by more than 2³¹). A value that
    /// would come before sequence 0 is 0; ``widenIfAfterZero(_:)`` tells it apart.
    public mutating func widen(_ raw32: UInt32) -> UInt64 {
        widenIfAfterZero(raw32) ?? 0
    }
    /// ``widen(_:)``, but nil (and nothing noted) for a value that would come before sequence 0:
    /// one from before the epoch of the first value, when that was widened without an anchor
    /// (the first value 2 and then 0xFFFF_FFF0, a value from 18 vblanks earlier).
    public mutating func widenIfAfterZero(_ raw32: UInt32) -> UInt64? {
        guard let last else { self.last = UInt64(raw32); return UInt64(raw32) }
        let delta = Int64(Int32(bitPattern: raw32 &- UInt32(truncatingIfNeeded: last)))
        let signed = Int64(bitPattern: last) + delta
        guard signed >= 0 else { return nil }
        let value = UInt64(signed)
        self.last = Swift.max(last, value)
        return value
    }
    /// Notes a 64-bit sequence of the same counter known from elsewhere (another stream already
    /// widened, the kernel's 64-bit count): later values are widened near it.
    public mutating func note(_ sequence: UInt64) {
        last = Swift.max(last ?? sequence, sequence)
    }
}
