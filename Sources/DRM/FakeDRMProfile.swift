/// A device profile for ``FakeDRMDevice``: the output of `drm_info -j` (Debian package
/// drm-info) for one card, plus an optional `"cadence"` object for timing, so that the real KMS
/// code runs over a captured card.
///
/// From drm_info's object for the first node (`"/dev/dri/card0": {…}`) only what the fake
/// device models is read: `driver` (name, desc, version, `caps`, `client_caps.ATOMIC`),
/// `connectors` (id, type, status, phy_width/phy_height, encoders, modes, range properties such
/// as `vrr_capable`, the `EDID` property's `data` when it is a hex string or a byte array),
/// `encoders` (id, type, possible_crtcs), `crtcs` (id, the mode it shows and its fb_id) and
/// `planes` (id, possible_crtcs, formats, the `type` property). Everything else is ignored.
/// drm_info leaves blob data such as the EDID null, so `"cadence": {"edid": {"Virtual-1":
/// "00ffffffffffff00…"}}` gives a connector its EDID by name. The other `"cadence"` keys:
/// `vblank` (false: no vblank interrupt, like bochs and virtio-gpu; default true),
/// `refreshOverrideHz` (the vblank period follows this rate, not the mode's timing),
/// `vblankJitterUs` (± on every event timestamp), `eventLatencyUs` (timestamp to readable,
/// default 40), `commitLatencyUs` (commit to completion without vblank, default 1000),
/// `vrrResponseUs` (under VRR: a flip's commit to the start of the refresh it starts, default
/// 100), `crcSources` (the CRC sources each CRTC offers in debugfs; default `["auto"]` for vkms,
/// none for any other driver), `writebackFormats` (fourccs such as `"XR24"`: the formats every
/// writeback connector of the profile writes, replacing the `WRITEBACK_PIXEL_FORMATS` data of
/// drm_info's type-18 connectors; an empty array: the driver has no writeback connector) and
/// `description` (else the driver's). A connector with `vrr_capable` 1 behaves as an
/// adaptive-sync panel once `VRR_ENABLED` is set, in the range ``setVRRRanges(_:)`` gives it
/// from its EDID (this module decodes no EDID: the caller passes the decoder).
///
/// The parser takes the JSON already decoded (``JSON``), so this module needs no JSON reader;
/// a profile of the wrong shape throws ``FakeDRMProfileError`` saying what and where.
public struct FakeDRMProfile: Sendable {
    /// A decoded JSON value.
    public enum JSON: Equatable, Sendable {
        case null
        case bool(Bool)
        /// A number that is an exact integer (as the JSON reader gave it).
        case integer(Int)
        case number(Double)
        case string(String)
        case array([JSON])
        case object([String: JSON])

        /// The members of an object, else nil.
        public var object: [String: JSON]? { if case .object(let o) = self { return o } else { return nil } }
        /// The elements of an array, else nil.
        public var array: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
        /// The text of a string, else nil.
        public var string: String? { if case .string(let s) = self { return s } else { return nil } }
        /// true or false, else nil (numbers are not booleans).
        public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
        /// A number's value (never a boolean's), else nil.
        public var number: Double? {
            switch self {
            case .integer(let i): return Double(i)
            case .number(let d): return d
            default: return nil
            }
        }
        /// A number with an integral value that fits an Int, else nil.
        public var int: Int? {
            switch self {
            case .integer(let i): return i
            case .number(let d): return d == d.rounded() && abs(d) < 9e18 ? Int(d) : nil
            default: return nil
            }
        }
    }

    /// The card node it answers to (drm_info's key, e.g. "/dev/dri/card0").
    public var node: String
    /// Its description (`"cadence": {"description": …}`), or the driver's.
    public var description: String

    var driver: DriverVersion
    var capabilities: [DeviceCapability: UInt64]
    var supportsAtomic: Bool
    var connectors: [FakeDRMDevice.FakeConnector]
    var encoders: [Encoder]
    var crtcs: [CRTCState]
    var planes: [Plane]
    var planeKinds: [PlaneKind]
    var timing: Timing
    var presets: [Preset]
    /// The CRC sources each CRTC offers (``FakeDRMDevice/crcSources``).
    var crcSources: [String]
    /// The writeback connectors (``FakeDRMDevice/writebackConnectors``).
    var writebackConnectors: [FakeWritebackConnector]

    /// A CRTC that shows a mode when the profile was captured.
    struct Preset: Sendable {
        var index: Int
        var mode: ModeInfo
        var framebuffer: UInt32
        var connectors: [ConnectorID]
    }

    /// Gives `device` the profile's driver, capabilities, objects, timing and the modes its
    /// CRTCs showed.
    public func configure(_ device: FakeDRMDevice) {
        device.driver = driver
        device.capabilities = capabilities
        device.supportsAtomic = supportsAtomic
        device.connectors = connectors
        device.encoders = encoders
        device.crtcs = crtcs
        device.planes = Array(zip(planes, planeKinds)).map { (plane: $0.0, kind: $0.1) }
        device.hasVBlank = timing.vblank
        device.refreshOverrideHz = timing.refreshOverrideHz
        device.vblankJitterNs = timing.jitterNs
        device.receiptLatencyNs = timing.eventLatencyNs
        device.commitLatencyNs = timing.commitLatencyNs
        device.vrrResponseNs = timing.vrrResponseNs
        device.crcSources = crcSources
        device.writebackConnectors = writebackConnectors
        for p in presets {
            device.preset(crtcIndex: p.index, mode: p.mode, framebuffer: FramebufferID(p.framebuffer), connectors: p.connectors)
        }
    }

    /// Gives each connector with an EDID the adaptive-sync range `range` decodes from it (nil or
    /// an empty range: none), as amdgpu reads the panel's range from its EDID.
    public mutating func setVRRRanges(_ range: (_ edid: [UInt8]) -> ClosedRange<Double>?) {
        for i in connectors.indices {
            if let e = connectors[i].edid, let r = range(e), r.upperBound > r.lowerBound { connectors[i].vrrRangeHz = r }
        }
    }

    /// A new fake device at ``node`` playing the profile. `wallClock` makes waits sleep for
    /// real, `seed` seeds the timestamp jitter; ``FakeDRMDevice/simulatorName`` is "fake-drm"
    /// ("fake-drm-wall" on the wall clock), so that no summary takes it for a real panel.
    public func makeDevice(wallClock: Bool, seed: UInt64) -> FakeDRMDevice {
        let d = FakeDRMDevice(path: node)
        configure(d)
        d.usesWallClock = wallClock
        d.jitterSeed = seed
        d.simulatorName = wallClock ? "fake-drm-wall" : "fake-drm"
        return d
    }
}

/// A profile of the wrong shape: what is missing or wrong, with where (one line).
public struct FakeDRMProfileError: Error, Equatable, CustomStringConvertible {
    /// The line, e.g. `/dev/dri/card0: no connectors array`.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
