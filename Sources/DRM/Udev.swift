#if canImport(Glibc)
import Glibc
#endif
import CUdev
import SystemPackage

/// One uevent of a device (a `change` of a DRM card when a connector was plugged or unplugged),
/// as a value: the action, the device and the properties hotplug code reads.
public struct Uevent: Equatable, Sendable {
    /// "change", "add", "remove", …
    public var action: String
    /// The kernel subsystem ("drm").
    public var subsystem: String
    /// The device's kernel name ("card0").
    public var sysname: String
    /// The device node ("/dev/dri/card0"), when the device has one.
    public var devnode: String?
    /// The device number (dev_t) of the node, 0 when none.
    public var deviceNumber: UInt64
    /// The uevent's properties (HOTPLUG, CONNECTOR, PROPERTY, DEVNAME, …).
    public var properties: [String: String]

    /// A uevent with these fields (the fake DRM device's scripted ones, tests).
    public init(action: String, subsystem: String = "drm", sysname: String, devnode: String? = nil,
                deviceNumber: UInt64 = 0, properties: [String: String] = [:]) {
        self.action = action
        self.subsystem = subsystem
        self.sysname = sysname
        self.devnode = devnode
        self.deviceNumber = deviceNumber
        self.properties = properties
    }

    /// HOTPLUG=1: the card's connectors may have changed (drm_kms_helper_hotplug_event).
    public var isHotplug: Bool { properties["HOTPLUG"] == "1" }
    /// CONNECTOR=id: the one connector that changed, when the kernel named it.
    public var connector: ConnectorID? { properties["CONNECTOR"].flatMap { UInt32($0) }.map(ConnectorID.init) }
    /// PROPERTY=id: the connector property that changed (e.g. "link-status", "Content Protection").
    public var property: PropertyID? { properties["PROPERTY"].flatMap { UInt32($0) }.map(PropertyID.init) }
}

/// A libudev monitor (udev_monitor) of one subsystem's uevents. Unrefs the monitor and its udev
/// context in deinit. Not thread-safe: use it from one thread.
///
/// The ``Source/kernel`` source reads the kernel's uevents straight from netlink
/// (`udev_monitor_new_from_netlink(udev, "kernel")`): it works without a running udevd (an
/// initramfs, a container, the test VM) and sees an event as soon as the kernel sends it.
/// ``Source/udev`` gets the events udevd re-broadcasts after its rules ran, and nothing at all
/// when no udevd runs. A connector status change needs no rule, so hotplug uses `kernel`.
public final class UdevMonitor {
    /// Which netlink group to listen to.
    public enum Source: String, Sendable {
        /// The kernel's own uevents (no udevd needed).
        case kernel
        /// The events udevd sends after processing its rules.
        case udev
    }

    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    /// The netlink group listened to.
    public let source: Source

    /// Opens a monitor on `source` for `subsystem` (and `devtype`, e.g. "drm_minor"; nil: any)
    /// and starts receiving. Throws ``DRMError`` naming the libudev call and errno.
    public init(source: Source = .kernel, subsystem: String = "drm", devtype: String? = "drm_minor") throws {
        errno = 0
        guard let udev = udev_new() else {
            throw DRMError(call: "udev_new", errno: Errno(rawValue: errno == 0 ? ENOMEM : errno))
        }
        errno = 0
        guard let monitor = udev_monitor_new_from_netlink(udev, source.rawValue) else {
            let e = Errno(rawValue: errno == 0 ? EIO : errno)
            udev_unref(udev)
            throw DRMError(call: "udev_monitor_new_from_netlink", object: source.rawValue, errno: e)
        }
        self.udev = udev
        self.monitor = monitor
        self.source = source
        // From here deinit releases both.
        let r = udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, devtype)
        if r < 0 { throw DRMError(call: "udev_monitor_filter_add_match_subsystem_devtype", object: subsystem, errno: Errno(rawValue: -r)) }
        let e = udev_monitor_enable_receiving(monitor)
        if e < 0 { throw DRMError(call: "udev_monitor_enable_receiving", object: source.rawValue, errno: Errno(rawValue: -e)) }
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// The non-blocking netlink socket to poll; readable means: call ``receive()``.
    public var fileDescriptor: Int32 { udev_monitor_get_fd(monitor) }

    /// The next pending uevent that passes the filter, without waiting; nil when none is pending.
    /// EINTR is retried; other errors throw ``DRMError``.
    public func receive() throws -> Uevent? {
        while true {
            errno = 0
            guard let dev = udev_monitor_receive_device(monitor) else {
                let e = errno
                if e == EINTR { continue }
                if e == EAGAIN || e == EWOULDBLOCK || e == 0 { return nil }
                throw DRMError(call: "udev_monitor_receive_device", object: source.rawValue, errno: Errno(rawValue: e))
            }
            defer { udev_device_unref(dev) }
            return Self.event(dev)
        }
    }

    private static func event(_ dev: OpaquePointer) -> Uevent {
        func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(dev)
        while let e = entry {
            if let name = string(udev_list_entry_get_name(e)) { properties[name] = string(udev_list_entry_get_value(e)) ?? "" }
            entry = udev_list_entry_get_next(e)
        }
        return Uevent(action: string(udev_device_get_action(dev)) ?? "",
                      subsystem: string(udev_device_get_subsystem(dev)) ?? "",
                      sysname: string(udev_device_get_sysname(dev)) ?? "",
                      devnode: string(udev_device_get_devnode(dev)),
                      deviceNumber: UInt64(udev_device_get_devnum(dev)), properties: properties)
    }
}
