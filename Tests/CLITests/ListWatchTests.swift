import Testing
import CadenceSession
import DRM
@testable import cadence

/// `list --watch`'s comparison of two connector readings and its lines.
@Suite struct ListWatchTests {
    static func c(_ id: UInt32, _ name: String, _ s: ConnectionStatus, mode: String? = nil) -> WatchedConnector {
        WatchedConnector(name: name, id: id, status: s, mode: mode)
    }

    @Test func statusChangesOnly() {
        let a = [Self.c(35, "Virtual-1", .connected, mode: "1024x768@60.0038"), Self.c(36, "HDMI-A-1", .disconnected)]
        let b = [Self.c(35, "Virtual-1", .disconnected), Self.c(36, "HDMI-A-1", .disconnected)]
        let ch = WatchedConnector.changes(from: a, to: b)
        #expect(ch.count == 1 && ch[0].old == .connected && ch[0].now.name == "Virtual-1" && ch[0].now.status == .disconnected)
        #expect(WatchedConnector.changes(from: a, to: a).isEmpty, "a uevent that changed no status prints nothing")
    }

    @Test func initialNewAndVanishedConnectors() {
        let first = WatchedConnector.changes(from: [], to: [Self.c(35, "Virtual-1", .connected)])
        #expect(first.count == 1 && first[0].old == nil)
        // An MST connector that vanished while connected reads as disconnected; one that was
        // disconnected and vanished says nothing.
        let old = [Self.c(40, "DP-3", .connected, mode: "1920x1080@60"), Self.c(41, "DP-4", .disconnected)]
        let gone = WatchedConnector.changes(from: old, to: [])
        #expect(gone.count == 1 && gone[0].now.name == "DP-3" && gone[0].now.status == .disconnected && gone[0].now.mode == nil)
    }

    @Test func linesNameTheConnectorAndTheChange() {
        var now = Self.c(35, "Virtual-1", .connected, mode: "1024x768@60.0038")
        #expect(WatchedConnector.line(time: "T", device: "card0", old: .disconnected, now)
                == "T card0 Virtual-1 disconnected→connected  mode 1024x768@60.0038 Hz  no EDID")
        now.monitor = "QEMU Monitor"; now.serial = "42"
        #expect(WatchedConnector.line(time: "T", device: "card0", old: .disconnected, now).hasSuffix("monitor \"QEMU Monitor\" serial 42"))
        let off = Self.c(35, "Virtual-1", .disconnected)
        #expect(WatchedConnector.line(time: "T", device: "card0", old: .connected, off) == "T card0 Virtual-1 connected→disconnected")
        #expect(WatchedConnector.json(time: "T", monotonicNs: 5, device: "card0", old: .connected, off)
                == #"{"time":"T","monotonicNs":5,"device":"card0","connector":"Virtual-1","connectorId":35,"old":"connected","new":"disconnected","mode":null,"monitor":null,"manufacturer":null,"serial":null}"#)
    }
}

/// `list --watch`'s bad input: one stderr line, exit 2, nothing on stdout.
@Suite struct ListWatchCLITests {
    @Test func watchOnAFakeDeviceOrWithoutACardIsOneLine() throws {
        let dir = scratchDirectory()
        let fake = try cadence(["list", "--watch", "--backend", "fake-drm"], in: dir)
        #expect(fake.status == 2 && fake.out.isEmpty)
        #expect(lines(fake.err) == ["cadence list: --watch needs a real card (--backend kms): a fake DRM device never changes"])
        let missing = try cadence(["list", "--watch", "--device", "/nonexistent"], in: dir)
        #expect(missing.status == 2 && missing.out.isEmpty && lines(missing.err).count == 1, "\(missing.err)")
    }
}
