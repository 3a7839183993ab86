import CRasterSIMD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry points drawing code calls: each fetches the table chosen at start-up (one
/// load, see ``RasterISA``) and calls its C loop, or the portable Swift kernel where the
/// table has none. Dispatch is per span or per rectangle, never per pixel.

/// True when a fill or copy moving `bytes` bytes through the cache should use streaming
/// (non-temporal) stores: from the size of the last-level cache up, where cached stores
/// would only evict and cost a read for ownership of every line. `bytes` counts what is
/// written, plus what is read when the source is as large (a copy or blit: twice the bytes
/// written); a source that stays in cache (a gradient's strip) does not count.
@inlinable @inline(__always)
func streamingPays(bytes: Int) -> Bool {
    Int64(bytes) >= cadence_raster_active().pointee.stream_threshold
}

/// Fills `rows` rows of `count` pixels (row r at `base + r * stride`), with streaming
/// stores when the whole fill is large enough (see ``streamingPays(bytes:)``: the bytes
/// written).
@inlinable @inline(__always)
func fillRowsKernel(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ pixel: UInt32) {
    if count <= 0 || rows <= 0 { return }
    let t = cadence_raster_active()
    if let f = t.pointee.stream_fill_rows, Int64(count &* rows &* 4) >= t.pointee.stream_threshold {
        f(base, stride, count, rows, pixel)
    } else if let f = t.pointee.fill_rows {
        f(base, stride, count, rows, pixel)
    } else {
        portableFillRows(base, stride: stride, count: count, rows: rows, pixel)
    }
}

/// Source-over blends `rows` rows of `count` pixels towards `k`'s colour.
@inlinable @inline(__always)
func blendRowsKernel(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ k: ConstantBlend) {
    if count <= 0 || rows <= 0 { return }
    if let f = cadence_raster_active().pointee.blend_rows {
        f(base, stride, count, rows, k.inv, k.lo, k.hi)
    } else {
        portableBlendRows(base, stride: stride, count: count, rows: rows, k)
    }
}

/// Coverage blend of `count` pixels, each at its own alpha `mask[i]` (see ``portableBlendMask``).
@inlinable @inline(__always)
func blendMaskKernel(_ dst: UnsafeMutablePointer<UInt32>, _ mask: UnsafePointer<UInt8>, _ count: Int, _ pixel: UInt32) {
    if count <= 0 { return }
    if let f = cadence_raster_active().pointee.blend_mask {
        f(dst, mask, count, pixel)
    } else {
        portableBlendMask(dst, mask, count, pixel)
    }
}

/// Gradient span (see ``portableGradientSpan``).
@inlinable @inline(__always)
func gradientSpanKernel(_ dst: UnsafeMutablePointer<UInt32>, _ count: Int, _ lut: UnsafePointer<UInt32>,
                        _ u: Int64, _ step: Int64, _ alphaBits: UInt32) {
    if count <= 0 { return }
    if let f = cadence_raster_active().pointee.gradient_span {
        f(dst, count, lut, u, step, alphaBits)
    } else {
        portableGradientSpan(dst, count, lut, u, step, alphaBits)
    }
}

/// Copies `rows` rows of `bytes` bytes. With `stream` (decide once for the whole operation
/// with ``streamingPays(bytes:)``) the path's streaming copy is used where it has one;
/// otherwise `memcpy`, once when both sides are packed.
@inlinable
func copyRowsKernel(_ dst: UnsafeMutableRawPointer, dstStride: Int, _ src: UnsafeRawPointer, srcStride: Int,
                    bytes: Int, rows: Int, stream: Bool) {
    if bytes <= 0 || rows <= 0 { return }
    if stream, let f = cadence_raster_active().pointee.stream_copy_rows {
        f(dst, dstStride, src, srcStride, bytes, rows)
        return
    }
    if dstStride == bytes && srcStride == bytes {
        memcpy(dst, src, bytes &* rows)
        return
    }
    var r = 0
    while r < rows {
        memcpy(dst + r &* dstStride, src + r &* srcStride, bytes)
        r &+= 1
    }
}

/// One path's kernels called explicitly, for tests and benchmarks that compare paths in one
/// process (drawing always uses the active table). A nil C entry runs the portable Swift
/// kernel, exactly as the drawing entry points do.
struct KernelPath {
    let isa: RasterISA
    let table: UnsafePointer<cadence_raster_kernels>

    /// The path's kernels, or nil when this CPU or build cannot run it.
    init?(_ isa: RasterISA) {
        guard let t = cadence_raster_table(isa.rawValue) else { return nil }
        self.isa = isa
        table = t
    }

    func fillRows(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ pixel: UInt32) {
        if let f = table.pointee.fill_rows { f(base, stride, count, rows, pixel) } else {
            portableFillRows(base, stride: stride, count: count, rows: rows, pixel)
        }
    }

    func blendRows(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ k: ConstantBlend) {
        if let f = table.pointee.blend_rows { f(base, stride, count, rows, k.inv, k.lo, k.hi) } else {
            portableBlendRows(base, stride: stride, count: count, rows: rows, k)
        }
    }

    func blendMask(_ dst: UnsafeMutablePointer<UInt32>, _ mask: UnsafePointer<UInt8>, _ count: Int, _ pixel: UInt32) {
        if let f = table.pointee.blend_mask { f(dst, mask, count, pixel) } else { portableBlendMask(dst, mask, count, pixel) }
    }

    func gradientSpan(_ dst: UnsafeMutablePointer<UInt32>, _ count: Int, _ lut: UnsafePointer<UInt32>, _ u: Int64, _ step: Int64, _ alphaBits: UInt32) {
        if let f = table.pointee.gradient_span { f(dst, count, lut, u, step, alphaBits) } else {
            portableGradientSpan(dst, count, lut, u, step, alphaBits)
        }
    }

    /// The streaming fill, or nil when the path has none (aarch64).
    var streamFillRows: cadence_fill_rows_fn? { table.pointee.stream_fill_rows }
    /// The streaming copy, or nil when the path has none (aarch64).
    var streamCopyRows: cadence_copy_rows_fn? { table.pointee.stream_copy_rows }
}
