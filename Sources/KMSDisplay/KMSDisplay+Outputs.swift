import CadenceCore
import DRM

/// Several outputs of one device at once: one ``KMSDisplay`` per connector, each on its own CRTC
/// (``CRTCAssignment``), all sharing the device's file descriptor. Each display reads only its
/// own CRTC's events: the device keeps events read for another CRTC aside for it
/// (`DRMDevice.readEvents(for:until:into:)`), and a display's wait returns after every read,
/// so one thread can drive them all (CadenceCore's `PacingGroup`).
extension KMSDisplay {
    /// The connector names `names` stands for on `dev`: `["all"]` is every connected connector
    /// (in the card's order); otherwise the names as given. Throws one line for a name given
    /// twice, `all` mixed with names, or no connected connector.
    public static func connectorNames(_ names: [String], on dev: DRMDevice) throws -> [String] {
        var seen = Set<String>()
        for n in names where !seen.insert(n).inserted {
            throw OutputSelectionError("connector \(n) is given twice: each output is driven once")
        }
        guard names.contains("all") else { return names }
        guard names == ["all"] else { throw OutputSelectionError("connector 'all' cannot be combined with connector names") }
        let conns: [Connector]
        do { conns = try dev.connectors() } catch let e as DRMError { throw OutputSelection.failure(e, path: dev.path) }
        let connected = conns.filter { $0.status == .connected }.map(\.name)
        guard !connected.isEmpty else {
            throw OutputSelectionError("no connected connector on \(dev.path) (connectors: \(conns.map { "\($0.name) \($0.status)" }.joined(separator: ", ")))")
        }
        return connected
    }

    /// Opens one display per connector in `connectors` (names, or `["all"]`: every connected
    /// one) on `dev`, each at its preferred mode (or `mode`, "WxH[@HZ]", for all of them, or
    /// `modes[name]` for the output `name`), on CRTCs chosen without conflicts. Throws
    /// ``OutputSelectionError`` with one line (an unknown or disconnected connector, a name
    /// twice, a `modes` key that is not one of the outputs, connectors that cannot have a CRTC
    /// each); the displays opened so far are closed again.
    ///
    /// With more than one output the device routes events per CRTC, which needs flip events
    /// that name their CRTC (`CRTC_IN_VBLANK_EVENT`, Linux 4.12 and later).
    public static func openOutputs(on dev: DRMDevice, connectors names: [String], mode: String? = nil,
                                   modes: [String: String] = [:],
                                   allocator: BufferAllocator = .dumb, api: ModesetAPI = .auto,
                                   vrr: VRRPolicy = .off, rate: FrameRateRange = .default) throws -> [KMSDisplay] {
        try open(OutputPlan.Card(device: dev, connectors: names, mode: mode, modes: modes),
                 allocator: allocator, api: api, vrr: vrr, rate: rate)
    }

    /// Lights the outputs of one planned card, one display each; the displays opened so far
    /// are closed again on failure.
    static func open(_ card: OutputPlan.Card, allocator: BufferAllocator, api: ModesetAPI,
                     vrr: VRRPolicy, rate: FrameRateRange) throws -> [KMSDisplay] {
        let dev = card.device
        var displays: [KMSDisplay] = []
        do {
            for (s, crtc) in zip(card.selections, card.crtcs) {
                displays.append(try KMSDisplay(device: dev, selection: s, allocator: allocator, api: api, vrr: vrr, rate: rate, crtc: crtc))
            }
        } catch {
            for d in displays.reversed() { try? d.close() }
            if let e = error as? DRMError { throw OutputSelection.failure(e, path: dev.path) }
            throw error
        }
        return displays
    }
}
