#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// ``FakeDRMDevice``'s hotplug script: connectors unplugged and plugged back at given times of
/// its clock, each change followed by the `change` uevent the kernel sends
/// (ACTION=change, HOTPLUG=1, CONNECTOR=id), readable through ``DRMDevice/watchHotplug()``.
///
/// As on the kernel, unplugging a connector does not switch its CRTC off: flips go on
/// completing; only the connector's status (and its mode list, empty while disconnected) change.
extension FakeDRMDevice {
    /// Sets `connector`'s status at `time` on the device's clock (virtual, or CLOCK_MONOTONIC
    /// with ``usesWallClock``) and queues its uevent then. A time already passed applies at the
    /// next call. Changes to one connector apply in time order.
    public func scheduleConnector(_ connector: ConnectorID, status: ConnectionStatus, at time: Int64) {
        hotplugScript.append((time, connector, status))
        hotplugScript.sort { $0.at < $1.at }
    }

    /// Sets `connector`'s status now and queues its uevent (a status write to
    /// `/sys/class/drm/card0-NAME/status` on the kernel).
    public func setConnector(_ connector: ConnectorID, status: ConnectionStatus) {
        scheduleConnector(connector, status: status, at: clock)
        applyDueHotplug()
    }

    /// The uevents queued and not read yet.
    public var pendingUevents: [Uevent] { ueventsReady }

    /// Applies the scripted changes whose time has come.
    func applyDueHotplug() {
        while let first = hotplugScript.first, first.at <= clock {
            hotplugScript.removeFirst()
            if let i = connectors.firstIndex(where: { $0.id == first.connector }) {
                connectors[i].status = first.status
            }
            let name = path.split(separator: "/").last.map(String.init) ?? "card0"
            ueventsReady.append(Uevent(action: "change", sysname: name, devnode: path,
                                       properties: ["HOTPLUG": "1", "CONNECTOR": "\(first.connector.rawValue)",
                                                    "DEVNAME": "dri/\(name)", "SEQNUM": "\(ueventsReady.count + 1)"]))
        }
    }

    func openHotplug(_ fd: Int32) throws -> HotplugChannel {
        try record("udev_monitor_new_from_netlink")
        guard openFDs.contains(fd) else { throw Errno.badFileDescriptor }
        return FakeHotplugChannel(device: self)
    }

    /// Like ``poll(_:timeoutNs:)``: the clock jumps (or sleeps, on the wall clock) to the first
    /// pending DRM event or scripted change, whichever comes first, if before the deadline.
    func poll(_ fd: Int32, hotplug: HotplugChannel, timeoutNs: Int64) throws -> (events: Bool, hotplug: Bool) {
        try record("poll")
        let first = min(pending.map(\.readyAt).min() ?? .max, nextUeventTime())
        try waitForReady(first, deadline: clock + max(0, timeoutNs))
        return (pending.contains { $0.readyAt <= clock }, !ueventsReady.isEmpty)
    }

    func pollHotplug(_ channel: HotplugChannel, timeoutNs: Int64) throws -> Bool {
        try record("poll")
        try waitForReady(nextUeventTime(), deadline: clock + max(0, timeoutNs))
        return !ueventsReady.isEmpty
    }

    private func nextUeventTime() -> Int64 {
        ueventsReady.isEmpty ? hotplugScript.first?.at ?? .max : clock
    }

    /// Moves the clock to `first` when it is before `deadline`, else to `deadline`; on the
    /// wall clock sleeps instead (a signal throws EINTR, as poll does).
    private func waitForReady(_ first: Int64, deadline: Int64) throws {
        if usesWallClock {
            if !wallSleep(until: min(deadline, first)) && first > clock { throw Errno.interrupted }
        } else {
            clock = first <= deadline ? max(clock, first) : deadline
        }
        applyDueHotplug()
    }
}

/// The fake's uevent channel: reads the device's queued uevents.
final class FakeHotplugChannel: HotplugChannel {
    unowned let device: FakeDRMDevice
    init(device: FakeDRMDevice) { self.device = device }
    var fileDescriptor: Int32 { -1 }
    func receive(into events: inout [Uevent]) throws {
        try device.record("udev_monitor_receive_device")
        events.append(contentsOf: device.ueventsReady)
        device.ueventsReady.removeAll()
    }
}
