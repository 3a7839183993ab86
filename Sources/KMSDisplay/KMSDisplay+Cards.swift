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
        let plan = try OutputPlan(connectors: names, device: device, source: source, mode: mode, modes: modes)
        var opened: [[KMSDisplay]] = []
        do {
            for card in plan.cards { opened.append(try open(card, allocator: allocator, api: api, vrr: vrr, rate: rate)) }
        } catch {
            for d in opened.joined().reversed() { try? d.close() }
            throw error
        }
        return plan.order.map { opened[$0.card][$0.output] }
    }
}
