import CadenceCore
import DRM

/// Hotplug: the display watches its card's uevents (``DRMDevice/watchHotplug()``; the monitor's
/// descriptor is polled with the card's, so a uevent wakes ``waitForEvents(until:into:)`` at
/// once). On a `change` uevent of the card that names this display's connector (CONNECTOR=id)
/// or no connector (HOTPLUG=1 from the kernel's probe helper, or a `change` written to the
/// card's `uevent` file: drivers without connector polling, like vkms on Linux 6.1, send
/// nothing when a status is forced through sysfs) the connector is read again; when it reports disconnected (or is gone), the flip in
/// flight fails with ``BackendFailure/disconnected(_:)`` and so does the display
/// (`.failed(frame: nil, .disconnected)`): from then on it accepts nothing more, and the run
/// ends with "disconnected: connector NAME disconnected". An event for another connector, or a
/// status that stays connected (a mode-list or link-status change), changes nothing.
///
/// The CRTC is not switched off by the kernel when a connector goes away; ``close()`` restores
/// the original state as usual (the console, when its connector comes back).
extension KMSDisplay {
    /// True when the card's uevents are watched (false where no uevent monitor could be opened:
    /// then an unplug is not seen).
    public var watchesHotplug: Bool { device.watchesHotplug }

    /// Throws what made the display unusable: the output unplugged or the device lost.
    func checkUsable() throws {
        if let unplugged { throw BackendFailure.disconnected(unplugged) }
        if let lost { throw BackendFailure.deviceLost(lost) }
    }

    /// Reads the pending uevents and acts on them; true when an event was added.
    func serviceHotplug(into events: inout [BackendEvent]) -> Bool {
        let taken: [Uevent]?
        if device.routesEvents {
            // Several outputs share the device: whichever wait took the uevents, each output sees them.
            let shared = try? device.hotplugEvents(since: ueventsSeen)
            if let shared { ueventsSeen = shared.count }
            taken = shared?.events
        } else {
            taken = try? device.takeHotplugEvents()
        }
        guard unplugged == nil, let uevents = taken else { return false }
        let me = selection.connector.id
        guard uevents.contains(where: { $0.action == "change" && ($0.connector == nil || $0.connector == me) }) else { return false }
        let status: ConnectionStatus
        do {
            status = try device.connector(me).status
        } catch let e as DRMError where e.errno == .enodev {
            events.append(.failed(frame: inFlight?.frame, fail(e)))
            inFlight = nil
            return true
        } catch {
            // The connector object is gone (a DisplayPort MST branch unplugged).
            status = .disconnected
        }
        guard status == .disconnected else { return false }
        let why = "connector \(selection.connector.name) disconnected"
        unplugged = why
        if let f = inFlight {
            events.append(.failed(frame: f.frame, .disconnected(why)))
            inFlight = nil
        }
        events.append(.failed(frame: nil, .disconnected(why)))
        return true
    }
}
