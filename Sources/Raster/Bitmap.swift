#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Pixels owned by Cadence: 64-byte aligned (2 MiB aligned with a huge-page hint when large), rows of `width * 4` bytes, zero-filled (black,
/// alpha 0) at creation. Used as the cached shadow buffer a frame is rendered into, and as
/// an image source for ``Canvas/blit(_:x:y:wrap:)``.
///
/// `@unchecked Sendable`: every property is a `let`; the pixels behind ``base`` are shared
/// memory whose writers (a banded render: disjoint rows per thread; one frame at a time per
/// shadow buffer) are kept apart by the code that draws, exactly as with ``Canvas``.
public final class Bitmap: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Bytes per row.
    public let stride: Int
    /// First byte of row 0.
    public let base: UnsafeMutableRawPointer
    private let memory: PixelMemory

    /// Allocates a `width`×`height` bitmap.
    /// - Precondition: both dimensions are at least 1.
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "bitmap size must be positive")
        self.width = width
        self.height = height
        stride = width * 4
        let bytes = stride * height
        memory = PixelMemory.allocate(bytes: bytes)
        base = memory.base
    }

    deinit { memory.free() }

    /// A canvas drawing into this bitmap (valid while the bitmap is alive).
    public var canvas: Canvas { Canvas(base: base, width: width, height: height, stride: stride) }

    /// Copies the whole frame into `destination` (rows of `destinationStride` bytes, at least
    /// `width * 4`), in one sequential pass of row copies: the only access a scanout buffer
    /// should see. Nothing is read back from `destination`.
    public func copy(to destination: UnsafeMutableRawPointer, stride destinationStride: Int) {
        ShadowCopy.copy(from: canvas, to: destination, stride: destinationStride)
    }
}

/// A frame is drawn into a cached shadow ``Bitmap`` and copied once into the scanout buffer.
public typealias ShadowBuffer = Bitmap

/// The one copy from a shadow canvas to (write-combined, uncached) scanout memory.
public enum ShadowCopy {
    /// Copies all of `source` (ignoring its clip) to `destination`, top row first, in one
    /// kernel call: streaming (non-temporal) stores once the frame is large enough to spill
    /// the cache (see ``RasterISA``), `memcpy` below that. Never reads `destination`.
    /// - Precondition: `stride >= source.width * 4`.
    public static func copy(from source: Canvas, to destination: UnsafeMutableRawPointer, stride: Int) {
        precondition(stride >= source.width * 4, "destination rows are too short")
        let rowBytes = source.width * 4
        copyRowsKernel(destination, dstStride: stride, UnsafeRawPointer(source.base), srcStride: source.stride,
                       bytes: rowBytes, rows: source.height, from: .readOnce)
    }
}
