import SystemPackage

/// The one seam every libdrm call, ioctl and syscall of this module goes through, in the
/// way swift-system routes its syscalls: ``LiveDRM`` calls the kernel, ``FakeDRMDevice``
/// plays a scripted device. Each requirement mirrors one call and throws its raw `Errno`;
/// the wrappers in ``DRMDevice`` and friends add EINTR retries and ``DRMError`` context.
protocol DRMSystem: AnyObject {
    // Files
    func cardPaths() -> [String]
    /// open(2) the node read-write, or read-only (`readOnly`: enough for GETRESOURCES,
    /// GETCONNECTOR, GETPROPBLOB; not for mmap of a dumb buffer).
    func open(_ path: String, readOnly: Bool) throws -> Int32
    func close(_ fd: Int32)

    // Device
    func getVersion(_ fd: Int32) throws -> DriverVersion
    func getCap(_ fd: Int32, _ cap: UInt64) throws -> UInt64
    func setClientCap(_ fd: Int32, _ cap: UInt64, _ value: UInt64) throws
    func setMaster(_ fd: Int32) throws
    func dropMaster(_ fd: Int32) throws
    func isMaster(_ fd: Int32) -> Bool

    // Mode objects
    func getResources(_ fd: Int32) throws -> CardResources
    func getConnector(_ fd: Int32, _ id: ConnectorID) throws -> Connector
    func getEncoder(_ fd: Int32, _ id: EncoderID) throws -> Encoder
    func getCRTC(_ fd: Int32, _ id: CRTCID) throws -> CRTCState
    func getPlaneResources(_ fd: Int32) throws -> [PlaneID]
    func getPlane(_ fd: Int32, _ id: PlaneID) throws -> Plane
    func getObjectProperties(_ fd: Int32, _ object: UInt32, _ type: ObjectType) throws -> [(id: PropertyID, value: UInt64)]
    func getProperty(_ fd: Int32, _ id: PropertyID) throws -> PropertyInfo
    func getPropertyBlob(_ fd: Int32, _ id: BlobID) throws -> [UInt8]
    func createPropertyBlob(_ fd: Int32, _ bytes: [UInt8]) throws -> BlobID
    func destroyPropertyBlob(_ fd: Int32, _ id: BlobID) throws

    // Buffers
    func createDumb(_ fd: Int32, width: UInt32, height: UInt32, bpp: UInt32) throws -> (handle: BufferHandle, pitch: UInt32, size: UInt64)
    func mapDumb(_ fd: Int32, _ handle: BufferHandle) throws -> UInt64
    func destroyDumb(_ fd: Int32, _ handle: BufferHandle) throws
    func mmap(_ fd: Int32, size: Int, offset: UInt64) throws -> UnsafeMutableRawPointer
    func munmap(_ address: UnsafeMutableRawPointer, size: Int)
    func addFB2(_ fd: Int32, width: UInt32, height: UInt32, format: PixelFormat, handle: BufferHandle, pitch: UInt32, offset: UInt32) throws -> FramebufferID
    func removeFB(_ fd: Int32, _ id: FramebufferID) throws

    // GBM
    func gbmCreateDevice(_ fd: Int32) throws -> OpaquePointer
    func gbmDestroyDevice(_ device: OpaquePointer)
    func gbmCreateBO(_ device: OpaquePointer, width: UInt32, height: UInt32, format: PixelFormat, usage: GBMUsage) throws -> (bo: OpaquePointer, handle: BufferHandle, stride: UInt32)
    func gbmMapBO(_ bo: OpaquePointer, width: UInt32, height: UInt32) throws -> (address: UnsafeMutableRawPointer, stride: UInt32, mapData: UnsafeMutableRawPointer?)
    func gbmUnmapBO(_ bo: OpaquePointer, _ mapData: UnsafeMutableRawPointer?)
    func gbmDestroyBO(_ bo: OpaquePointer)

    // Modeset and flips
    func setCRTC(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, x: UInt32, y: UInt32, connectors: [ConnectorID], mode: ModeInfo?) throws
    func pageFlip(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, flags: PageFlipFlags, userData: UInt64) throws
    func atomicCommit(_ fd: Int32, _ properties: [AtomicProperty], flags: AtomicFlags, userData: UInt64) throws

    // Vblank and events
    func crtcGetSequence(_ fd: Int32, _ crtc: CRTCID) throws -> VBlankReading
    func crtcQueueSequence(_ fd: Int32, _ crtc: CRTCID, flags: SequenceFlags, sequence: UInt64, userData: UInt64) throws -> UInt64
    func waitVBlankQuery(_ fd: Int32, crtcIndex: Int) throws -> VBlankReading
    func waitVBlankEvent(_ fd: Int32, crtcIndex: Int, absoluteSequence: UInt32, userData: UInt64) throws -> UInt32
    /// Waits until `fd` is readable or `timeoutNs` passes (poll); true when readable.
    func poll(_ fd: Int32, timeoutNs: Int64) throws -> Bool
    /// Reads and dispatches pending events (drmHandleEvent), appending them to `events`.
    func handleEvents(_ fd: Int32, into events: inout [DRMEvent]) throws

    // Hotplug (Hotplug.swift)
    /// Opens the uevent channel of the card open as `fd`.
    func openHotplug(_ fd: Int32) throws -> HotplugChannel
    /// poll on the card and its uevent channel at once: which became readable.
    func poll(_ fd: Int32, hotplug: HotplugChannel, timeoutNs: Int64) throws -> (events: Bool, hotplug: Bool)
    /// poll on the uevent channel alone; true when readable.
    func pollHotplug(_ channel: HotplugChannel, timeoutNs: Int64) throws -> Bool

    // debugfs files (CRC.swift)
    /// The minor number of the device node open as `fd` (fstat's st_rdev).
    func deviceMinor(_ fd: Int32) throws -> UInt32
    /// stat(2): true when `path` is a directory; ENOENT, EACCES thrown.
    func isDirectory(_ path: String) throws -> Bool
    /// open(2) a plain file, O_WRONLY, or O_RDONLY | O_NONBLOCK.
    func openFile(_ path: String, writeOnly: Bool) throws -> Int32
    /// write(2); returns the bytes written.
    func writeFile(_ fd: Int32, _ bytes: [UInt8]) throws -> Int
    /// read(2) into `buffer`; returns the bytes read (EAGAIN thrown when nothing is ready).
    func readFile(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// close(2) a plain file.
    func closeFile(_ fd: Int32)

    // Writeback fences (Writeback.swift)
    /// poll(2) a writeback out fence (a sync_file) for POLLIN up to `timeoutNs`: true once signalled.
    func pollFence(_ fd: Int32, timeoutNs: Int64) throws -> Bool

    // Clock
    /// CLOCK_MONOTONIC in ns.
    func monotonicNow() -> Int64
    /// Occupies the CPU until CLOCK_MONOTONIC reaches `deadline` (a real busy wait live,
    /// a jump of the virtual clock on the fake).
    func busyWait(until deadline: Int64)
    /// Sleeps until CLOCK_MONOTONIC reaches `deadline`, leaving the CPU to other threads
    /// (clock_nanosleep with TIMER_ABSTIME live: it can wake late by the scheduler's latency;
    /// a jump of the virtual clock on the fake).
    func sleep(until deadline: Int64)
}

/// One (object, property, value) triple of an atomic request.
public struct AtomicProperty: Equatable, Sendable {
    public var object: UInt32
    public var property: PropertyID
    public var value: UInt64
    public init(object: UInt32, property: PropertyID, value: UInt64) {
        self.object = object; self.property = property; self.value = value
    }
}
