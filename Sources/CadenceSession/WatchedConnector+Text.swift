import DRM
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What `cadence list --watch` prints for a connector's status: a text line or a JSON line.
extension WatchedConnector {
    /// One text line: "2026-11-23T22:40:01.123Z card0 Virtual-1 connected→disconnected", with the
    /// mode and identity when it is now connected; `old` nil prints the status alone (initial).
    public static func line(time: String, device: String, old: ConnectionStatus?, _ c: WatchedConnector) -> String {
        var s = "\(time) \(device) \(c.name) " + (old.map { "\($0)→\(c.status)" } ?? "\(c.status) (initial)")
        if c.status == .connected {
            s += "  mode \(c.mode.map { $0 + " Hz" } ?? "none")"
            if let m = c.monitor ?? c.manufacturer { s += "  monitor \"\(m)\"" }
            if let sn = c.serial { s += " serial \(sn)" }
            if c.monitor == nil && c.manufacturer == nil { s += "  no EDID" }
        }
        return s
    }

    /// One JSON line: the time, the monotonic time of the change, the device, the connector,
    /// the old and new status, and the mode and identity (null when not known).
    public static func json(
        time: String, monotonicNs: Int64, device: String, old: ConnectionStatus?, _ c: WatchedConnector
    ) -> String {
        JSON.object([
            ("time", .string(time)), ("monotonicNs", .int(Int(monotonicNs))), ("device", .string(device)),
            ("connector", .string(c.name)), ("connectorId", .int(Int(c.id))),
            ("old", .optional(old?.description)), ("new", .string(c.status.description)),
            ("mode", .optional(c.mode)), ("monitor", .optional(c.monitor)), ("manufacturer", .optional(c.manufacturer)),
            ("serial", .optional(c.serial))
        ]).rendered
    }

    /// The lines of one report of ``watch(_:stopped:report:)``: one per change, text or JSON,
    /// all stamped with `time` (default: the wall-clock time now); none when nothing changed.
    public static func lines(_ changes: Changes, device: String, json: Bool, time: String? = nil) -> [String] {
        guard !changes.changes.isEmpty else { return [] }
        let time = time ?? now()
        return changes.changes.map { old, c in
            json
                ? Self.json(time: time, monotonicNs: changes.monotonicNs, device: device, old: old, c)
                : line(time: time, device: device, old: old, c)
        }
    }

    /// The wall-clock time as ISO 8601 UTC with milliseconds.
    public static func now() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1,
            Int(tmv.tm_mday), Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ts.tv_nsec / 1_000_000))
    }
}
