#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A drawing target over caller-owned pixels: 32-bit XRGB8888 / ARGB8888 (byte order B, G,
/// R, A in memory; `0xAARRGGBB` as a little-endian `UInt32`). Every pixel written is opaque
/// (alpha byte 0xFF), so the same frame is valid in either format.
///
/// A canvas is a cheap value: it holds the pointer, geometry and a clip rectangle. Every
/// drawing call writes only inside ``clip``; ``clipped(to:)`` narrows it. Banded rendering
/// gives each thread the same canvas clipped to its band (see ``BandedRenderer``).
/// Drawing never reads outside the clip either, so the canvas can be a shadow buffer that
/// is later copied to scanout memory (see ``ShadowBuffer``).
///
/// `@unchecked Sendable`: a canvas is immutable (`let`s) and only points at pixels; threads
/// that share one draw through canvases clipped to disjoint rectangles, and every call writes
/// inside its clip only, so no pixel is written by two threads.
public struct Canvas: @unchecked Sendable {
    /// First byte of row 0.
    public let base: UnsafeMutableRawPointer
    public let width: Int
    public let height: Int
    /// Bytes per row (a multiple of 4, at least `width * 4`).
    public let stride: Int
    /// The pixels drawing may touch, always inside the canvas bounds.
    public let clip: IntRect

    /// A canvas over `height` rows of `stride` bytes starting at `base`.
    /// - Precondition: `stride` is a multiple of 4 and at least `width * 4`.
    public init(base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int) {
        precondition(width >= 0 && height >= 0, "canvas size must not be negative")
        precondition(stride % 4 == 0 && stride >= width * 4, "stride must be a multiple of 4 and hold a row")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
        self.clip = IntRect(x: 0, y: 0, width: width, height: height)
    }

    @inlinable
    init(base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, clip: IntRect) {
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
        self.clip = clip
    }

    /// The full canvas bounds.
    @inlinable public var bounds: IntRect { IntRect(x: 0, y: 0, width: width, height: height) }

    /// The same pixels with the clip narrowed to `rect` (intersected with the current clip).
    @inlinable
    public func clipped(to rect: IntRect) -> Canvas {
        Canvas(base: base, width: width, height: height, stride: stride, clip: clip.intersection(rect))
    }

    /// Pointer to the first pixel of row `y` (no clipping).
    @inlinable @inline(__always)
    public func row(_ y: Int) -> UnsafeMutablePointer<UInt32> {
        (base + y &* stride).assumingMemoryBound(to: UInt32.self)
    }

    /// The pixel at (x, y), or nil outside the canvas (for tests and tools).
    public func pixel(x: Int, y: Int) -> UInt32? {
        guard x >= 0, y >= 0, x < width, y < height else { return nil }
        return row(y)[x]
    }

    // MARK: Rectangles

    /// Fills the whole clip with an opaque colour (alpha is ignored).
    @inlinable
    public func clear(_ color: Color) {
        let c = clip
        if c.isEmpty { return }
        let pixel = color.opaquePixel
        let w = c.width
        if c.minX == 0 && w == width && stride == width &* 4 {
            // Contiguous rows: one long run.
            fillRowsKernel(UnsafeMutableRawPointer(row(c.minY)), stride: 0, count: w &* c.height, rows: 1, pixel)
            return
        }
        fillRowsKernel(UnsafeMutableRawPointer(row(c.minY) + c.minX), stride: stride, count: w, rows: c.height, pixel)
    }

    /// Fills `rect` with `color`, blended by its alpha (opaque colours overwrite).
    @inlinable
    public func fill(_ rect: IntRect, _ color: Color) {
        let r = rect.intersection(clip)
        if r.isEmpty { return }
        let a = color.alpha
        if a == 0 { return }
        let first = UnsafeMutableRawPointer(row(r.minY) + r.minX)
        if a == 255 {
            fillRowsKernel(first, stride: stride, count: r.width, rows: r.height, color.opaquePixel)
        } else {
            blendRowsKernel(first, stride: stride, count: r.width, rows: r.height, ConstantBlend(pixel: color.opaquePixel, alpha: a))
        }
    }

