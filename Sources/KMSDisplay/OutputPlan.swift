import DRM

/// The outputs a run will drive, chosen before any is lit: per card its device (opened once),
/// each output's connector and mode (``OutputSelection``) and its CRTC (``CRTCAssignment``);
/// a card with several outputs routes its events per CRTC. ``KMSDisplay/openOutputs(connectors:device:source:mode:modes:allocator:api:vrr:rate:)``
/// lights them as displays; a caller that flips by itself (`cadence measure`) uses the plan's
/// `KMSOutput`s directly.
public struct OutputPlan {
    /// The outputs of one card.
    public struct Card {
        /// The card, opened read-write.
        public let device: DRMDevice
        /// Each output's connector and mode.
        public let selections: [OutputSelection]
        /// Each output's CRTC, in the order of ``selections``.
        public let crtcs: [CRTCID]

        /// The connectors `names` stands for on `device` (`["all"]`: every connected one), each
        /// at `modes[name]`, or `mode`, or its preferred mode, on CRTCs chosen without conflicts.
        /// Throws one line (``OutputSelectionError``): an unknown or disconnected connector, a
        /// name twice, a `modes` key that is not one of the outputs, connectors that cannot have
        /// a CRTC each, several outputs on a driver whose flip events do not name their CRTC.
        public init(device dev: DRMDevice, connectors names: [String], mode: String? = nil, modes: [String: String] = [:]) throws {
            try OutputSelection.check(dev)
            let wanted = try KMSDisplay.connectorNames(names, on: dev)
            if let stray = modes.keys.sorted().first(where: { !wanted.contains($0) }) {
                throw OutputSelectionError("a mode is given for \(stray), which is not one of the outputs (\(wanted.joined(separator: ", ")))")
            }
            var selections: [OutputSelection] = []
            for n in wanted { selections.append(try OutputSelection.select(device: dev, connector: n, mode: modes[n] ?? mode)) }
            let crtcs = try CRTCAssignment.assign(selections.map(\.connector), on: dev)
            if selections.count > 1 {
                guard dev.has(.crtcInVBlankEvent) else {
                    throw OutputSelectionError("\(dev.path): several outputs need flip events that name their CRTC (CRTC_IN_VBLANK_EVENT), which this driver does not offer")
                }
                do { dev.routeEvents(crtcs: try dev.resources().crtcs) } catch let e as DRMError {
                    throw OutputSelection.failure(e, path: dev.path)
                }
            }
            device = dev
            self.selections = selections
            self.crtcs = crtcs
        }
    }

    /// The cards, in the order their first output was named (for `all`: the cards' order).
    public let cards: [Card]
    /// Every output as (card, index in that card's ``Card/selections``), in the order named.
    public let order: [(card: Int, output: Int)]
    /// True when the outputs are on more than one card.
    public var spansCards: Bool { cards.count > 1 }

    /// Plans one output per connector named in `names`, on whichever cards they are:
    /// `cardN-NAME` is NAME on /dev/dri/cardN; a bare NAME is on `device` (or the first card).
    /// `["all"]` is every connected connector of `device`, or, with no `device`, of every card
    /// (cards with no connected connector, or no modesetting at all, are skipped). `mode` applies
    /// to every output; `modes` keys name one output each (`cardN-NAME`, or a bare NAME when only
    /// one output has it). Throws one line (``OutputSelectionError``) for a name given twice, a
    /// card-named connector on another card than `device`, a `modes` key that is no output or is
    /// ambiguous, and whatever ``Card/init(device:connectors:mode:modes:)`` refuses.
    public init(connectors names: [String], device: String? = nil, source: DeviceSource = .live,
                mode: String? = nil, modes: [String: String] = [:]) throws {
        let (planned, named) = try Self.plan(names, device: device, source: source)
        let perCard = try Self.assignModes(modes, to: planned)
        var cards: [Card] = []
        for (i, p) in planned.enumerated() {
            cards.append(try Card(device: p.device, connectors: p.connectors, mode: mode, modes: perCard[i]))
        }
        self.cards = cards
        if let named {
            order = named.map { n in
                let c = cards.firstIndex { $0.device.path == n.path }!
                return (c, cards[c].selections.firstIndex { $0.connector.name == n.connector }!)
            }
        } else {
            order = cards.indices.flatMap { c in cards[c].selections.indices.map { (c, $0) } }
        }
    }

    /// What to call each output, in ``order``: its connector's name, or `cardN-NAME` when the
    /// outputs span cards.
    public var names: [String] {
        order.map { o in
            let c = cards[o.card]
            let name = c.selections[o.output].connector.name
            return spansCards ? OutputAddress(card: c.device.path, connector: name).description : name
        }
    }

    /// One card of a several-card run: its device and the connectors to drive on it (or `["all"]`).
    fileprivate struct CardPlan {
        var device: DRMDevice
        var connectors: [String]
    }

    /// The cards to open, each with its connectors, and the outputs in the order named (nil for
    /// `all`: card by card).
    fileprivate static func plan(_ names: [String], device: String?,
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
    fileprivate static func assignModes(_ modes: [String: String], to cards: [CardPlan]) throws -> [[String: String]] {
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
