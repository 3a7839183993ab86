import DRM
import EDID

/// One connector as a hotplug watch (`cadence list --watch`) compares it: its status and, when
/// connected, the mode it prefers and the panel's identity from its EDID.
public struct WatchedConnector: Equatable, Sendable {
    /// The connector's name ("DP-1").
    public var name: String
    /// The connector's object id.
    public var id: UInt32
    /// Connected, disconnected or unknown.
    public var status: ConnectionStatus
    /// The preferred mode ("1024x768@60.0038"), nil when disconnected or without modes.
    public var mode: String?
    /// The EDID's monitor name, nil without a decodable EDID.
    public var monitor: String?
    /// The EDID's manufacturer and product code ("ABC 0x1234"), nil without a decodable EDID.
    public var manufacturer: String?
    /// The EDID's serial string, else its serial number; nil without a decodable EDID.
    public var serial: String?

    /// A connector as read (the identity fields nil).
    public init(name: String, id: UInt32, status: ConnectionStatus, mode: String? = nil) {
        self.name = name
        self.id = id
        self.status = status
        self.mode = mode
    }

    /// Reads every connector of `dev` (a connector that cannot be read is left out); throws
    /// the `DRMError` of reading the card's resources.
    public static func read(_ dev: DRMDevice) throws -> [WatchedConnector] {
        let res = try dev.resources()
        return res.connectors.compactMap { id in
            guard let c = try? dev.connector(id) else { return nil }
            var w = WatchedConnector(name: c.name, id: id.rawValue, status: c.status)
            guard c.status == .connected else { return w }
            w.mode = c.preferredMode?.description
            if let bytes = try? dev.edid(of: id), !bytes.isEmpty, let e = try? EDID(bytes) {
                w.monitor = e.name
                w.manufacturer = "\(e.manufacturer) 0x" + String(e.productCode, radix: 16)
                w.serial = e.serialString ?? e.serialNumber.map { String($0) }
            }
            return w
        }
    }

    /// The connectors whose status changed from `old` to `new` (a new connector counts as a
    /// change from nil; one that vanished as a change to disconnected), in `new`'s order.
    public static func changes(
        from old: [WatchedConnector], to new: [WatchedConnector]
    ) -> [(old: ConnectionStatus?, now: WatchedConnector)] {
        var out: [(ConnectionStatus?, WatchedConnector)] = []
        for c in new {
            let before = old.first { $0.id == c.id }
            if before?.status != c.status { out.append((before?.status, c)) }
        }
        for c in old where c.status != .disconnected && !new.contains(where: { $0.id == c.id }) {
            var gone = c
            gone.status = .disconnected
            gone.mode = nil
            gone.monitor = nil
            gone.manufacturer = nil
            gone.serial = nil
            out.append((c.status, gone))
        }
        return out
    }
}
