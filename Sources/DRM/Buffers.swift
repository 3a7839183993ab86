#if canImport(Glibc)
import Glibc
#endif

/// Which kernel allocator backs scanout buffers.
public enum BufferAllocator: String, CaseIterable, Sendable {
    /// DRM dumb buffers (CREATE_DUMB + MAP_DUMB + mmap): works on every KMS driver.
    case dumb
    /// GBM buffer objects (linear, scanout) mapped for CPU writes.
    case gbm
}

/// A GBM device over a DRM file (gbm_create_device); destroyed in deinit.
public final class GBMDevice {
    let device: DRMDevice
    let handle: OpaquePointer
    /// Creates the GBM device for `device`.
    public init(device: DRMDevice) throws {
        self.device = device
        handle = try retrying("gbm_create_device", device.path) { try device.sys.gbmCreateDevice(device.fd) }
    }
    deinit { device.sys.gbmDestroyDevice(handle) }
}

/// A CPU-writable buffer registered as a framebuffer: a dumb buffer or a GBM BO, its
/// mapping and its AddFB2 framebuffer. All three are released in deinit (RmFB first).
/// Write it sequentially (e.g. ``ShadowBuffer/copy(to:)``); never read it back.
public final class ScanoutBuffer {
    public let width: Int
    public let height: Int
    /// Bytes per row of the mapping.
    public let stride: Int
    /// The mapped pixels (write-only in spirit: uncached on many drivers).
    public let pixels: UnsafeMutableRawPointer
    public let framebuffer: FramebufferID
    public let allocator: BufferAllocator
    public let format: PixelFormat

    private enum Storage {
        case dumb(handle: BufferHandle, size: Int)
        case gbm(bo: OpaquePointer, mapData: UnsafeMutableRawPointer?, gbm: GBMDevice)
    }
    private let storage: Storage
    private let device: DRMDevice

    /// Creates a dumb buffer, maps it and adds it as an XRGB8888 framebuffer.
    public init(dumbOn device: DRMDevice, width: Int, height: Int, format: PixelFormat = .xrgb8888) throws {
        self.device = device
        self.width = width
        self.height = height
        self.format = format
        allocator = .dumb
        let sys = device.sys, fd = device.fd
        let created = try retrying("DRM_IOCTL_MODE_CREATE_DUMB", "\(width)x\(height)") {
            try sys.createDumb(fd, width: UInt32(width), height: UInt32(height), bpp: 32)
        }
        var ok = false
        defer { if !ok { try? sys.destroyDumb(fd, created.handle) } }
        let offset = try retrying("DRM_IOCTL_MODE_MAP_DUMB", "\(created.handle)") { try sys.mapDumb(fd, created.handle) }
        let size = Int(created.size)
        let map = try retrying("mmap", "\(created.handle)") { try sys.mmap(fd, size: size, offset: offset) }
        defer { if !ok { sys.munmap(map, size: size) } }
        Self.prefault(map, size: size)
        framebuffer = try retrying("drmModeAddFB2", "\(created.handle)") {
            try sys.addFB2(fd, width: UInt32(width), height: UInt32(height), format: format,
                           handle: created.handle, pitch: created.pitch, offset: 0)
        }
        pixels = map
        stride = Int(created.pitch)
        storage = .dumb(handle: created.handle, size: size)
        ok = true
    }

    /// Faults in every page of a new mapping now, by writing a zero word at the start of each
    /// page (the kernel hands out dumb buffers zeroed, and the first frame overwrites all of it),
    /// so that the first copy of a frame does not take the page faults: most drivers map dumb
    /// buffers as PFN maps, which `MAP_POPULATE` does not fill, and under TCG a 1024x768 buffer's
    /// faults made its first copy 5.3–5.6 ms instead of ~1.6 ms. Writes only: never reads.
    static func prefault(_ map: UnsafeMutableRawPointer, size: Int) {
        let page = 4096
        var offset = 0
        while offset < size {
            map.storeBytes(of: 0 as UInt32, toByteOffset: offset, as: UInt32.self)
            offset &+= page
        }
    }

