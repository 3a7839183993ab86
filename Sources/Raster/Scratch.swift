#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-thread scratch memory for drawing calls that need a temporary buffer larger than
/// `withUnsafeTemporaryAllocation` keeps on the stack (a gradient's strip is a row or more of
/// pixels), so that drawing a frame allocates nothing in steady state: each thread's buffer
/// grows to the largest size asked of it and is reused for every later call, and is freed when
/// the thread exits. Banded rendering draws on several threads at once; each has its own.
///
/// Not reentrant by design of its one caller per drawing call; a nested request (none today)
/// would get a fresh heap buffer rather than the one in use.
enum Scratch {
    /// The thread's buffer: its memory, its capacity in bytes, and whether a call holds it.
    private struct Slot {
        var base: UnsafeMutableRawPointer?
        var capacity: Int
        var inUse: Bool
    }

    /// The key of every thread's slot; its destructor frees the slot at thread exit.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            guard let raw = raw as UnsafeMutableRawPointer? else { return }
            let slot = raw.assumingMemoryBound(to: Slot.self)
            slot.pointee.base?.deallocate()
            slot.deinitialize(count: 1)
            slot.deallocate()
        }
        precondition(status == 0, "pthread_key_create: \(status)")
        return key
    }()

    /// Calls `body` with at least `bytes` bytes of 64-byte-aligned uninitialised memory, valid
    /// only during the call. Allocates only when this thread has never needed that many.
    @inline(__always)
    static func with<R>(bytes: Int, _ body: (UnsafeMutableRawPointer) throws -> R) rethrows -> R {
        let slot = currentSlot()
        if slot.pointee.inUse {
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: max(bytes, 1), alignment: 64)
            defer { fresh.deallocate() }
            return try body(fresh)
        }
        if slot.pointee.capacity < bytes || slot.pointee.base == nil {
            slot.pointee.base?.deallocate()
            // Grow by at least half again, so a slowly growing size settles after a few calls.
            let capacity = max(bytes, slot.pointee.capacity &+ slot.pointee.capacity / 2, 4096)
            slot.pointee.base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
            slot.pointee.capacity = capacity
        }
        slot.pointee.inUse = true
        defer { slot.pointee.inUse = false }
        return try body(slot.pointee.base!)
    }

    /// This thread's slot, made on its first use.
    private static func currentSlot() -> UnsafeMutablePointer<Slot> {
        if let raw = pthread_getspecific(key) { return raw.assumingMemoryBound(to: Slot.self) }
        let slot = UnsafeMutablePointer<Slot>.allocate(capacity: 1)
        slot.initialize(to: Slot(base: nil, capacity: 0, inUse: false))
        let status = pthread_setspecific(key, slot)
        precondition(status == 0, "pthread_setspecific: \(status)")
        return slot
    }

    /// The capacity of this thread's buffer in bytes (0 before its first use), for tests.
    static var threadCapacity: Int {
        guard let raw = pthread_getspecific(key) else { return 0 }
        return raw.assumingMemoryBound(to: Slot.self).pointee.capacity
    }
}
