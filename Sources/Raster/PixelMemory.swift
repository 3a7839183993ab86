#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Backing memory for a ``Bitmap``'s pixels.
///
/// A frame is written in full every frame, so the TLB walks of its 4 KiB pages are part of
/// every fill and copy. On Linux a bitmap of at least ``hugeThreshold`` bytes is mapped at a
/// 2 MiB boundary and advised `MADV_HUGEPAGE`, so the kernel can back it with transparent huge
/// pages (also when the system setting is `madvise`, Debian's default); smaller bitmaps, other
/// systems, and any failure of the mapping use the ordinary 64-byte-aligned heap allocation.
/// The advice is only a hint: the pixels are the same either way.
struct PixelMemory {
    /// First byte of the pixels, 64-byte aligned.
    let base: UnsafeMutableRawPointer
    /// Bytes mapped with `mmap` (to give back with `munmap`), or 0 for a heap allocation.
    let mappedBytes: Int

    /// Bitmaps of at least this many bytes ask for huge pages (one 2 MiB page).
    static let hugeThreshold = 2 << 20

    /// Allocates `bytes` bytes, zero-filled and touched (so the first frame takes no page faults).
    static func allocate(bytes: Int) -> PixelMemory {
        #if os(Linux)
        if bytes >= hugeThreshold, let mapped = mapHuge(bytes: bytes) {
            mapped.base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
            return mapped
        }
        #endif
        let base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return PixelMemory(base: base, mappedBytes: 0)
    }

    /// Gives the memory back.
    func free() {
        if mappedBytes > 0 {
            #if os(Linux)
            _ = munmap(base, mappedBytes)
            #endif
        } else {
            base.deallocate()
        }
    }

    #if os(Linux)
    /// Maps `bytes` rounded up to whole 2 MiB pages at a 2 MiB boundary, or nil.
    private static func mapHuge(bytes: Int) -> PixelMemory? {
        let page = hugeThreshold
        let length = (bytes &+ page &- 1) & ~(page &- 1)
        // Map one extra huge page, then trim the ends so the start is 2 MiB aligned.
        guard let raw = mmap(nil, length &+ page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        let start = Int(bitPattern: raw)
        let aligned = (start &+ page &- 1) & ~(page &- 1)
        let head = aligned &- start
        if head > 0 { _ = munmap(raw, head) }
        let tail = page &- head
        if tail > 0 { _ = munmap(UnsafeMutableRawPointer(bitPattern: aligned &+ length), tail) }
        let base = UnsafeMutableRawPointer(bitPattern: aligned)!
        _ = madvise(base, length, MADV_HUGEPAGE)
        return PixelMemory(base: base, mappedBytes: length)
    }
    #endif
}