    /// Fills the rectangle at (x, y) of the given size; see ``fill(_:_:)``.
    @inlinable
    public func fillRect(x: Int, y: Int, width w: Int, height h: Int, _ color: Color) {
        fill(IntRect(x: x, y: y, width: w, height: h), color)
    }

    /// Draws a rectangle outline `thickness` pixels wide inside `rect`.
    public func strokeRect(_ rect: IntRect, thickness t: Int, _ color: Color) {
        if rect.isEmpty || t <= 0 { return }
        let t = min(t, (min(rect.width, rect.height) + 1) / 2)
        fill(IntRect(minX: rect.minX, minY: rect.minY, maxX: rect.maxX, maxY: rect.minY + t), color)
        fill(IntRect(minX: rect.minX, minY: rect.maxY - t, maxX: rect.maxX, maxY: rect.maxY), color)
        fill(IntRect(minX: rect.minX, minY: rect.minY + t, maxX: rect.minX + t, maxY: rect.maxY - t), color)
        fill(IntRect(minX: rect.maxX - t, minY: rect.minY + t, maxX: rect.maxX, maxY: rect.maxY - t), color)
    }

    // MARK: Images

    /// Copies `image` onto the canvas with its top-left corner at (`x`, `y`). With `wrap`,
    /// the image instead tiles the whole plane shifted by (`x`, `y`) — the scroll offset — so
    /// every clipped pixel (px, py) gets image pixel ((px − x) mod w, (py − y) mod h).
    /// Opaque copy: the image's alpha is not blended. With `wrap`, each destination row is
    /// copied in pieces (at most two when the image covers the clip once); a copy large
    /// enough to spill the cache uses streaming stores throughout.
    public func blit(_ image: Canvas, x: Int, y: Int, wrap: Bool = false) {
        let iw = image.width, ih = image.height
        if iw == 0 || ih == 0 { return }
        if !wrap {
            let r = IntRect(x: x, y: y, width: iw, height: ih).intersection(clip)
            if r.isEmpty { return }
            let bytes = r.width &* 4
            copyRowsKernel(UnsafeMutableRawPointer(row(r.minY) + r.minX), dstStride: stride,
                           UnsafeRawPointer(image.row(r.minY &- y) + (r.minX &- x)), srcStride: image.stride,
                           bytes: bytes, rows: r.height, from: .readOnce)
            return
        }
        let c = clip
        if c.isEmpty { return }
        // One streaming decision for the whole clip, not per tile.
        let copy = RowCopy(bytes: c.width &* 4, rows: c.height, from: .readOnce)
        var sy0 = (c.minY &- y) % ih
        if sy0 < 0 { sy0 &+= ih }
        var sx0 = (c.minX &- x) % iw
        if sx0 < 0 { sx0 &+= iw }
        let sstride = image.stride
        var py = c.minY
        var sy = sy0
        while py < c.maxY {
            // Rows py..<py+m map to image rows sy..<sy+m without wrapping. Cached copies go
            // row by row, each row's pieces left to right, so the destination is written in
            // address order; streaming copies go tile by tile, all m rows of a piece per call
            // (each call ends with a fence). Each order measured the faster for its kind
            // (docs/raster-bench.md, run 9).
            let m = min(ih &- sy, c.maxY &- py)
            let step = copy.stream ? m : 1
            var d = UnsafeMutableRawPointer(row(py) + c.minX)
            var s = UnsafeRawPointer(image.row(sy))
            var r = 0
            while r < m {
                var px = c.minX
                var sx = sx0
                var dp = d
                while px < c.maxX {
                    let n = min(iw &- sx, c.maxX &- px)
                    copy.copy(dp, dstStride: stride, s + sx &* 4, srcStride: sstride, bytes: n &* 4, rows: step)
                    dp += n &* 4
                    px &+= n
                    sx = 0
                }
                d += step &* stride
                s += step &* sstride
                r &+= step
            }
            py &+= m
            sy = 0
        }
    }
}
