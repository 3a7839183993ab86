import CRasterSIMD
/// The pixel kernels every fill and blend reduces to, in portable Swift SIMD: the baseline
/// path, and the definition of the arithmetic every other path reproduces bit for bit.
///
/// They compile to whatever vector width the build targets: SSE2 (two 128-bit registers
/// per `SIMD16<UInt16>`) in the default baseline x86-64 build, NEON on aarch64. Wider paths
/// (the AVX2 loops in the `CRasterSIMD` target) are picked at run time; see
/// `KernelDispatch.swift` and ``RasterISA``. RasterTests compare every path with these.
///
/// Spans are processed in whole vectors; a span that is not a multiple of the vector width
/// ends with one more vector that overlaps the previous one. For fills the overlap rewrites
/// the same value; for blends the overlapping vector is loaded before the main loop runs, so
/// every pixel is blended exactly once from its original value. Nothing outside the span is
/// read or written.

/// Blends eight pixels viewed as sixteen 16-bit lanes, each lane one channel pair (B|G<<8 or
/// R|A<<8); the low bytes (B, R) and high bytes (G, A) are blended separately. Per channel, `x = d·inv + c` where the constant `c`
/// already holds `s·a + 128` (≤ 65153), and `round((x − 128) / 255)` is
/// `(x + (x >> 8)) >> 8` — exact for every x in range, no division.
@inlinable @inline(__always)
func blendVector(_ v: SIMD16<UInt16>, _ inv: SIMD16<UInt16>, _ lo: SIMD16<UInt16>, _ hi: SIMD16<UInt16>) -> SIMD16<UInt16> {
    let low = SIMD16<UInt16>(repeating: 0x00FF)
    let high = SIMD16<UInt16>(repeating: 0xFF00)
    // Blue and red (the low byte of each 16-bit lane), then green and alpha (the high byte).
    let a = (v & low) &* inv &+ lo
    let b = (v &>> 8) &* inv &+ hi
    // a: rounded quotient in the low byte; b: the same quotient already in the high byte.
    return ((a &+ (a &>> 8)) &>> 8) | ((b &+ (b &>> 8)) & high)
}

/// The same on four pixels (eight 16-bit lanes), for spans shorter than eight pixels.
@inlinable @inline(__always)
func blendVector4(_ v: SIMD8<UInt16>, _ inv: SIMD8<UInt16>, _ lo: SIMD8<UInt16>, _ hi: SIMD8<UInt16>) -> SIMD8<UInt16> {
    let low = SIMD8<UInt16>(repeating: 0x00FF)
    let high = SIMD8<UInt16>(repeating: 0xFF00)
    let a = (v & low) &* inv &+ lo
    let b = (v &>> 8) &* inv &+ hi
    return ((a &+ (a &>> 8)) &>> 8) | ((b &+ (b &>> 8)) & high)
}

/// Writes `count` copies of `pixel` at `p`: 64 pixels per step, then whole 16-pixel vectors,
/// then one final vector ending exactly at the span's end (overlapping the previous one).
@inlinable @inline(__always)
func fillKernel(_ p: UnsafeMutableRawPointer, _ count: Int, _ pixel: UInt32) {
    if count < 16 {
        if count >= 8 {
            let v = SIMD8<UInt32>(repeating: pixel)
            p.storeBytes(of: v, as: SIMD8<UInt32>.self)
            p.storeBytes(of: v, toByteOffset: (count &- 8) &<< 2, as: SIMD8<UInt32>.self)
        } else if count >= 4 {
            let v = SIMD4<UInt32>(repeating: pixel)
            p.storeBytes(of: v, as: SIMD4<UInt32>.self)
            p.storeBytes(of: v, toByteOffset: (count &- 4) &<< 2, as: SIMD4<UInt32>.self)
        } else {
            var i = 0
            while i < count {
                p.storeBytes(of: pixel, toByteOffset: i &<< 2, as: UInt32.self)
                i &+= 1
            }
        }
        return
    }
    let v = SIMD16<UInt32>(repeating: pixel)
    var i = 0
    while i &+ 64 <= count {
        let q = p + (i &<< 2)
        q.storeBytes(of: v, as: SIMD16<UInt32>.self)
        q.storeBytes(of: v, toByteOffset: 64, as: SIMD16<UInt32>.self)
        q.storeBytes(of: v, toByteOffset: 128, as: SIMD16<UInt32>.self)
        q.storeBytes(of: v, toByteOffset: 192, as: SIMD16<UInt32>.self)
        i &+= 64
    }
    while i &+ 16 <= count {
        p.storeBytes(of: v, toByteOffset: i &<< 2, as: SIMD16<UInt32>.self)
        i &+= 16
    }
    if i < count {
        p.storeBytes(of: v, toByteOffset: (count &- 16) &<< 2, as: SIMD16<UInt32>.self)
    }
}

