import Testing
import SystemPackage
@testable import DRM

/// The DRM layer's hotplug: the fake device's scripted connector changes and their uevents
/// through ``DRMDevice/watchHotplug()``, and the live libudev monitor opening on this machine.
@Suite struct DRMHotplugTests {
    @Test func scriptedUnplugChangesTheStatusAndSendsAUevent() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        try dev.watchHotplug()
        let id = ConnectorID(35)
        let t0 = dev.monotonicNow()
        fake.scheduleConnector(id, status: .disconnected, at: t0 + 5_000_000)
        #expect(try dev.connector(id).status == .connected, "not before its time")
        let r = try dev.waitForHotplug(until: t0 + 1_000_000_000)
        #expect(!r.interrupted && r.events.count == 1)
        #expect(dev.monotonicNow() == t0 + 5_000_000, "the wait ended at the change, not the deadline")
        let e = try #require(r.events.first)
        #expect(e.action == "change" && e.isHotplug && e.connector == id && e.sysname == "card0")
        let c = try dev.connector(id)
        #expect(c.status == .disconnected && c.modes.isEmpty)
        // Nothing more: the next wait times out at its deadline with no event.
        let quiet = try dev.waitForHotplug(until: t0 + 20_000_000)
        #expect(quiet.events.isEmpty && dev.monotonicNow() == t0 + 20_000_000)
        fake.setConnector(id, status: .connected)
        #expect(try dev.takeHotplugEvents().map(\.connector) == [id])
        #expect(try dev.connector(id).modes.count == 3)
    }

    @Test func aUeventWakesTheDRMEventWait() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        try dev.watchHotplug()
        let t0 = dev.monotonicNow()
        fake.scheduleConnector(ConnectorID(35), status: .disconnected, at: t0 + 3_000_000)
        var events: [DRMEvent] = []
        _ = try dev.readEvents(until: t0 + 500_000_000, into: &events)
        #expect(events.isEmpty && dev.hotplugPending && dev.monotonicNow() == t0 + 3_000_000)
        #expect(try dev.takeHotplugEvents().count == 1 && !dev.hotplugPending)
    }

    @Test func unwatchedDeviceSeesNoUevents() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        fake.setConnector(ConnectorID(35), status: .disconnected)
        #expect(try dev.takeHotplugEvents().isEmpty && !dev.watchesHotplug)
        #expect(throws: DRMError.self) { _ = try dev.waitForHotplug(until: dev.monotonicNow() + 1_000) }
    }

    @Test func monitorFailureThrowsWithErrnoAndContext() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        fake.inject(Errno(rawValue: 93), into: "udev_monitor_new_from_netlink")
        let e = try #require(throws: DRMError.self) { try dev.watchHotplug() }
        #expect(e.errno.rawValue == 93 && e.call.hasPrefix("udev_monitor_new_from_netlink") && e.object == "/dev/dri/card0")
        #expect(!dev.watchesHotplug)
    }

    /// The live monitor on this machine's kernel netlink socket: it opens with a pollable
    /// descriptor and, with no DRM uevent pending, receives nothing (without blocking).
    @Test func liveKernelMonitorOpensAndDoesNotBlock() throws {
        let m: UdevMonitor
        do {
            m = try UdevMonitor(source: .kernel)
        } catch let e as DRMError {
            // A sandbox without netlink: the error names the call and the errno.
            #expect(e.call == "udev_monitor_new_from_netlink" && e.object == "kernel")
            return
        }
        #expect(m.fileDescriptor >= 0 && m.source == .kernel)
        #expect(try m.receive() == nil)
    }

    @Test func ueventPropertiesParse() {
        let e = Uevent(action: "change", sysname: "card0", properties: ["HOTPLUG": "1", "CONNECTOR": "77", "PROPERTY": "5"])
        #expect(e.isHotplug && e.connector == ConnectorID(77) && e.property == PropertyID(5))
        let synthetic = Uevent(action: "change", sysname: "card0", properties: ["SYNTH_UUID": "0"])
        #expect(!synthetic.isHotplug && synthetic.connector == nil && synthetic.property == nil)
    }
}
