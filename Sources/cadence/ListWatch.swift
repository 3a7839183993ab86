import CadenceSession
import DRM
import KMSDisplay

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
                report: { changes in
                    for line in WatchedConnector.lines(changes, device: name, json: json) { print(line) }
                    _ = StandardStreams.flushStandardOutput()
                })
        } catch WatchedConnector.WatchFailure.unwatchable(let e) {
            throw CLIFailure("\(path): cannot watch hotplug events: \(e)")
        } catch WatchedConnector.WatchFailure.unreadable(let e) {
            throw CLIFailure(OutputSelection.explain(e, path: dev.path))
        }
    }
}
