#if canImport(Glibc)
import Glibc
#endif
import CadenceSession
import DRM
import EDID
import KMSDisplay

/// `list --watch`'s lines for one connector (`WatchedConnector`).
extension WatchedConnector {
    /// One text line: "2026-11-23T22:40:01.123Z card0 Virtual-1 connected→disconnected", with the
    /// mode and identity when it is now connected; `old` nil prints the status alone (initial).
    static func line(time: String, device: String, old: ConnectionStatus?, _ c: WatchedConnector) -> String {
        var s = "\(time) \(device) \(c.name) " + (old.map { "\($0)→\(c.status)" } ?? "\(c.status) (initial)")
        if c.status == .connected {
            s += "  mode \(c.mode.map { $0 + " Hz" } ?? "none")"
            if let m = c.monitor ?? c.manufacturer { s += "  monitor \"\(m)\"" }
            if let sn = c.serial { s += " serial \(sn)" }
            if c.monitor == nil && c.manufacturer == nil { s += "  no EDID" }
        }
        return s
    }

    /// One JSON line (`list --watch --json`).
    static func json(time: String, monotonicNs: Int64, device: String, old: ConnectionStatus?, _ c: WatchedConnector) -> String {
        func opt(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
        return JSON.object([
            ("time", .string(time)), ("monotonicNs", .int(Int(monotonicNs))), ("device", .string(device)),
            ("connector", .string(c.name)), ("connectorId", .int(Int(c.id))),
            ("old", opt(old?.description)), ("new", .string(c.status.description)),
            ("mode", opt(c.mode)), ("monitor", opt(c.monitor)), ("manufacturer", opt(c.manufacturer)), ("serial", opt(c.serial)),
        ]).rendered
    }

    /// The wall-clock time as ISO 8601 UTC with milliseconds.
    static func now() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday),
                      Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ts.tv_nsec / 1_000_000))
    }
}

extension ListCommand {
    /// `list --watch`: the connectors' statuses once, then a line per status change as the
    /// card's uevents come, until SIGINT/SIGTERM (exit 0).
    func watch(path: String, source: DeviceSource) throws {
        let dev = try openDevice(path, source: source)
        let stop = SignalStop()
        defer { stop.remove() }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do {
            try WatchedConnector.watch(
                dev, stopped: { stop.isRequested },
                report: { emit($0.changes, device: name, now: $0.monotonicNs) })
        } catch WatchedConnector.WatchFailure.unwatchable(let e) {
            throw CLIFailure("\(path): cannot watch hotplug events: \(e)")
        } catch WatchedConnector.WatchFailure.unreadable(let e) {
            throw CLIFailure(OutputSelection.explain(e, path: dev.path))
        }
    }

    private func emit(_ changes: [(old: ConnectionStatus?, now: WatchedConnector)], device: String, now: Int64) {
        guard !changes.isEmpty else { return }
        let time = WatchedConnector.now()
        for (old, c) in changes {
            print(json ? WatchedConnector.json(time: time, monotonicNs: now, device: device, old: old, c)
                       : WatchedConnector.line(time: time, device: device, old: old, c))
        }
        _ = StandardStreams.flushStandardOutput()
    }
}
