import CRasterKernels

/// The widest span kernel this CPU runs (0: portable Swift only; 2: AVX2; 3: AVX-512BW),
/// checked once. All levels produce identical pixels.
@usableFromInline let simdLevel: Int32 = cadence_raster_simd_level()

/// The innermost loops: horizontal runs of pixels. Everything else reduces to these.
/// They take raw row pointers and counts; callers have already clipped.

/// Writes `count` copies of `pixel` starting at `p` (vector stores of 16 pixels at a time).
@inlinable @inline(__always)
func spanFill(_ p: UnsafeMutablePointer<UInt32>, _ count: Int, _ pixel: UInt32) {
    let raw = UnsafeMutableRawPointer(p)
    if count >= 64 && simdLevel > 0 {
        cadence_fill_rect(simdLevel, raw, 0, count, 1, pixel)
        return
    }
    let v = SIMD16<UInt32>(repeating: pixel)
    var i = 0
    while i &+ 16 <= count {
        raw.storeBytes(of: v, toByteOffset: i &<< 2, as: SIMD16<UInt32>.self)
        i &+= 16
    }
    if i &+ 4 <= count {
        let v4 = SIMD4<UInt32>(repeating: pixel)
        while i &+ 4 <= count {
            raw.storeBytes(of: v4, toByteOffset: i &<< 2, as: SIMD4<UInt32>.self)
            i &+= 4
        }
    }
    while i < count {
        p[i] = pixel
        i &+= 1
    }
}

/// Blends `count` pixels at `p` towards a constant colour at a constant alpha.
/// Eight pixels per step as sixteen 16-bit lanes (B,R and G,A channel pairs); the
/// arithmetic is lane-for-lane that of ``ConstantBlend/apply(_:)``, so the result does not
/// depend on where a span starts or ends.
@inlinable @inline(__always)
func spanBlend(_ p: UnsafeMutablePointer<UInt32>, _ count: Int, _ k: ConstantBlend) {
    let raw = UnsafeMutableRawPointer(p)
    var i = 0
    if count >= 16 && simdLevel > 0 {
        cadence_blend_rect(simdLevel, raw, 0, count, 1, k.inv, k.lo, k.hi)
        return
    }
    if count >= 8 {
        let inv = SIMD16<UInt16>(repeating: UInt16(truncatingIfNeeded: k.inv))
        let l0 = UInt16(truncatingIfNeeded: k.lo), l1 = UInt16(truncatingIfNeeded: k.lo &>> 16)
        let h0 = UInt16(truncatingIfNeeded: k.hi), h1 = UInt16(truncatingIfNeeded: k.hi &>> 16)
        let lo = SIMD16<UInt16>(l0, l1, l0, l1, l0, l1, l0, l1, l0, l1, l0, l1, l0, l1, l0, l1)
        let hi = SIMD16<UInt16>(h0, h1, h0, h1, h0, h1, h0, h1, h0, h1, h0, h1, h0, h1, h0, h1)
        let mask = SIMD16<UInt16>(repeating: 0xFF)
        while i &+ 8 <= count {
            let v = raw.loadUnaligned(fromByteOffset: i &<< 2, as: SIMD16<UInt16>.self)
            var a = (v & mask) &* inv &+ lo
            var b = (v &>> 8) &* inv &+ hi
            a = (a &+ (a &>> 8)) &>> 8
            b = (b &+ (b &>> 8)) &>> 8
            raw.storeBytes(of: a | (b &<< 8), toByteOffset: i &<< 2, as: SIMD16<UInt16>.self)
            i &+= 8
        }
    }
    while i < count {
        p[i] = k.apply(p[i])
        i &+= 1
    }
}

/// Fills or blends a run depending on alpha (0 draws nothing, 255 overwrites).
@inlinable @inline(__always)
func spanPaint(_ p: UnsafeMutablePointer<UInt32>, _ count: Int, _ pixel: UInt32, _ alpha: UInt32) {
    if count <= 0 || alpha == 0 { return }
    if alpha >= 255 {
        spanFill(p, count, pixel)
    } else {
        spanBlend(p, count, ConstantBlend(pixel: pixel, alpha: alpha))
    }
}