    /// Creates a linear scanout GBM BO, maps it for writing and adds it as a framebuffer.
    public init(gbmOn gbm: GBMDevice, width: Int, height: Int, format: PixelFormat = .xrgb8888) throws {
        let device = gbm.device
        self.device = device
        self.width = width
        self.height = height
        self.format = format
        allocator = .gbm
        let sys = device.sys, fd = device.fd
        let bo = try retrying("gbm_bo_create", "\(width)x\(height) linear scanout") {
            try sys.gbmCreateBO(gbm.handle, width: UInt32(width), height: UInt32(height), format: format, usage: [.scanout, .linear])
        }
        var ok = false
        defer { if !ok { sys.gbmDestroyBO(bo.bo) } }
        let map = try retrying("gbm_bo_map", "\(bo.handle)") { try sys.gbmMapBO(bo.bo, width: UInt32(width), height: UInt32(height)) }
        defer { if !ok { sys.gbmUnmapBO(bo.bo, map.mapData) } }
        framebuffer = try retrying("drmModeAddFB2", "\(bo.handle)") {
            try sys.addFB2(fd, width: UInt32(width), height: UInt32(height), format: format,
                           handle: bo.handle, pitch: bo.stride, offset: 0)
        }
        pixels = map.address
        stride = Int(map.stride)
        storage = .gbm(bo: bo.bo, mapData: map.mapData, gbm: gbm)
        ok = true
    }

    deinit {
        let sys = device.sys, fd = device.fd
        try? sys.removeFB(fd, framebuffer)
        switch storage {
        case .dumb(let handle, let size):
            sys.munmap(pixels, size: size)
            try? sys.destroyDumb(fd, handle)
        case .gbm(let bo, let mapData, _):
            sys.gbmUnmapBO(bo, mapData)
            sys.gbmDestroyBO(bo)
        }
    }
}

/// A cached, CPU-owned XRGB8888 buffer frames are drawn into; one sequential copy per
/// frame moves it into a scanout buffer (scanout memory is never read back).
public final class ShadowBuffer {
    public let width: Int
    public let height: Int
    /// Bytes per row (width × 4).
    public let stride: Int
    public let pixels: UnsafeMutableRawPointer

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        stride = width * 4
        pixels = UnsafeMutableRawPointer.allocate(byteCount: max(1, stride * height), alignment: 64)
        pixels.initializeMemory(as: UInt8.self, repeating: 0, count: stride * height)
    }

    deinit { pixels.deallocate() }

    /// Fills every pixel with one XRGB8888 colour.
    public func fill(_ xrgb: UInt32) {
        pixels.withMemoryRebound(to: UInt32.self, capacity: width * height) { p in
            p.update(repeating: xrgb, count: width * height)
        }
    }

    /// Copies the pixels row by row, front to back, into `target` (same size).
    public func copy(to target: ScanoutBuffer) {
        let rows = min(height, target.height)
        let bytes = min(stride, target.width * 4)
        if target.stride == stride {
            target.pixels.copyMemory(from: pixels, byteCount: stride * rows)
            return
        }
        var src = UnsafeRawPointer(pixels)
        var dst = target.pixels
        for _ in 0..<rows {
            dst.copyMemory(from: src, byteCount: bytes)
            src += stride
            dst += target.stride
        }
    }
}

/// Two or three scanout buffers, each free, queued (submitted, not yet on screen) or on
/// screen. At most one is on screen; a flip completion moves the queued buffer on screen
/// and frees the previous one.
public final class Swapchain {
    public enum State: Equatable, Sendable { case free, queued, onScreen }

    public let buffers: [ScanoutBuffer]
    public private(set) var states: [State]

    /// Allocates `count` (2...3) buffers of `width`x`height` with `allocator`.
    public init(device: DRMDevice, width: Int, height: Int, count: Int = 3, allocator: BufferAllocator) throws {
        precondition((2...3).contains(count), "a swapchain has 2 or 3 buffers")
        var list: [ScanoutBuffer] = []
        switch allocator {
        case .dumb:
            for _ in 0..<count { list.append(try ScanoutBuffer(dumbOn: device, width: width, height: height)) }
        case .gbm:
            let gbm = try GBMDevice(device: device)
            for _ in 0..<count { list.append(try ScanoutBuffer(gbmOn: gbm, width: width, height: height)) }
        }
        buffers = list
        states = Array(repeating: .free, count: count)
    }

    /// The index of a free buffer, or nil when all are queued or on screen.
    public func acquire() -> Int? { states.firstIndex(of: .free) }

    /// The index of the buffer holding `framebuffer`.
    public func index(of framebuffer: FramebufferID) -> Int? { buffers.firstIndex { $0.framebuffer == framebuffer } }

    /// Marks buffer `i` as submitted.
    public func markQueued(_ i: Int) { states[i] = .queued }

    /// Marks buffer `i` as on screen; the previous on-screen buffer becomes free.
    public func markOnScreen(_ i: Int) {
        for j in states.indices where states[j] == .onScreen && j != i { states[j] = .free }
        states[i] = .onScreen
    }

    /// Returns buffer `i` to the free list (its submission failed or was discarded).
    public func markFree(_ i: Int) { states[i] = .free }

    /// The on-screen buffer index, if any.
    public var onScreen: Int? { states.firstIndex(of: .onScreen) }
    /// The number of queued buffers.
    public var queuedCount: Int { states.filter { $0 == .queued }.count }
}
