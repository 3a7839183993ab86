#if canImport(Glibc)
import Glibc
#endif
import CDRM
import CGBM
import CCadenceShim
import SystemPackage

/// The real kernel behind ``DRMSystem``: libdrm, libgbm, and the shim's ioctls. Stateless, so
/// one instance serves every device on every thread.
final class LiveDRM: DRMSystem, Sendable {
    static let shared = LiveDRM()

    /// Errno of a libdrm return value: -1 means "see errno", other negatives are -errno.
    @inline(__always) private func check(_ r: Int32) throws {
        guard r < 0 else { return }
        throw Errno(rawValue: r == -1 ? Glibc.errno : -r)
    }
    @inline(__always) private func lastErrno() -> Errno {
        Errno(rawValue: Glibc.errno == 0 ? EIO : Glibc.errno)
    }

    func cardPaths() -> [String] {
        guard let dir = opendir("/dev/dri") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix("card"), Int(name.dropFirst(4)) != nil { names.append(name) }
        }
        return names.sorted { Int($0.dropFirst(4))! < Int($1.dropFirst(4))! }.map { "/dev/dri/" + $0 }
    }

    func open(_ path: String, readOnly: Bool) throws -> Int32 {
        let fd = Glibc.open(path, (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC)
        if fd < 0 { throw lastErrno() }
        return fd
    }

    func close(_ fd: Int32) { _ = Glibc.close(fd) }

    func getVersion(_ fd: Int32) throws -> DriverVersion {
        Glibc.errno = 0
        guard let v = drmGetVersion(fd) else { throw lastErrno() }
        defer { drmFreeVersion(v) }
        func str(_ p: UnsafeMutablePointer<CChar>?, _ n: Int32) -> String {
            guard let p, n > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(n)), as: UTF8.self)
        }
        return DriverVersion(
            name: str(v.pointee.name, v.pointee.name_len),
            major: Int(v.pointee.version_major), minor: Int(v.pointee.version_minor),
            patch: Int(v.pointee.version_patchlevel),
            date: str(v.pointee.date, v.pointee.date_len), description: str(v.pointee.desc, v.pointee.desc_len))
    }

    func getCap(_ fd: Int32, _ cap: UInt64) throws -> UInt64 {
        var value: UInt64 = 0
        try check(drmGetCap(fd, cap, &value))
        return value
    }

    func setClientCap(_ fd: Int32, _ cap: UInt64, _ value: UInt64) throws {
        try check(drmSetClientCap(fd, cap, value))
    }

    func setMaster(_ fd: Int32) throws { try check(drmSetMaster(fd)) }
    func dropMaster(_ fd: Int32) throws { try check(drmDropMaster(fd)) }
    func isMaster(_ fd: Int32) -> Bool { drmIsMaster(fd) != 0 }

    func getResources(_ fd: Int32) throws -> CardResources {
        Glibc.errno = 0
        guard let r = drmModeGetResources(fd) else { throw lastErrno() }
        defer { drmModeFreeResources(r) }
        let p = r.pointee
        return CardResources(
            framebuffers: Self.array(p.fbs, p.count_fbs).map(FramebufferID.init),
            crtcs: Self.array(p.crtcs, p.count_crtcs).map(CRTCID.init),
            connectors: Self.array(p.connectors, p.count_connectors).map(ConnectorID.init),
            encoders: Self.array(p.encoders, p.count_encoders).map(EncoderID.init),
            minWidth: Int(p.min_width), maxWidth: Int(p.max_width),
            minHeight: Int(p.min_height), maxHeight: Int(p.max_height))
    }

    func getConnector(_ fd: Int32, _ id: ConnectorID) throws -> Connector {
        Glibc.errno = 0
        guard let c = drmModeGetConnector(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreeConnector(c) }
        let p = c.pointee
        let modes = (0..<Int(max(0, p.count_modes))).map { Self.mode(p.modes[$0]) }
        let ids = Self.array(p.props, p.count_props)
        let values = Self.array(p.prop_values, p.count_props)
        return Connector(
            id: ConnectorID(p.connector_id), encoderID: EncoderID(p.encoder_id),
            type: p.connector_type, typeID: p.connector_type_id,
            status: ConnectionStatus(rawValue: p.connection.rawValue) ?? .unknown,
            widthMM: Int(p.mmWidth), heightMM: Int(p.mmHeight), modes: modes,
            encoders: Self.array(p.encoders, p.count_encoders).map(EncoderID.init),
            properties: zip(ids, values).map { (id: PropertyID($0.0), value: $0.1) })
    }

    func getEncoder(_ fd: Int32, _ id: EncoderID) throws -> Encoder {
        Glibc.errno = 0
        guard let e = drmModeGetEncoder(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreeEncoder(e) }
        let p = e.pointee
        return Encoder(
            id: EncoderID(p.encoder_id), type: p.encoder_type, crtcID: CRTCID(p.crtc_id),
            possibleCRTCs: p.possible_crtcs, possibleClones: p.possible_clones)
    }

    func getCRTC(_ fd: Int32, _ id: CRTCID) throws -> CRTCState {
        Glibc.errno = 0
        guard let c = drmModeGetCrtc(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreeCrtc(c) }
        let p = c.pointee
        return CRTCState(id: CRTCID(p.crtc_id), framebufferID: FramebufferID(p.buffer_id), x: Int(p.x), y: Int(p.y),
                         mode: p.mode_valid != 0 ? Self.mode(p.mode) : nil, gammaSize: Int(p.gamma_size))
    }

    func getPlaneResources(_ fd: Int32) throws -> [PlaneID] {
        Glibc.errno = 0
        guard let r = drmModeGetPlaneResources(fd) else { throw lastErrno() }
        defer { drmModeFreePlaneResources(r) }
        return Self.array(r.pointee.planes, Int32(r.pointee.count_planes)).map(PlaneID.init)
    }

    func getPlane(_ fd: Int32, _ id: PlaneID) throws -> Plane {
        Glibc.errno = 0
        guard let pl = drmModeGetPlane(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreePlane(pl) }
        let p = pl.pointee
        return Plane(id: PlaneID(p.plane_id), crtcID: CRTCID(p.crtc_id), framebufferID: FramebufferID(p.fb_id),
                     possibleCRTCs: p.possible_crtcs,
                     formats: Self.array(p.formats, Int32(p.count_formats)).map(PixelFormat.init(rawValue:)))
    }

    func getObjectProperties(_ fd: Int32, _ object: UInt32, _ type: ObjectType) throws -> [(id: PropertyID, value: UInt64)] {
        Glibc.errno = 0
        guard let o = drmModeObjectGetProperties(fd, object, type.rawValue) else { throw lastErrno() }
        defer { drmModeFreeObjectProperties(o) }
        let n = Int32(o.pointee.count_props)
        return zip(Self.array(o.pointee.props, n), Self.array(o.pointee.prop_values, n)).map {
            (id: PropertyID($0.0), value: $0.1)
        }
    }

    func getProperty(_ fd: Int32, _ id: PropertyID) throws -> PropertyInfo {
        Glibc.errno = 0
        guard let pr = drmModeGetProperty(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreeProperty(pr) }
        let p = pr.pointee
        let enums = (0..<Int(max(0, p.count_enums))).map { i -> PropertyInfo.EnumEntry in
            var e = p.enums[i]
            return PropertyInfo.EnumEntry(name: Self.string(&e.name), value: e.value)
        }
        var name = p.name
        return PropertyInfo(id: PropertyID(p.prop_id), name: Self.string(&name), flags: p.flags,
                            values: Self.array(p.values, p.count_values), enums: enums)
    }

    func getPropertyBlob(_ fd: Int32, _ id: BlobID) throws -> [UInt8] {
        Glibc.errno = 0
        guard let b = drmModeGetPropertyBlob(fd, id.rawValue) else { throw lastErrno() }
        defer { drmModeFreePropertyBlob(b) }
        guard let data = b.pointee.data, b.pointee.length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(b.pointee.length)))
    }

    func createPropertyBlob(_ fd: Int32, _ bytes: [UInt8]) throws -> BlobID {
        var id: UInt32 = 0
        try bytes.withUnsafeBytes { raw in
            try check(drmModeCreatePropertyBlob(fd, raw.baseAddress, raw.count, &id))
        }
        return BlobID(id)
    }

    func destroyPropertyBlob(_ fd: Int32, _ id: BlobID) throws {
        try check(drmModeDestroyPropertyBlob(fd, id.rawValue))
    }

    func createDumb(_ fd: Int32, width: UInt32, height: UInt32, bpp: UInt32) throws -> (handle: BufferHandle, pitch: UInt32, size: UInt64) {
        var handle: UInt32 = 0, pitch: UInt32 = 0, size: UInt64 = 0
        try check(cadence_dumb_create(fd, width, height, bpp, &handle, &pitch, &size))
        return (BufferHandle(handle), pitch, size)
    }

    func mapDumb(_ fd: Int32, _ handle: BufferHandle) throws -> UInt64 {
        var offset: UInt64 = 0
        try check(cadence_dumb_map(fd, handle.rawValue, &offset))
        return offset
    }

    func destroyDumb(_ fd: Int32, _ handle: BufferHandle) throws {
        try check(cadence_dumb_destroy(fd, handle.rawValue))
    }

    func mmap(_ fd: Int32, size: Int, offset: UInt64) throws -> UnsafeMutableRawPointer {
        let p = Glibc.mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(bitPattern: UInt(offset)))
        guard let p, p != MAP_FAILED else { throw lastErrno() }
        return p
    }

    func munmap(_ address: UnsafeMutableRawPointer, size: Int) { _ = Glibc.munmap(address, size) }

    func addFB2(_ fd: Int32, width: UInt32, height: UInt32, format: PixelFormat, handle: BufferHandle, pitch: UInt32, offset: UInt32) throws -> FramebufferID {
        var handles: (UInt32, UInt32, UInt32, UInt32) = (handle.rawValue, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (pitch, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (offset, 0, 0, 0)
        var id: UInt32 = 0
        let r = withUnsafePointer(to: &handles) { h in
            withUnsafePointer(to: &pitches) { pi in
                withUnsafePointer(to: &offsets) { o in
                    drmModeAddFB2(fd, width, height, format.rawValue,
                                  UnsafeRawPointer(h).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(pi).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(o).assumingMemoryBound(to: UInt32.self), &id, 0)
                }
            }
        }
        try check(r)
        return FramebufferID(id)
    }

    func removeFB(_ fd: Int32, _ id: FramebufferID) throws { try check(drmModeRmFB(fd, id.rawValue)) }

    func gbmCreateDevice(_ fd: Int32) throws -> OpaquePointer {
        Glibc.errno = 0
        guard let d = gbm_create_device(fd) else { throw lastErrno() }
        return d
    }

    func gbmDestroyDevice(_ device: OpaquePointer) { gbm_device_destroy(device) }

    func gbmCreateBO(_ device: OpaquePointer, width: UInt32, height: UInt32, format: PixelFormat, usage: GBMUsage) throws -> (bo: OpaquePointer, handle: BufferHandle, stride: UInt32) {
        Glibc.errno = 0
        guard let bo = gbm_bo_create(device, width, height, format.rawValue, usage.rawValue) else { throw lastErrno() }
        return (bo, BufferHandle(gbm_bo_get_handle(bo).u32), gbm_bo_get_stride(bo))
    }

    func gbmMapBO(_ bo: OpaquePointer, width: UInt32, height: UInt32) throws -> (address: UnsafeMutableRawPointer, stride: UInt32, mapData: UnsafeMutableRawPointer?) {
        var stride: UInt32 = 0
        var mapData: UnsafeMutableRawPointer?
        Glibc.errno = 0
        guard let p = gbm_bo_map(bo, 0, 0, width, height, UInt32(GBM_BO_TRANSFER_WRITE.rawValue), &stride, &mapData)
        else { throw lastErrno() }
        return (p, stride, mapData)
    }

    func gbmUnmapBO(_ bo: OpaquePointer, _ mapData: UnsafeMutableRawPointer?) { gbm_bo_unmap(bo, mapData) }
    func gbmDestroyBO(_ bo: OpaquePointer) { gbm_bo_destroy(bo) }

    func setCRTC(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, x: UInt32, y: UInt32, connectors: [ConnectorID], mode: ModeInfo?) throws {
        var ids = connectors.map(\.rawValue)
        var m = mode.map(Self.kernelMode)
        let r = ids.withUnsafeMutableBufferPointer { c in
            if m != nil {
                return drmModeSetCrtc(fd, crtc.rawValue, framebuffer.rawValue, x, y, c.baseAddress, Int32(c.count), &m!)
            }
            return drmModeSetCrtc(fd, crtc.rawValue, framebuffer.rawValue, x, y, c.baseAddress, Int32(c.count), nil)
        }
        try check(r)
    }

    func pageFlip(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, flags: PageFlipFlags, userData: UInt64) throws {
        try check(drmModePageFlip(fd, crtc.rawValue, framebuffer.rawValue, flags.rawValue,
                                  UnsafeMutableRawPointer(bitPattern: UInt(userData))))
    }

    func atomicCommit(_ fd: Int32, _ properties: [AtomicProperty], flags: AtomicFlags, userData: UInt64) throws {
        guard let req = drmModeAtomicAlloc() else { throw Errno.noMemory }
        defer { drmModeAtomicFree(req) }
        for p in properties {
            try check(drmModeAtomicAddProperty(req, p.object, p.property.rawValue, p.value))
        }
        try check(drmModeAtomicCommit(fd, req, flags.rawValue, UnsafeMutableRawPointer(bitPattern: UInt(userData))))
    }

    func crtcGetSequence(_ fd: Int32, _ crtc: CRTCID) throws -> VBlankReading {
        var seq: UInt64 = 0, ns: UInt64 = 0
        try check(drmCrtcGetSequence(fd, crtc.rawValue, &seq, &ns))
        return VBlankReading(sequence: seq, timestampNs: Int64(bitPattern: ns))
    }

    func crtcQueueSequence(_ fd: Int32, _ crtc: CRTCID, flags: SequenceFlags, sequence: UInt64, userData: UInt64) throws -> UInt64 {
        var queued: UInt64 = 0
        try check(drmCrtcQueueSequence(fd, crtc.rawValue, flags.rawValue, sequence, &queued, userData))
        return queued
    }

    /// DRM_VBLANK_* type bits selecting CRTC `index`.
    private static func vblankCRTCBits(_ index: Int) -> UInt32 {
        if index == 0 { return 0 }
        if index == 1 { return 0x2000_0000 } // _DRM_VBLANK_SECONDARY
        return (UInt32(index) << 1) & 0x3e   // _DRM_VBLANK_HIGH_CRTC_MASK
    }

    func waitVBlankQuery(_ fd: Int32, crtcIndex: Int) throws -> VBlankReading {
        var vbl = drmVBlank()
        vbl.request.type = drmVBlankSeqType(rawValue: 0x1 | Self.vblankCRTCBits(crtcIndex)) // RELATIVE, 0 ahead
        vbl.request.sequence = 0
        try check(drmWaitVBlank(fd, &vbl))
        let ns = Int64(vbl.reply.tval_sec) * 1_000_000_000 + Int64(vbl.reply.tval_usec) * 1000
        return VBlankReading(sequence: UInt64(vbl.reply.sequence), timestampNs: ns)
    }

    func waitVBlankEvent(_ fd: Int32, crtcIndex: Int, absoluteSequence: UInt32, userData: UInt64) throws -> UInt32 {
        var vbl = drmVBlank()
        // ABSOLUTE | EVENT | NEXTONMISS
        vbl.request.type = drmVBlankSeqType(rawValue: 0x0 | 0x400_0000 | 0x1000_0000 | Self.vblankCRTCBits(crtcIndex))
        vbl.request.sequence = absoluteSequence
        vbl.request.signal = UInt(userData)
        try check(drmWaitVBlank(fd, &vbl))
        return vbl.reply.sequence
    }

    func poll(_ fd: Int32, timeoutNs: Int64) throws -> Bool {
        let r = cadence_poll_ns(fd, timeoutNs)
        if r < 0 { throw Errno(rawValue: -r) }
        return r > 0
    }

    func pollFence(_ fd: Int32, timeoutNs: Int64) throws -> Bool { try poll(fd, timeoutNs: timeoutNs) }

    func handleEvents(_ fd: Int32, into events: inout [DRMEvent]) throws {
        // On the stack, per call (drmHandleEvent reads at most 1 KiB: 32 events).
        try withUnsafeTemporaryAllocation(of: cadence_drm_event.self, capacity: 64) { buffer in
            let n = cadence_handle_events(fd, buffer.baseAddress, Int32(buffer.count))
            if n < 0 { throw Errno(rawValue: -n) }
            for e in buffer.prefix(Int(n)) {
                let kind: DRMEvent.Kind = e.kind == UInt32(CADENCE_EVENT_FLIP) ? .flipComplete
                    : e.kind == UInt32(CADENCE_EVENT_VBLANK) ? .vblank : .sequence
                events.append(DRMEvent(kind: kind, crtcID: CRTCID(e.crtc_id), sequence: e.sequence,
                                       timestampNs: Int64(bitPattern: e.timestamp_ns), userData: e.user_data))
            }
        }
    }

    func monotonicNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    func busyWait(until deadline: Int64) {
        while monotonicNow() < deadline {}
    }

    func sleep(until deadline: Int64) {
        guard deadline > 0 else { return }
        while !Self.sleepMonotonic(until: deadline) {}
    }

    /// One clock_nanosleep on CLOCK_MONOTONIC until `deadline` (TIMER_ABSTIME); false when a
    /// signal ended it early. The fake device's wall clock sleeps through it too.
    static func sleepMonotonic(until deadline: Int64) -> Bool {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) != EINTR
    }

    // MARK: conversions

    private static func array<T>(_ p: UnsafeMutablePointer<T>?, _ n: Int32) -> [T] {
        guard let p, n > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: Int(n)))
    }

    private static func string<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    static func mode(_ k: drmModeModeInfo) -> ModeInfo {
        var name = k.name
        return ModeInfo(
            clock: k.clock, hdisplay: k.hdisplay, hsyncStart: k.hsync_start, hsyncEnd: k.hsync_end, htotal: k.htotal,
            hskew: k.hskew, vdisplay: k.vdisplay, vsyncStart: k.vsync_start, vsyncEnd: k.vsync_end, vtotal: k.vtotal,
            vscan: k.vscan, vrefresh: k.vrefresh, flags: ModeFlags(rawValue: k.flags), type: ModeType(rawValue: k.type),
            name: string(&name))
    }

    static func kernelMode(_ m: ModeInfo) -> drmModeModeInfo {
        var k = drmModeModeInfo()
        k.clock = m.clock
        k.hdisplay = m.hdisplay; k.hsync_start = m.hsyncStart; k.hsync_end = m.hsyncEnd; k.htotal = m.htotal
        k.hskew = m.hskew
        k.vdisplay = m.vdisplay; k.vsync_start = m.vsyncStart; k.vsync_end = m.vsyncEnd; k.vtotal = m.vtotal
        k.vscan = m.vscan
        k.vrefresh = m.vrefresh
        k.flags = m.flags.rawValue
        k.type = m.type.rawValue
        withUnsafeMutableBytes(of: &k.name) { raw in
            for (i, b) in m.name.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        return k
    }
}

extension ModeInfo {
    /// The kernel's drm_mode_modeinfo bytes (68 bytes), as a MODE_ID blob carries them.
    public var kernelBytes: [UInt8] {
        var k = LiveDRM.kernelMode(self)
        return withUnsafeBytes(of: &k) { Array($0) }
    }

    /// Decodes drm_mode_modeinfo bytes (a MODE_ID blob); nil when the size is wrong.
    public init?(kernelBytes bytes: [UInt8]) {
        guard bytes.count == MemoryLayout<drmModeModeInfo>.size else { return nil }
        var k = drmModeModeInfo()
        withUnsafeMutableBytes(of: &k) { raw in raw.copyBytes(from: bytes) }
        self = LiveDRM.mode(k)
    }
}