/// Fills `rows` rows of `count` pixels, row r starting `r * stride` bytes after `base`.
@inlinable
func portableFillRows(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ pixel: UInt32) {
    var r = 0
    var p = base
    while r < rows {
        fillKernel(p, count, pixel)
        p += stride
        r &+= 1
    }
}

/// Source-over blends `count` pixels at `p` towards the colour of `k`; see ``blendVector``.
/// Sixteen pixels per step from the first 32-byte boundary, then eight, then overlapping
/// vectors of eight for the pixels before that boundary and after the last whole step
/// (loaded first, stored last). Spans under eight pixels use four-pixel vectors the same way,
/// and spans under four the scalar ``ConstantBlend/apply(_:)``.
@inlinable @inline(__always)
func blendKernel(_ p: UnsafeMutableRawPointer, _ count: Int, _ k: ConstantBlend) {
    if count < 8 {
        if count >= 4 {
            let inv = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: k.inv))
            let lo = unsafeBitCast(SIMD4<UInt32>(repeating: k.lo), to: SIMD8<UInt16>.self)
            let hi = unsafeBitCast(SIMD4<UInt32>(repeating: k.hi), to: SIMD8<UInt16>.self)
            let tailOffset = (count &- 4) &<< 2
            let tail = p.loadUnaligned(fromByteOffset: tailOffset, as: SIMD8<UInt16>.self)
            let head = p.loadUnaligned(as: SIMD8<UInt16>.self)
            p.storeBytes(of: blendVector4(head, inv, lo, hi), as: SIMD8<UInt16>.self)
            p.storeBytes(of: blendVector4(tail, inv, lo, hi), toByteOffset: tailOffset, as: SIMD8<UInt16>.self)
        } else {
            var i = 0
            while i < count {
                let o = i &<< 2
                p.storeBytes(of: k.apply(p.load(fromByteOffset: o, as: UInt32.self)), toByteOffset: o, as: UInt32.self)
                i &+= 1
            }
        }
        return
    }
    let inv = SIMD16<UInt16>(repeating: UInt16(truncatingIfNeeded: k.inv))
    let lo = unsafeBitCast(SIMD8<UInt32>(repeating: k.lo), to: SIMD16<UInt16>.self)
    let hi = unsafeBitCast(SIMD8<UInt32>(repeating: k.hi), to: SIMD16<UInt16>.self)
    // The first and last eight pixels are loaded before anything is written and stored
    // after the loop, so the loop can start at a 32-byte boundary (no access splits a cache
    // line) and end on whole vectors.
    let tailOffset = (count &- 8) &<< 2
    let tail = p.loadUnaligned(fromByteOffset: tailOffset, as: SIMD16<UInt16>.self)
    let head = p.loadUnaligned(as: SIMD16<UInt16>.self)
    let skip = ((32 &- (Int(bitPattern: p) & 31)) & 31) &>> 2
    var i = skip
    while i &+ 16 <= count {
        let q = p + (i &<< 2)
        let v0 = q.loadUnaligned(as: SIMD16<UInt16>.self)
        let v1 = q.loadUnaligned(fromByteOffset: 32, as: SIMD16<UInt16>.self)
        q.storeBytes(of: blendVector(v0, inv, lo, hi), as: SIMD16<UInt16>.self)
        q.storeBytes(of: blendVector(v1, inv, lo, hi), toByteOffset: 32, as: SIMD16<UInt16>.self)
        i &+= 16
    }
    if i &+ 8 <= count {
        let o = i &<< 2
        let v = p.loadUnaligned(fromByteOffset: o, as: SIMD16<UInt16>.self)
        p.storeBytes(of: blendVector(v, inv, lo, hi), toByteOffset: o, as: SIMD16<UInt16>.self)
        i &+= 8
    }
    if i < count {
        p.storeBytes(of: blendVector(tail, inv, lo, hi), toByteOffset: tailOffset, as: SIMD16<UInt16>.self)
    }
    if skip != 0 {
        p.storeBytes(of: blendVector(head, inv, lo, hi), as: SIMD16<UInt16>.self)
    }
}

