import Testing
import CadenceCore
import DRM
@testable import KMSDisplay

/// Hotplug on the KMS path over the fake DRM device's scripted connector changes (virtual time:
/// nothing sleeps): the driven connector unplugged ends the run with "disconnected", another
/// connector's changes leave it alone, a replug before the display looks changes nothing, and
/// a flip in flight at the unplug is reported failed with the disconnected cause.
@Suite struct HotplugTests {
    static let driven = ConnectorID(35)
    static let other = ConnectorID(36)

    /// vkms-like, plus a second connector (HDMI-A-1) on the same encoder.
    static func device() -> FakeDRMDevice {
        let fake = FakeDRMDevice()
        fake.connectors.append(.init(id: other, type: 11, typeID: 1, modes: fake.connectors[0].modes, encoders: [EncoderID(34)]))
        return fake
    }

    /// Runs `seconds` of `cadence run`-like pacing on Virtual-1 after `script` scheduled changes
    /// relative to the open; returns the summary, the frames, the unplug-relative end time.
    func run(seconds: Int64 = 2, _ script: (FakeDRMDevice, Int64) -> Void) throws -> (RunSummary, [FrameReport], Int64, FakeDRMDevice) {
        let fake = Self.device()
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), connector: "Virtual-1")
        #expect(display.watchesHotplug)
        let start = display.now()
        script(fake, start)
        var c = RunConfiguration()
        c.duration = seconds * 1_000_000_000
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c)
        var frames: [FrameReport] = []
        run.onFrame = { frames.append($0) }
        let s = try run.run()
        let end = display.now()
        try display.close()
        return (s, frames, end - start, fake)
    }

    @Test func unplugOfTheDrivenConnectorEndsTheRun() throws {
        let (s, frames, end, fake) = try run { fake, t in fake.scheduleConnector(Self.driven, status: .disconnected, at: t + 500_000_000) }
        #expect(s.endReason == "disconnected: connector Virtual-1 disconnected")
        // Ended at the uevent, not at the 2 s duration (virtual time: within a refresh).
        #expect(end >= 500_000_000 && end < 500_000_000 + 17_000_000, "ended \(end) ns after the open")
        #expect(s.presented >= 25 && s.presented <= 31, "\(s.presented) frames in 0.5 s at 60 Hz")
        // Every frame not shown when the output went away carries the disconnected cause.
        let after = frames.filter { $0.outcome == .failed }
        #expect(after.allSatisfy { $0.cause == .disconnected })
        #expect(s.causes["device-lost"] == nil)
        #expect(fake.pendingUevents.isEmpty, "the uevent was read")
    }

    @Test func anotherConnectorUnpluggedChangesNothing() throws {
        let (s, frames, end, fake) = try run { fake, t in
            fake.scheduleConnector(Self.other, status: .disconnected, at: t + 300_000_000)
            fake.scheduleConnector(Self.other, status: .connected, at: t + 900_000_000)
        }
        #expect(s.endReason == "completed")
        #expect(end >= 2_000_000_000)
        #expect(s.failed == 0 && s.causes["disconnected"] == nil)
        #expect(s.presented >= 115, "\(s.presented) frames in 2 s")
        #expect(frames.allSatisfy { $0.cause != .disconnected })
        #expect(fake.pendingUevents.isEmpty, "both uevents were read")
    }

    @Test func replugBeforeTheDisplayLooksChangesNothing() throws {
        // Off and on again at the same instant: when the display reads the connector it is
        // connected, so the run goes on (a short glitch the kernel already resolved).
        let (s, _, end, _) = try run(seconds: 1) { fake, t in
            fake.scheduleConnector(Self.driven, status: .disconnected, at: t + 400_000_000)
            fake.scheduleConnector(Self.driven, status: .connected, at: t + 400_000_000)
        }
        #expect(s.endReason == "completed" && end >= 1_000_000_000 && s.failed == 0)
    }

    @Test func replugAfterTheEndLetsANewDisplayOpen() throws {
        let fake = Self.device()
        let dev = try DRMDevice.open(fake: fake)
        let display = try KMSDisplay.open(on: dev, connector: "Virtual-1")
        fake.setConnector(Self.driven, status: .disconnected)
        var events: [BackendEvent] = []
        try display.waitForEvents(until: display.now() + 100_000_000, into: &events)
        #expect(events == [.failed(frame: nil, .disconnected("connector Virtual-1 disconnected"))])
        #expect(throws: BackendFailure.disconnected("connector Virtual-1 disconnected")) { try display.finish(frame: 1) }
        try display.close()
        // While unplugged the connector cannot be selected; plugged back it can.
        #expect(throws: OutputSelectionError.self) { _ = try KMSDisplay.open(on: dev, connector: "Virtual-1") }
        fake.setConnector(Self.driven, status: .connected)
        let again = try KMSDisplay.open(on: dev, connector: "Virtual-1")
        #expect(try again.lastVBlank().sequence >= 0)
        try again.close()
    }

    @Test func unplugDuringAFlipInFlight() throws {
        let fake = Self.device()
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), connector: "Virtual-1")
        try display.finish(frame: 7)
        try display.submit(frame: 7)
        // The uevent comes before the flip's vblank: the flip in flight fails first, then the display.
        fake.scheduleConnector(Self.driven, status: .disconnected, at: display.now() + 1_000_000)
        var events: [BackendEvent] = []
        try display.waitForEvents(until: display.now() + 100_000_000, into: &events)
        let why = "connector Virtual-1 disconnected"
        #expect(events == [.failed(frame: 7, .disconnected(why)), .failed(frame: nil, .disconnected(why))])
        #expect(throws: BackendFailure.disconnected(why)) { try display.submit(frame: 8) }
        var later: [BackendEvent] = []
        #expect(throws: BackendFailure.disconnected(why)) { try display.waitForEvents(until: display.now() + 50_000_000, into: &later) }
        try display.close()
    }

    @Test func pacerMarksTheFrameInFlightDisconnected() throws {
        // Unplug a few hundred µs after a commit (the fake's flips complete at the next vblank):
        // the frame in flight is the one failed.
        let (s, frames, _, _) = try run { fake, t in
            fake.scheduleConnector(Self.driven, status: .disconnected, at: t + 10 * 16_666_667 + 8_000_000)
        }
        #expect(s.endReason.hasPrefix("disconnected"))
        let failed = frames.filter { $0.outcome == .failed }
        #expect(!failed.isEmpty && failed.allSatisfy { $0.cause == .disconnected }, "\(failed.map(\.id))")
        #expect(s.causes["disconnected"] == failed.count)
    }

    @Test func noMonitorMeansNoHotplugButTheDisplayWorks() throws {
        let fake = Self.device()
        fake.inject(.permissionDenied, into: "udev_monitor_new_from_netlink")
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), connector: "Virtual-1")
        #expect(!display.watchesHotplug)
        fake.setConnector(Self.driven, status: .disconnected)
        var events: [BackendEvent] = []
        try display.waitForEvents(until: display.now() + 20_000_000, into: &events)
        #expect(!events.contains { if case .failed = $0 { return true } else { return false } })
        try display.close()
    }
}
