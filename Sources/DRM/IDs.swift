/// Typed identifiers of KMS objects, so a CRTC id can never be passed where a connector
/// id is expected.

/// A kernel mode-object id of one specific kind.
public protocol DRMObjectID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible
where RawValue == UInt32 {
    init(_ rawValue: UInt32)
    /// What the object is called in messages ("CRTC", "connector").
    static var kind: String { get }
}

extension DRMObjectID {
    public init(rawValue: UInt32) { self.init(rawValue) }
    public var description: String { "\(Self.kind) \(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    /// True for the kernel's "no object" id 0.
    public var isNone: Bool { rawValue == 0 }
}

/// Identifies a connector (a physical or virtual output port).
public struct ConnectorID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "connector" }
}

/// Identifies an encoder.
public struct EncoderID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "encoder" }
}

/// Identifies a CRTC (a scanout engine producing one timing).
public struct CRTCID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "CRTC" }
}

/// Identifies a plane.
public struct PlaneID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "plane" }
}

/// Identifies a framebuffer registered with AddFB2.
public struct FramebufferID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "framebuffer" }
}

/// Identifies a mode-object property.
public struct PropertyID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "property" }
}

/// Identifies a property blob (EDID, MODE_ID).
public struct BlobID: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "blob" }
}

/// A GEM buffer handle (dumb buffer or GBM BO), local to one open file.
public struct BufferHandle: DRMObjectID {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static var kind: String { "buffer handle" }
}

/// The kind of a mode object, for property queries (DRM_MODE_OBJECT_*).
public struct ObjectType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let crtc = ObjectType(rawValue: 0xcccc_cccc)
    public static let connector = ObjectType(rawValue: 0xc0c0_c0c0)
    public static let encoder = ObjectType(rawValue: 0xe0e0_e0e0)
    public static let plane = ObjectType(rawValue: 0xeeee_eeee)
    public static let framebuffer = ObjectType(rawValue: 0xfbfb_fbfb)
}

/// Flags of a legacy page flip (DRM_MODE_PAGE_FLIP_*).
public struct PageFlipFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Deliver a page-flip event when the flip completes.
    public static let event = PageFlipFlags(rawValue: 0x01)
    /// Flip without waiting for vblank (tearing).
    public static let async = PageFlipFlags(rawValue: 0x02)
}

/// Flags of an atomic commit (DRM_MODE_ATOMIC_* and DRM_MODE_PAGE_FLIP_EVENT).
public struct AtomicFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Deliver a page-flip event per CRTC when the commit completes.
    public static let pageFlipEvent = AtomicFlags(rawValue: 0x01)
    /// Only check the commit; change nothing.
    public static let testOnly = AtomicFlags(rawValue: 0x100)
    /// Return at once; completion arrives as an event.
    public static let nonblock = AtomicFlags(rawValue: 0x200)
    /// The commit may need a full modeset.
    public static let allowModeset = AtomicFlags(rawValue: 0x400)
}

/// Flags of a CRTC sequence request (DRM_CRTC_SEQUENCE_*).
public struct SequenceFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The sequence is relative to the current one.
    public static let relative = SequenceFlags(rawValue: 0x1)
    /// If the sequence already passed, use the next one.
    public static let nextOnMiss = SequenceFlags(rawValue: 0x2)
}

/// Flags of a GBM buffer object (GBM_BO_USE_*).
public struct GBMUsage: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let scanout = GBMUsage(rawValue: 1 << 0)
    public static let rendering = GBMUsage(rawValue: 1 << 2)
    public static let write = GBMUsage(rawValue: 1 << 3)
    public static let linear = GBMUsage(rawValue: 1 << 4)
}

/// A DRM fourcc pixel format.
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// 32-bit x:R:G:B little-endian, the format every KMS driver scans out.
    public static let xrgb8888 = PixelFormat(rawValue: fourcc("XR24"))
    public static let argb8888 = PixelFormat(rawValue: fourcc("AR24"))

    static func fourcc(_ s: String) -> UInt32 {
        var v: UInt32 = 0
        for (i, b) in s.utf8.prefix(4).enumerated() { v |= UInt32(b) << (8 * UInt32(i)) }
        return v
    }
    /// The four characters ("XR24").
    public var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt32($0))) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
