import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits drawing into horizontal bands across threads. Each band draws the whole frame
/// through a canvas clipped to the band, and every primitive's pixels depend only on the
/// shape and their own row, so the result equals single-threaded drawing bit for bit.
public struct BandedRenderer: Sendable {
    /// Number of threads (bands run on the shared Dispatch pool).
    public let threads: Int
    /// Number of bands drawn per frame (`threads × 2` unless given, for load balance).
    public let bands: Int

    /// A renderer for `threads` threads (at least 1) and optionally an explicit band count.
    public init(threads: Int, bands: Int? = nil) {
        self.threads = max(1, threads)
        self.bands = max(1, bands ?? (self.threads == 1 ? 1 : self.threads * 2))
    }

    /// One thread per online processor.
    public static var allCores: BandedRenderer { BandedRenderer(threads: onlineProcessorCount) }

    /// The number of online processors.
    public static var onlineProcessorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Band `index` of `bands` over `rect`: consecutive row ranges covering it exactly.
    public static func band(_ index: Int, of bands: Int, in rect: IntRect) -> IntRect {
        let h = rect.height
        let y0 = rect.minY + h * index / bands
        let y1 = rect.minY + h * (index + 1) / bands
        return IntRect(minX: rect.minX, minY: y0, maxX: rect.maxX, maxY: y1)
    }

    /// Calls `draw` once per band with `canvas` clipped to that band, in parallel when
    /// there is more than one band; returns when all bands are drawn. `draw` runs on several
    /// threads at once, so it is `@Sendable`: it may read shared state but writes only pixels
    /// inside the band canvas it is given.
    public func render(_ canvas: Canvas, _ draw: @Sendable (Canvas) -> Void) {
        let n = min(bands, max(1, canvas.clip.height))
        if n == 1 {
            draw(canvas)
            return
        }
        if threads == 1 {
            for i in 0..<n { draw(canvas.clipped(to: Self.band(i, of: n, in: canvas.clip))) }
            return
        }
        withoutActuallyEscaping(draw) { draw in
            DispatchQueue.concurrentPerform(iterations: n) { i in
                draw(canvas.clipped(to: Self.band(i, of: n, in: canvas.clip)))
            }
        }
    }
}
