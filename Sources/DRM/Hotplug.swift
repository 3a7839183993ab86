#if canImport(Glibc)
import Glibc
#endif
import CCadenceShim
import SystemPackage

/// Where a device's uevents come from, behind the system seam: a libudev monitor on the live
/// kernel, the scripted connector changes on ``FakeDRMDevice``.
protocol HotplugChannel: AnyObject {
    /// The descriptor to poll (a netlink socket live; a placeholder on the fake).
    var fileDescriptor: Int32 { get }
    /// Appends the pending uevents of the device the channel was opened for, without waiting.
    func receive(into events: inout [Uevent]) throws
}

/// The live channel: a ``UdevMonitor`` on the kernel's uevents for `drm`, keeping only the
/// events of one card (by device number, so that a symlinked path matches too).
final class LiveHotplugChannel: HotplugChannel {
    let monitor: UdevMonitor
    let deviceNumber: UInt64

    init(fd: Int32) throws {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Errno(rawValue: errno) }
        deviceNumber = UInt64(st.st_rdev)
        do {
            monitor = try UdevMonitor(source: .kernel)
        } catch let e as DRMError {
            throw e.errno
        }
    }

    var fileDescriptor: Int32 { monitor.fileDescriptor }

    func receive(into events: inout [Uevent]) throws {
        do {
            while let e = try monitor.receive() {
                if e.deviceNumber == deviceNumber { events.append(e) }
            }
        } catch let e as DRMError {
            throw e.errno
        }
    }
}

extension LiveDRM {
    func openHotplug(_ fd: Int32) throws -> HotplugChannel { try LiveHotplugChannel(fd: fd) }

    func poll(_ fd: Int32, hotplug: HotplugChannel, timeoutNs: Int64) throws -> (events: Bool, hotplug: Bool) {
        let r = cadence_poll2_ns(fd, hotplug.fileDescriptor, timeoutNs)
        if r < 0 { throw Errno(rawValue: -r) }
        return (r & 1 != 0, r & 2 != 0)
    }

    func pollHotplug(_ channel: HotplugChannel, timeoutNs: Int64) throws -> Bool {
        try poll(channel.fileDescriptor, timeoutNs: timeoutNs)
    }
}

/// Hotplug: the card's uevents (a connector plugged or unplugged, a link-status change).
///
/// After ``watchHotplug()`` the device's event waits (``readEvents(until:into:)``) also wake
/// when a uevent for this card arrives, and set ``hotplugPending``; ``takeHotplugEvents()``
/// reads them. A uevent says only that something changed: re-read the connectors
/// (``connector(_:)``) to learn what.
extension DRMDevice {
    /// Starts listening for this card's uevents (live: a libudev monitor on the kernel's
    /// netlink source, see ``UdevMonitor``). Idempotent. Throws ``DRMError``
    /// ("udev_monitor_new_from_netlink", …) when the monitor cannot be opened.
    public func watchHotplug() throws {
        guard hotplugChannel == nil else { return }
        hotplugChannel = try retrying("udev_monitor_new_from_netlink(kernel)", path) { try sys.openHotplug(fd) }
    }

    /// True after a successful ``watchHotplug()``.
    public var watchesHotplug: Bool { hotplugChannel != nil }

    /// The uevents received for this card since the last call (none without ``watchHotplug()``),
    /// oldest first; clears ``hotplugPending``.
    public func takeHotplugEvents() throws -> [Uevent] {
        hotplugPending = false
        guard let channel = hotplugChannel else { return [] }
        var events: [Uevent] = []
        try retrying("udev_monitor_receive_device", path) { try channel.receive(into: &events) }
        return events
    }

    /// Waits until a uevent for this card arrives or `deadline` (CLOCK_MONOTONIC ns) passes,
    /// and returns the uevents read ([] on timeout). A signal ends the wait early with [] and
    /// `interrupted` true. DRM events are not read (they stay queued).
    public func waitForHotplug(until deadline: Int64) throws -> (events: [Uevent], interrupted: Bool) {
        guard let channel = hotplugChannel else {
            throw DRMError(call: "waitForHotplug", object: path, errno: Errno(rawValue: EBADF))
        }
        let ready: Bool
        do {
            ready = try sys.pollHotplug(channel, timeoutNs: max(0, deadline - sys.monotonicNow()))
        } catch let e as Errno where e == .interrupted {
            return ([], true)
        } catch let e as Errno {
            throw DRMError(call: "poll", object: "uevent monitor", errno: e)
        }
        return (ready ? try takeHotplugEvents() : [], false)
    }
}
