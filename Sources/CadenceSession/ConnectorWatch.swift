import DRM

/// A hotplug watch of one card (what `cadence list --watch` does): every connector's status
/// once, then the changes as the card's uevents come.
extension WatchedConnector {
    /// Why a hotplug watch cannot go on.
    public enum WatchFailure: Error {
        /// The card's uevents cannot be listened to (no udev monitor).
        case unwatchable(DRMError)
        /// The card's connectors cannot be read.
        case unreadable(DRMError)
    }

    /// The connectors' status changes in one report, and the CLOCK_MONOTONIC time (ns) they
    /// were read at.
    public typealias Changes = (changes: [(old: ConnectionStatus?, now: WatchedConnector)], monotonicNs: Int64)

    /// Watches `dev` until `stopped()` says so: `report` gets every connector's status once
    /// (each a change from nil), then, whenever a uevent for the card arrives, the connectors
    /// whose status changed (never an empty report). Waits in steps of at most a second, so a
    /// stop is seen within one. Throws ``WatchFailure``, or the `DRMError` of a failed wait.
    public static func watch(_ dev: DRMDevice, stopped: () -> Bool, report: (Changes) -> Void) throws {
        do {
            try dev.watchHotplug()
        } catch let e as DRMError {
            throw WatchFailure.unwatchable(e)
        }
        func reading() throws -> [WatchedConnector] {
            do { return try read(dev) } catch let e as DRMError { throw WatchFailure.unreadable(e) }
        }
        func send(_ changes: [(old: ConnectionStatus?, now: WatchedConnector)]) {
            if !changes.isEmpty { report((changes, dev.monotonicNow())) }
        }
        var known = try reading()
        send(changes(from: [], to: known))
        while !stopped() {
            let r = try dev.waitForHotplug(until: dev.monotonicNow() + 1_000_000_000)
            if r.events.isEmpty { continue }
            let fresh = try reading()
            send(changes(from: known, to: fresh))
            known = fresh
        }
    }
}
