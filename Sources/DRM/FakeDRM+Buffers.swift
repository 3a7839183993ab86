import SystemPackage

/// ``FakeDRMDevice``'s buffer calls: dumb buffers and their mappings, framebuffers, GBM devices
/// and buffer objects (memory is real, so a test can read what was drawn).
extension FakeDRMDevice {
    func createDumb(_ fd: Int32, width: UInt32, height: UInt32, bpp: UInt32) throws -> (handle: BufferHandle, pitch: UInt32, size: UInt64) {
        try record("DRM_IOCTL_MODE_CREATE_DUMB")
        guard width > 0, height > 0, bpp == 32 else { throw Errno.invalidArgument }
        let pitch = (width * 4 + 63) & ~63
        let size = Int(pitch) * Int(height)
        nextID += 1
        dumbs[nextID] = (UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096), size, pitch)
        return (BufferHandle(nextID), pitch, UInt64(size))
    }

    func mapDumb(_ fd: Int32, _ handle: BufferHandle) throws -> UInt64 {
        try record("DRM_IOCTL_MODE_MAP_DUMB")
        guard dumbs[handle.rawValue] != nil else { throw Errno.noSuchFileOrDirectory }
        return UInt64(handle.rawValue) << 12
    }

    func destroyDumb(_ fd: Int32, _ handle: BufferHandle) throws {
        try record("DRM_IOCTL_MODE_DESTROY_DUMB")
        guard let d = dumbs.removeValue(forKey: handle.rawValue) else { throw Errno.noSuchFileOrDirectory }
        d.memory.deallocate()
    }

    func mmap(_ fd: Int32, size: Int, offset: UInt64) throws -> UnsafeMutableRawPointer {
        try record("mmap")
        // PROT_WRITE on a descriptor opened O_RDONLY.
        if readOnlyFDs.contains(fd) { throw Errno.permissionDenied }
        guard let d = dumbs[UInt32(offset >> 12)], size <= d.size else { throw Errno.invalidArgument }
        liveMappings += 1
        return d.memory
    }

    func munmap(_ address: UnsafeMutableRawPointer, size: Int) {
        calls.append("munmap")
        liveMappings -= 1
    }

    func addFB2(_ fd: Int32, width: UInt32, height: UInt32, format: PixelFormat, handle: BufferHandle, pitch: UInt32, offset: UInt32) throws -> FramebufferID {
        try record("drmModeAddFB2")
        let known = dumbs[handle.rawValue] != nil || gbmBOs.values.contains { $0.handle == handle.rawValue }
        guard known, format == .xrgb8888 || format == .argb8888, pitch >= width * 4 else { throw Errno.invalidArgument }
        nextID += 1
        fbs[nextID] = (handle.rawValue, width, height)
        wb.fbFormats[nextID] = format
        return FramebufferID(nextID)
    }

    func removeFB(_ fd: Int32, _ id: FramebufferID) throws {
        try record("drmModeRmFB")
        guard fbs.removeValue(forKey: id.rawValue) != nil else { throw Errno.noSuchFileOrDirectory }
        wb.fbFormats[id.rawValue] = nil
    }

    func gbmCreateDevice(_ fd: Int32) throws -> OpaquePointer {
        try record("gbm_create_device")
        gbmObjects += 1
        return OpaquePointer(UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8))
    }

    func gbmDestroyDevice(_ device: OpaquePointer) {
        calls.append("gbm_device_destroy")
        gbmObjects -= 1
        UnsafeMutableRawPointer(device).deallocate()
    }

    func gbmCreateBO(_ device: OpaquePointer, width: UInt32, height: UInt32, format: PixelFormat, usage: GBMUsage) throws -> (bo: OpaquePointer, handle: BufferHandle, stride: UInt32) {
        try record("gbm_bo_create")
        let stride = (width * 4 + 255) & ~255
        let key = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        nextID += 1
        gbmBOs[key] = (nextID, UnsafeMutableRawPointer.allocate(byteCount: Int(stride) * Int(height), alignment: 4096), stride)
        gbmObjects += 1
        return (OpaquePointer(key), BufferHandle(nextID), stride)
    }

    func gbmMapBO(_ bo: OpaquePointer, width: UInt32, height: UInt32) throws -> (address: UnsafeMutableRawPointer, stride: UInt32, mapData: UnsafeMutableRawPointer?) {
        try record("gbm_bo_map")
        guard let b = gbmBOs[UnsafeMutableRawPointer(bo)] else { throw Errno.invalidArgument }
        liveMappings += 1
        return (b.memory, b.stride, nil)
    }

    func gbmUnmapBO(_ bo: OpaquePointer, _ mapData: UnsafeMutableRawPointer?) {
        calls.append("gbm_bo_unmap")
        liveMappings -= 1
    }

    func gbmDestroyBO(_ bo: OpaquePointer) {
        calls.append("gbm_bo_destroy")
        if let b = gbmBOs.removeValue(forKey: UnsafeMutableRawPointer(bo)) {
            b.memory.deallocate()
            UnsafeMutableRawPointer(bo).deallocate()
            gbmObjects -= 1
        }
    }
}
