/// Colours and the exact 8-bit blend arithmetic every drawing path shares.

/// A non-premultiplied 8-bit colour, stored as `0xAARRGGBB` (the in-register layout of a
/// little-endian XRGB8888/ARGB8888 pixel).
public struct Color: Equatable, Hashable, Sendable {
    /// `0xAARRGGBB`.
    public var argb: UInt32

    /// A colour from its packed `0xAARRGGBB` value.
    @inlinable public init(argb: UInt32) { self.argb = argb }

    /// An opaque colour from packed `0xRRGGBB`.
    @inlinable public init(rgb: UInt32) { self.argb = 0xFF00_0000 | (rgb & 0xFF_FFFF) }

    /// A colour from its components (0...255 each).
    @inlinable
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        argb = UInt32(a) << 24 | UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
    }

    @inlinable public var alpha: UInt32 { argb >> 24 }
    @inlinable public var red: UInt8 { UInt8(truncatingIfNeeded: argb >> 16) }
    @inlinable public var green: UInt8 { UInt8(truncatingIfNeeded: argb >> 8) }
    @inlinable public var blue: UInt8 { UInt8(truncatingIfNeeded: argb) }

    /// The same colour with alpha `a`.
    @inlinable public func withAlpha(_ a: UInt8) -> Color { Color(argb: (argb & 0xFF_FFFF) | UInt32(a) << 24) }

    /// The same colour, opaque (the pixel value written for it).
    @inlinable public var opaquePixel: UInt32 { argb | 0xFF00_0000 }

    public static let black = Color(rgb: 0x000000)
    public static let white = Color(rgb: 0xFFFFFF)
    public static let red = Color(rgb: 0xFF0000)
    public static let green = Color(rgb: 0x00FF00)
    public static let blue = Color(rgb: 0x0000FF)
    public static let yellow = Color(rgb: 0xFFFF00)
    public static let clear = Color(argb: 0)
}

/// Source-over blending of one pixel: `dst = (src·a + dst·(255−a)) / 255`, rounded exactly,
/// on all four channels at once (the source alpha channel counts as 255, so an opaque
/// destination stays opaque). `src` must have alpha 0xFF; `a` is 0...255.
@inlinable @inline(__always)
public func blendPixel(_ dst: UInt32, _ src: UInt32, _ a: UInt32) -> UInt32 {
    let inv = 255 &- a
    var lo = (dst & 0x00FF_00FF) &* inv &+ (src & 0x00FF_00FF) &* a &+ 0x0080_0080
    var hi = ((dst &>> 8) & 0x00FF_00FF) &* inv &+ ((src &>> 8) & 0x00FF_00FF) &* a &+ 0x0080_0080
    lo = ((lo &+ ((lo &>> 8) & 0x00FF_00FF)) &>> 8) & 0x00FF_00FF
    hi = ((hi &+ ((hi &>> 8) & 0x00FF_00FF)) &>> 8) & 0x00FF_00FF
    return lo | (hi &<< 8)
}

/// A colour prepared for blending at one fixed alpha: the source terms premultiplied once,
/// so each pixel costs two multiplies per channel pair. Produces exactly ``blendPixel(_:_:_:)``.
@usableFromInline
struct ConstantBlend {
    @usableFromInline let inv: UInt32
    @usableFromInline let lo: UInt32
    @usableFromInline let hi: UInt32

    @inlinable @inline(__always)
    init(pixel src: UInt32, alpha a: UInt32) {
        inv = 255 &- a
        lo = (src & 0x00FF_00FF) &* a &+ 0x0080_0080
        hi = ((src &>> 8) & 0x00FF_00FF) &* a &+ 0x0080_0080
    }

    @inlinable @inline(__always)
    func apply(_ dst: UInt32) -> UInt32 {
        var l = (dst & 0x00FF_00FF) &* inv &+ lo
        var h = ((dst &>> 8) & 0x00FF_00FF) &* inv &+ hi
        l = ((l &+ ((l &>> 8) & 0x00FF_00FF)) &>> 8) & 0x00FF_00FF
        h = ((h &+ ((h &>> 8) & 0x00FF_00FF)) &>> 8) & 0x00FF_00FF
        return l | (h &<< 8)
    }
}
