import CRasterSIMD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry points drawing code calls: each fetches the table chosen at start-up (one
/// load, see ``RasterISA``) and calls its C loop, or the portable Swift kernel where the
/// table has none. Dispatch is per span or per rectangle, never per pixel.

/// True when an operation moving `bytes` bytes through the cache should use streaming
/// (non-temporal) stores: from `threshold` (the size of the last-level cache, see
/// `stream_threshold` in dispatch.c) up, where cached stores would only evict and cost a read
/// for ownership of every line. A fill counts the bytes it writes; a copy counts as
/// ``CopySource`` says.
@inlinable @inline(__always)
func streamingPays(bytes: Int, threshold: Int64) -> Bool {
    Int64(bytes) >= threshold
}

/// Where a row copy reads from, which decides how many bytes it moves through the cache.
@usableFromInline
enum CopySource {
    /// A source as large as the destination, read once (a blit, the shadow copy): its bytes
    /// pass through the cache as well as the destination's, so the copy counts twice the
    /// bytes it writes.
    case readOnce
    /// A small source re-read for every row, which stays in cache (a gradient's strip): only
    /// the bytes written count.
    case cacheResident
}

/// True when a copy of `rows` rows of `bytes` bytes from `source`, the whole operation,
/// should use streaming stores at `threshold` (see ``streamingPays(bytes:threshold:)``).
@inlinable @inline(__always)
func copyStreams(bytes: Int, rows: Int, from source: CopySource, threshold: Int64) -> Bool {
    let written = bytes &* rows
    switch source {
    case .readOnce: return streamingPays(bytes: 2 &* written, threshold: threshold)
    case .cacheResident: return streamingPays(bytes: written, threshold: threshold)
    }
}

/// Fills `rows` rows of `count` pixels (row r at `base + r * stride`), with streaming
/// stores when the whole fill is large enough (see ``streamingPays(bytes:threshold:)``: the
/// bytes written).
@inlinable @inline(__always)
func fillRowsKernel(_ base: UnsafeMutableRawPointer, stride: Int, count: Int, rows: Int, _ pixel: UInt32) {
    if count <= 0 || rows <= 0 { return }
    let t = cadence_raster_active()
    if let f = t.pointee.stream_fill_rows, streamingPays(bytes: count &* rows &* 4, threshold: t.pointee.stream_threshold) {
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

/// Copies `rows` rows of `bytes` bytes from `source` in one call, with the path's streaming
/// copy when the copy is large enough (see ``RowCopy``), `memcpy` otherwise.
@inlinable
func copyRowsKernel(_ dst: UnsafeMutableRawPointer, dstStride: Int, _ src: UnsafeRawPointer, srcStride: Int,
                    bytes: Int, rows: Int, from source: CopySource) {
    RowCopy(bytes: bytes, rows: rows, from: source).copy(dst, dstStride: dstStride, src, srcStride: srcStride, bytes: bytes, rows: rows)
}

/// A copy done in one or more calls (a wrapped blit's tiles, a gradient's rows), whose
/// streaming decision is made once for the whole operation (``copyStreams(bytes:rows:from:threshold:)``),
/// never per call: a copy large enough to spill the cache streams throughout.
@usableFromInline
struct RowCopy {
    /// Streaming stores, where the active path has them.
    @usableFromInline let stream: Bool
    /// The active path's row copy for this operation, chosen once: its streaming copy when the
    /// operation streams, else its cached copy (nil: `memcpy`).
    @usableFromInline let kernel: cadence_copy_rows_fn?

    /// A copy of `rows` rows of `bytes` bytes in all (the whole operation) from `source`.
    @inlinable @inline(__always)
    init(bytes: Int, rows: Int, from source: CopySource) {
        let t = cadence_raster_active()
        stream = copyStreams(bytes: bytes, rows: rows, from: source, threshold: t.pointee.stream_threshold)
        kernel = stream ? t.pointee.stream_copy_rows : t.pointee.copy_rows
    }

    /// Copies `rows` rows of `bytes` bytes, part of the operation: the streaming copy when
    /// the operation streams and the path has one; otherwise one `memcpy` when both sides are
    /// packed, else the path's cached row copy (`memcpy` per row where it has none: glibc's
    /// copies of a few KiB use `rep movsb`, which measured slower on the rows of a wrapped
    /// blit than the AVX2 loop, docs/raster-bench.md run 9).
    @inlinable
    func copy(_ dst: UnsafeMutableRawPointer, dstStride: Int, _ src: UnsafeRawPointer, srcStride: Int, bytes: Int, rows: Int) {
        if bytes <= 0 || rows <= 0 { return }
        if stream, let f = kernel {
            f(dst, dstStride, src, srcStride, bytes, rows)
            return
        }
        if dstStride == bytes && srcStride == bytes {
            memcpy(dst, src, bytes &* rows)
            return
        }
        if let f = kernel {
            f(dst, dstStride, src, srcStride, bytes, rows)
            return
        }
        var r = 0
        while r < rows {
            memcpy(dst + r &* dstStride, src + r &* srcStride, bytes)
            r &+= 1
        }
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
    /// The cached row copy, or nil when the path copies rows with `memcpy` (baseline).
    var copyRows: cadence_copy_rows_fn? { table.pointee.copy_rows }
    /// Bytes through the cache from which fills and copies stream (the same on every path).
    var streamThreshold: Int64 { table.pointee.stream_threshold }
}
