/// Where DRM device nodes come from: the live `/dev/dri` (``live``) or a scripted
/// ``FakeDRMDevice`` (`fake(_:)`), so that the code choosing and opening a device, and its
/// errors (no card, EACCES, another DRM master), is tested without /dev/dri.
public struct DeviceSource {
    /// The card nodes present, in numeric order.
    public var discover: () -> [String]
    /// Opens a node read-write; throws ``DRMError`` (call "open") on failure.
    public var open: (String) throws -> DRMDevice
    /// Opens a node to read it only (listing, an EDID): read-only where the source can,
    /// else as ``open``.
    public var openReadOnly: (String) throws -> DRMDevice

    /// A source; `openReadOnly` defaults to `open`.
    public init(discover: @escaping () -> [String], open: @escaping (String) throws -> DRMDevice,
                openReadOnly: ((String) throws -> DRMDevice)? = nil) {
        self.discover = discover
        self.open = open
        self.openReadOnly = openReadOnly ?? open
    }

    /// The kernel's /dev/dri/card* nodes (opened O_RDONLY by ``openReadOnly``).
    public static var live: DeviceSource {
        DeviceSource(discover: { DRMDevice.discover() }, open: { try DRMDevice.open(path: $0) },
                     openReadOnly: { try DRMDevice.open(path: $0, readOnly: true) })
    }

    /// The fake device's nodes (``FakeDRMDevice/cardNodes``); opening honours its scripted
    /// ``FakeDRMDevice/openError`` and answers ENOENT for any other path.
    public static func fake(_ device: FakeDRMDevice) -> DeviceSource { fake([device]) }

    /// Several fake devices, one card each (a machine with two GPUs, or a GPU and a USB dock):
    /// each node opens the device that lists it; any other path is ENOENT.
    public static func fake(_ devices: [FakeDRMDevice]) -> DeviceSource {
        func owner(_ path: String) -> FakeDRMDevice { devices.first { $0.cardNodes.contains(path) } ?? devices[0] }
        return DeviceSource(discover: { devices.flatMap(\.cardNodes).sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 } },
                            open: { try DRMDevice.open(path: $0, fake: owner($0)) },
                            openReadOnly: { try DRMDevice.open(path: $0, fake: owner($0), readOnly: true) })
    }
}

extension DeviceSource {
    /// The kernel's /dev/dri/card* nodes, opened through a seat session (libseat) instead of
    /// open(2): the user needs no permission on the node, and the seat hands DRM master over.
    public static func seat(_ session: SeatSession) -> DeviceSource {
        DeviceSource(discover: { DRMDevice.discover() }, open: { try session.openDevice($0) })
    }
}
