import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Testing

/// `DeviceInventory`'s listing: which nodes, skipping an unreadable one, the faster modes.
@Suite struct DeviceListingTests {
    /// The repository's `profiles/` file `name`.json.
    static func profile(_ name: String) throws -> FakeDRMProfileFile {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try FakeDRMProfileFile.load(repo.appendingPathComponent("profiles/\(name).json").path)
    }

    @Test func theNodesAreTheDeviceElseTheProfilesElseEveryCard() throws {
        #expect(
            try DeviceInventory.nodes(device: "/dev/dri/card3", profiles: [], discovered: { ["x"] }) == [
                "/dev/dri/card3"
            ])
        #expect(
            try DeviceInventory.nodes(device: nil, profiles: [], discovered: { ["/dev/dri/card0", "/dev/dri/card1"] })
                == ["/dev/dri/card0", "/dev/dri/card1"])
        #expect(throws: DeviceInventory.Refusal.noDevice) {
            try DeviceInventory.nodes(device: nil, profiles: [], discovered: { [] })
        }
        let vkms = try Self.profile("vkms")
        #expect(try DeviceInventory.nodes(device: nil, profiles: [vkms], discovered: { [] }) == [vkms.node])
        #expect(
            try DeviceInventory.nodes(device: "/dev/dri/card7", profiles: [vkms], discovered: { [] }) == [
                "/dev/dri/card7"
            ])
    }

    @Test func aWatchNeedsARealCard() throws {
        let vkms = try Self.profile("vkms")
        #expect(throws: DeviceInventory.Refusal.watchNeedsRealCard) {
            try DeviceInventory.watchedNode(
                device: "/dev/dri/card0", profiles: [vkms], discovered: { ["/dev/dri/card0"] })
        }
        #expect(throws: DeviceInventory.Refusal.noDevice) {
            try DeviceInventory.watchedNode(device: nil, profiles: [], discovered: { [] })
        }
        #expect(
            try DeviceInventory.watchedNode(
                device: nil, profiles: [], discovered: { ["/dev/dri/card2", "/dev/dri/card3"] }) == "/dev/dri/card2")
        #expect(
            try DeviceInventory.watchedNode(device: "/dev/dri/card5", profiles: [], discovered: { [] })
                == "/dev/dri/card5")
    }

    @Test func anUnreadableNodeIsSkippedAmongSeveralAndThrownAlone() throws {
        let source = DeviceSource.fake([FakeDRMDevice(path: "/dev/dri/card0")])
        var seen: [(String, Bool)] = []
        let listing = try DeviceInventory.list(["/dev/dri/card0", "/dev/dri/card9"], source: source) { path, r in
            seen.append((path, (try? r.get()) != nil))
        }
        #expect(seen.map(\.0) == ["/dev/dri/card0", "/dev/dri/card9"])
        #expect(seen.map(\.1) == [true, false])
        #expect(listing.nodes == 2)
        #expect(listing.skipped.map(\.path) == ["/dev/dri/card9"])
        #expect(listing.skipped.first?.error.kind == .noSuchNode)
        #expect(listing.refusal == nil)

        let none = try DeviceInventory.list(["/dev/dri/card8", "/dev/dri/card9"], source: source) { _, _ in }
        #expect(none.refusal == .noneListable(nodes: 2))

        #expect(throws: OutputSelectionError.self) {
            _ = try DeviceInventory.list(["/dev/dri/card9"], source: source) { _, _ in Issue.record("called") }
        }
    }

    @Test func aFasterModeAtTheDrivenOrPreferredSizeIsFound() throws {
        let fake = FakeDRMDevice()
        let m60 = fake.connectors[0].modes[1]
        #expect(m60.hdisplay == 1920)
        let m120 = ModeInfo(
            clock: 297000, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
            vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125, flags: [.phsync, .pvsync], type: [.driver])
        fake.connectors[0].modes.append(m120)
        // Idle: it prefers 1024x768, and nothing faster is offered at that size.
        #expect(try DeviceInventory(try DRMDevice.open(fake: fake)).fasterModes.isEmpty)
        // Driven at 1920x1080@60 with 120 Hz offered at the same size.
        fake.preset(mode: m60)
        let driven = try DeviceInventory(try DRMDevice.open(fake: fake)).fasterModes
        #expect(driven.count == 1)
        #expect(driven.first?.use == .driven)
        #expect(driven.first?.mode == m60)
        #expect(driven.first?.faster == m120)

        // Idle with a faster mode at the preferred size.
        let idle = FakeDRMDevice()
        let preferred = idle.connectors[0].modes[0]
        var fast = preferred
        fast.clock = preferred.clock * 2
        fast.type = [.driver]
        idle.connectors[0].modes.append(fast)
        let p = try DeviceInventory(try DRMDevice.open(fake: idle)).fasterModes
        #expect(p.map(\.use) == [.preferred])
        #expect(p.first?.mode == preferred)
        #expect(p.first?.faster == fast)
    }
}

/// `WatchedConnector.watch`: every connector once, then only changes, until stopped.
@Suite struct ConnectorWatchTests {
    @Test func theFirstReportIsEveryConnectorAndAStopEndsTheWatch() throws {
        let fake = FakeDRMDevice()
        let dev = try DRMDevice.open(fake: fake)
        var reports: [WatchedConnector.Changes] = []
        var polls = 0
        let stopped = {
            polls += 1
            return polls > 2
        }
        try WatchedConnector.watch(dev, stopped: stopped, report: { reports.append($0) })
        #expect(reports.count == 1)
        #expect(reports.first?.changes.map(\.now.name) == ["Virtual-1"])
        #expect(reports.first?.changes.first?.old == nil)
        #expect(reports.first?.changes.first?.now.status == .connected)
        #expect(polls == 3)
    }
}
