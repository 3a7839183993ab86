/// The innermost loops: horizontal runs of pixels. Everything else reduces to these.
/// They take raw row pointers and counts; callers have already clipped. The vector work is
/// in `Kernels.swift` (portable Swift) and the `CRasterSIMD` target, picked per call in
/// `KernelDispatch.swift`.

/// Writes `count` copies of `pixel` starting at `p`.
@inlinable @inline(never)
func spanFill(_ p: UnsafeMutablePointer<UInt32>, _ count: Int, _ pixel: UInt32) {
    fillRowsKernel(UnsafeMutableRawPointer(p), stride: 0, count: count, rows: 1, pixel)
}

/// Blends `count` pixels at `p` towards a constant colour at a constant alpha. The
/// arithmetic is lane-for-lane that of ``ConstantBlend/apply(_:)``, so the result does not
/// depend on where a span starts or ends.
@inlinable @inline(never)
func spanBlend(_ p: UnsafeMutablePointer<UInt32>, _ count: Int, _ k: ConstantBlend) {
    blendRowsKernel(UnsafeMutableRawPointer(p), stride: 0, count: count, rows: 1, k)
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
