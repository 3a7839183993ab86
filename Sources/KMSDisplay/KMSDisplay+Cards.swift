import CadenceCore
import DRM

/// Outputs on several cards: the cards are opened once each, and each card's outputs share its
/// descriptor as in ``openOutputs(on:connectors:mode:modes:allocator:api:vrr:rate:)``. Cards share
/// nothing, so a caller can drive each card's outputs on its own thread.
extension KMSDisplay {
    /// The output's name on its card, `card1-HDMI-A-1`.
    public var address: OutputAddress { OutputAddress(card: device.path, connector: output.connector.name) }

    /// What to call each of `displays` to a user: the connector's name, or `cardN-NAME` for
    /// every one when they are on more than one card.
    public static func outputNames(_ displays: [KMSDisplay]) -> [String] {
        let cards = Set(displays.map { ObjectIdentifier($0.device) })
        return displays.map { cards.count > 1 ? $0.address.description : $0.output.connector.name }
    }

    /// Opens one display per connector named in `names`, on whichever cards they are:
    /// `cardN-NAME` is NAME on /dev/dri/cardN; a bare NAME is on `device` (or the first card).
    /// `["all"]` is every connected connector of `device`, or, with no `device`, of every card
    /// (cards with no connected connector, or no modesetting at all, are skipped). `mode` applies
    /// to every output; `modes` keys name one output each (`cardN-NAME`, or a bare NAME when only
    /// one output has it). Returns the displays in the order named (for `all`: card by card).
    /// Throws one line (``OutputSelectionError``) for a name given twice, a qualified name on
    /// another card than `device`, a `modes` key that is no output or is ambiguous, and whatever
    /// ``openOutputs(on:connectors:mode:modes:allocator:api:vrr:rate:)`` refuses; the displays
    /// opened so far are closed again.
    public static func openOutputs(connectors names: [String], device: String? = nil, source: DeviceSource = .live,
                                   mode: String? = nil, modes: [String: String] = [:],
                                   allocator: BufferAllocator = .dumb, api: ModesetAPI = .auto,
                                   vrr: VRRPolicy = .off, rate: FrameRateRange = .default) throws -> [KMSDisplay] {
        let (cards, order) = try plan(names, device: device, source: source)
        let perCard = try assignModes(modes, to: cards)
        var opened: [KMSDisplay] = []
        do {
            for (i, card) in cards.enumerated() {
                opened += try openOutputs(on: card.device, connectors: card.connectors, mode: mode, modes: perCard[i],
                                          allocator: allocator, api: api, vrr: vrr, rate: rate)
            }
        } catch {
            for d in opened.reversed() { try? d.close() }
            throw error
        }
        guard let order else { return opened }
        // Back to the order named.
        return order.map { a in opened.first { $0.device.path == a.path && $0.output.connector.name == a.connector }! }
    }

    /// One card of a several-card run: its device and the connectors to drive on it (or `["all"]`).
    private struct CardPlan {
        var device: DRMDevice
        var connectors: [String]
    }

    /// The cards to open, each with its connectors, and the outputs in the order named (nil for
    /// `all`: card by card).
    private static func plan(_ names: [String], device: String?,
                             source: DeviceSource) throws -> ([CardPlan], [(path: String, connector: String)]?) {
        if names == ["all"] && device == nil {
            let paths = source.discover()
            guard !paths.isEmpty else { throw OutputSelectionError(OutputSelection.noDeviceMessage, kind: .noDevice) }
            var plans: [CardPlan] = []
            var seen: [String] = []
            for p in paths {
                let dev = try OutputSelection.open(p, source: source)
                guard let conns = try? dev.connectors() else { seen.append("\(p): no modesetting"); continue }
                let connected = conns.filter { $0.status == .connected }.map(\.name)
                if !connected.isEmpty {
                    plans.append(CardPlan(device: dev, connectors: connected))
                } else {
                    seen.append("\(p): " + (conns.isEmpty ? "no connectors" : conns.map { "\($0.name) \($0.status)" }.joined(separator: ", ")))
                }
            }
            guard !plans.isEmpty else { throw OutputSelectionError("no connected connector on any card (\(seen.joined(separator: "; ")))") }
            return (plans, nil)
        }
        guard !names.contains("all") || names == ["all"] else {
            throw OutputSelectionError("connector 'all' cannot be combined with connector names")
        }
        let fallback = try OutputSelection.devicePath(device, discovered: source.discover())
        var paths: [String] = []
        var order: [(path: String, connector: String)] = []
        var byPath: [String: [String]] = [:]
        for n in names {
            let a = OutputAddress(n)
            if let p = a.devicePath, let device, p != device {
                throw OutputSelectionError("connector \(n) is on \(p), not on the device given (\(device))")
            }
            let path = a.devicePath ?? fallback
            if byPath[path] == nil { paths.append(path); byPath[path] = [] }
            if byPath[path]!.contains(a.connector) {
                throw OutputSelectionError("connector \(a.card == nil ? a.connector : n) is given twice: each output is driven once")
            }
            byPath[path]!.append(a.connector)
            order.append((path, a.connector))
        }
        var plans: [CardPlan] = []
        for p in paths { plans.append(CardPlan(device: try OutputSelection.open(p, source: source), connectors: byPath[p]!)) }
        return (plans, names == ["all"] ? nil : order)
    }

    /// `modes` split per card, keyed by connector name.
    private static func assignModes(_ modes: [String: String], to cards: [CardPlan]) throws -> [[String: String]] {
        var perCard = Array(repeating: [String: String](), count: cards.count)
        for key in modes.keys.sorted() {
            let a = OutputAddress(key)
            let onCard = cards.indices.filter { a.card == nil || a.card == OutputAddress.cardName(ofNode: cards[$0].device.path) }
            // One card driving `all`: its own check names a key that is not one of its outputs.
            if cards.count == 1, cards[0].connectors == ["all"], onCard == [0] {
                perCard[0][a.connector] = modes[key]
                continue
            }
            let matches = onCard.filter { cards[$0].connectors.contains(a.connector) }
            let outputs = cards.flatMap { c in
                c.connectors.map { cards.count > 1 ? OutputAddress(card: c.device.path, connector: $0).description : $0 }
            }
            guard !matches.isEmpty else {
                throw OutputSelectionError("a mode is given for \(key), which is not one of the outputs (\(outputs.joined(separator: ", ")))")
            }
            guard matches.count == 1 else {
                throw OutputSelectionError("a mode is given for \(key), which names an output on several cards: give cardN-\(a.connector)")
            }
            guard perCard[matches[0]][a.connector] == nil else {
                throw OutputSelectionError("a mode is given twice for \(OutputAddress(card: cards[matches[0]].device.path, connector: a.connector))")
            }
            perCard[matches[0]][a.connector] = modes[key]
        }
        return perCard
    }
}
