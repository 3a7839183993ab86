import DRM
import KMSDisplay

/// Listing cards (what `cadence list` does): which nodes, reading each read-only, skipping one
/// that cannot be read when there are several, and the faster modes worth a warning.
extension DeviceInventory {
    /// Why a listing (or a hotplug watch) cannot go on.
    public enum Refusal: Error, Equatable, Sendable {
        /// No node was named and the machine has no DRM card.
        case noDevice
        /// None of the `nodes` nodes (more than one) could be opened and read.
        case noneListable(nodes: Int)
        /// A hotplug watch was asked of fake DRM devices, which never change.
        case watchNeedsRealCard
    }

    /// The nodes to list: `device` alone when given, else the nodes of the fake DRM `profiles`
    /// when there are any, else every card `discovered` finds (``Refusal/noDevice`` when none).
    public static func nodes(
        device: String?, profiles: [FakeDRMProfileFile], discovered: () -> [String] = { DRMDevice.discover() }
    ) throws -> [String] {
        if !profiles.isEmpty { return device.map { [$0] } ?? profiles.map(\.node) }
        if let device { return [device] }
        let paths = discovered()
        if paths.isEmpty { throw Refusal.noDevice }
        return paths
    }

    /// The node to watch for hotplug: `device`, else the first card `discovered` finds. Fake DRM
    /// `profiles` are refused (``Refusal/watchNeedsRealCard``), as is a machine without a card
    /// (``Refusal/noDevice``).
    public static func watchedNode(
        device: String?, profiles: [FakeDRMProfileFile], discovered: () -> [String] = { DRMDevice.discover() }
    ) throws -> String {
        if !profiles.isEmpty { throw Refusal.watchNeedsRealCard }
        guard let path = device ?? discovered().first else { throw Refusal.noDevice }
        return path
    }

    /// Opens `path` read-only through `source` and reads it; a failure to open it or to read its
    /// version or resources is one `OutputSelectionError` that names it. The `DRMError` of a
    /// connector, encoder or CRTC that cannot be read passes through.
    public static func read(_ path: String, source: DeviceSource = .live) throws -> DeviceInventory {
        let dev = try OutputSelection.open(path, source: source, readOnly: true)
        do {
            return try DeviceInventory(dev)
        } catch let u as Unreadable {
            throw OutputSelectionError(OutputSelection.explain(u.error, path: dev.path))
        }
    }

    /// What listing several nodes gave: how many were tried and the ones skipped.
    public struct Listing {
        /// The nodes tried.
        public var nodes: Int
        /// Each node that could not be opened or read, with why.
        public var skipped: [(path: String, error: OutputSelectionError)]

        /// ``Refusal/noneListable(nodes:)`` when every node was skipped, else nil.
        public var refusal: Refusal? { skipped.count == nodes ? .noneListable(nodes: nodes) : nil }
    }

    /// Reads each of `paths` in order (``read(_:source:)``), calling `each` with its inventory
    /// or, when there are several nodes, the failure that skips it (one bad node, a render-only
    /// GPU say, must not hide the others). With a single node its failure is thrown.
    public static func list(
        _ paths: [String], source: DeviceSource = .live,
        each: (String, Result<DeviceInventory, OutputSelectionError>) -> Void
    ) throws -> Listing {
        var listing = Listing(nodes: paths.count, skipped: [])
        for path in paths {
            do {
                each(path, .success(try read(path, source: source)))
            } catch let e as OutputSelectionError {
                if paths.count == 1 { throw e }
                each(path, .failure(e))
                listing.skipped.append((path, e))
            }
        }
        return listing
    }

    /// A connected connector that offers a faster mode at the size it is used at.
    public struct FasterMode {
        /// How the connector uses ``mode``.
        public enum Use: Equatable, Sendable {
            /// A CRTC drives it at that mode.
            case driven
            /// Nothing drives it, and that is its preferred mode.
            case preferred
        }

        /// The connector.
        public var connector: Connector
        /// The mode it is driven at, or prefers.
        public var mode: ModeInfo
        /// Which of the two ``mode`` is.
        public var use: Use
        /// The faster mode at the same size (see `OutputSelection.fasterMode(than:in:)`).
        public var faster: ModeInfo
    }

    /// Each connected connector that offers a faster mode at the size it is driven at (its
    /// CRTC's mode), or, when nothing drives it, at its preferred size.
    public var fasterModes: [FasterMode] {
        connectors.compactMap { c, _, _ in
            guard c.status == .connected else { return nil }
            let (mode, use): (ModeInfo?, FasterMode.Use) =
                drivenMode(of: c).map { ($0, .driven) } ?? (c.preferredMode, .preferred)
            guard let mode, let f = OutputSelection.fasterMode(than: mode, in: c.modes) else { return nil }
            return FasterMode(connector: c, mode: mode, use: use, faster: f)
        }
    }
}