/// Asks for every cache line of the `bytes` bytes at `p` ahead of use.
///
/// The prefetch is LLVM's prefetch intrinsic (`cadence_prefetch_write`, CRasterSIMD: for
/// writing, locality 3 = keep in every cache level). Swift has no prefetch of its own; a plain
/// load that touches the line instead measured 7.2 ms against 4.8 ms for `rects` at 1080p (no
/// prefetch: ~9 ms), because a missing load holds up retirement and a prefetch does not.
@inlinable @inline(__always)
func prefetchRow(_ p: UnsafeMutableRawPointer, _ bytes: Int) {
    var o = 0
    while o < bytes {
        cadence_prefetch_write(p + o)
        o &+= 64
    }
    cadence_prefetch_write(p + (bytes &- 1))
}

/// Blends `rows` rows of `count` pixels, row r starting `r * stride` bytes after `base`.
/// Rows of a rectangle are a stride apart, which the hardware prefetcher does not follow,
/// so each row asks for the row two below it before blending.
@inlinable
func portableBlendRows(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ k: ConstantBlend) {
    if count <= 0 { return }
    var r = 0
    var p = base
    let bytes = count &<< 2
    while r < rows {
        if r &+ 2 < rows { prefetchRow(p + (stride &<< 1), bytes) }
        blendKernel(p, count, k)
        p += stride
        r &+= 1
    }
}

/// Coverage blend: `dst[i] = blendPixel(dst[i], pixel, mask[i])` for `count` pixels, eight
/// at a time with each pixel's alpha in both of its 16-bit lanes (`inv = 255 − a`,
/// `c = s·a + 128`), which is ``blendPixel(_:_:_:)`` lane for lane. A zero mask byte leaves
/// the pixel as it is (as blendPixel does); `pixel` must be opaque.
@inlinable
func portableBlendMask(_ dst: UnsafeMutablePointer<UInt32>, _ mask: UnsafePointer<UInt8>, _ count: Int, _ pixel: UInt32) {
    let slo = unsafeBitCast(SIMD8<UInt32>(repeating: pixel & 0x00FF_00FF), to: SIMD16<UInt16>.self)
    let shi = unsafeBitCast(SIMD8<UInt32>(repeating: (pixel &>> 8) & 0x00FF_00FF), to: SIMD16<UInt16>.self)
    let k255 = SIMD16<UInt16>(repeating: 255), k128 = SIMD16<UInt16>(repeating: 128)
    let raw = UnsafeMutableRawPointer(dst)
    var i = 0
    while i &+ 8 <= count {
        let m8 = UnsafeRawPointer(mask + i).loadUnaligned(as: SIMD8<UInt8>.self)
        if m8 != SIMD8<UInt8>() {
            let m32 = SIMD8<UInt32>(truncatingIfNeeded: m8)
            let a2 = unsafeBitCast(m32 | (m32 &<< 16), to: SIMD16<UInt16>.self)
            let o = i &<< 2
            let v = raw.loadUnaligned(fromByteOffset: o, as: SIMD16<UInt16>.self)
            let out = blendVector(v, k255 &- a2, slo &* a2 &+ k128, shi &* a2 &+ k128)
            raw.storeBytes(of: out, toByteOffset: o, as: SIMD16<UInt16>.self)
        }
        i &+= 8
    }
    while i < count {
        let a = UInt32(mask[i])
        if a != 0 { dst[i] = blendPixel(dst[i], pixel, a) }
        i &+= 1
    }
}

/// Gradient span: `dst[i] = lut[clamp((u + i·step) >> 16, 0, 255)] | alphaBits`, positions
/// in wrapping 64-bit fixed point (see ``Canvas/fillLinearGradient(_:from:to:_:)``).
@inlinable
func portableGradientSpan(_ dst: UnsafeMutablePointer<UInt32>, _ count: Int, _ lut: UnsafePointer<UInt32>,
                          _ u0: Int64, _ step: Int64, _ alphaBits: UInt32) {
    var u = u0
    var i = 0
    while i < count {
        dst[i] = lut[Int(truncatingIfNeeded: min(max(u &>> 16, 0), 255))] | alphaBits
        u &+= step
        i &+= 1
    }
}
