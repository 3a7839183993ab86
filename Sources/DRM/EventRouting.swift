/// Several outputs on one device: the DRM file descriptor is shared, so an event read while
/// waiting for one CRTC may belong to another. ``DRMDevice/readEvents(for:until:into:)`` keeps
/// such events aside for their own CRTC.
///
/// Which CRTC an event belongs to: flip completions carry it (`crtc_id`, set by kernels with
/// ``DeviceCapability/crtcInVBlankEvent``); vblank and CRTC-sequence events do not, so their
/// requests carry the CRTC's index in bits 56–62 of the user data (``routingTag(crtcIndex:)``)
/// when bit 63 is set.
extension DRMDevice {
    /// Bit 63 of a vblank request's user data: bits 56–62 hold the CRTC index.
    public static let routedVBlankTag: UInt64 = 1 << 63

    /// The user-data bits naming CRTC index `crtcIndex` (0–127) in a vblank or sequence request;
    /// OR them with a value below 2^56.
    public static func routingTag(crtcIndex: Int) -> UInt64 {
        routedVBlankTag | (UInt64(crtcIndex & 0x7f) << 56)
    }

    /// True once ``routeEvents(crtcs:)`` was called: events are read per CRTC.
    public var routesEvents: Bool { !routedCRTCs.isEmpty }

    /// Starts keeping events per CRTC; `crtcs` is the card's CRTC list (index order, as
    /// ``CardResources/crtcs``).
    public func routeEvents(crtcs: [CRTCID]) {
        routedCRTCs = crtcs
    }

    /// The CRTC `event` belongs to: its `crtcID`, else the index in a routed vblank request's
    /// user data; nil when it cannot be told.
    public func owner(of event: DRMEvent) -> CRTCID? {
        if !event.crtcID.isNone { return event.crtcID }
        guard event.kind != .flipComplete, event.userData & Self.routedVBlankTag != 0 else { return nil }
        let index = Int((event.userData >> 56) & 0x7f)
        return index < routedCRTCs.count ? routedCRTCs[index] : nil
    }

    /// Like ``readEvents(until:into:)`` for the output driven by `crtc` on a device shared by
    /// several outputs: events kept aside for `crtc` are returned first, without waiting;
    /// otherwise it waits until `deadline` or any event, appends those of `crtc` (and those whose
    /// CRTC cannot be told) and keeps the others for their CRTC. It returns after the first
    /// read even when every event was another CRTC's, so that a loop driving several outputs can
    /// serve them. Returns true when a signal interrupted the wait.
    @discardableResult
    public func readEvents(for crtc: CRTCID, until deadline: Int64, into events: inout [DRMEvent]) throws -> Bool {
        if let kept = routedEvents[crtc], !kept.isEmpty {
            events.append(contentsOf: kept)
            routedEvents[crtc]!.removeAll(keepingCapacity: true)
            return false
        }
        let start = events.count
        let interrupted = try readEvents(until: deadline, into: &events)
        guard events.count > start else { return interrupted }
        var k = start
        for i in start..<events.count {
            let e = events[i]
            if let o = owner(of: e), o != crtc {
                routedEvents[o, default: []].append(e)
            } else {
                events[k] = e
                k += 1
            }
        }
        events.removeLast(events.count - k)
        return interrupted
    }

    /// True when events are kept aside for `crtc` (the next read for it returns at once).
    public func hasRoutedEvents(for crtc: CRTCID) -> Bool { !(routedEvents[crtc]?.isEmpty ?? true) }

    /// On a device shared by several outputs, each output must see the card's uevents (one
    /// output's wait may take them): the uevents taken since `seen` (a running count the caller
    /// keeps, from ``sharedUeventCount``), oldest first, at most the last 64, and the new count.
    public func hotplugEvents(since seen: Int) throws -> (events: [Uevent], count: Int) {
        if hotplugPending {
            let new = try takeHotplugEvents()
            sharedUevents += new
            sharedUeventCount += new.count
            if sharedUevents.count > 64 { sharedUevents.removeFirst(sharedUevents.count - 64) }
        }
        let missed = Swift.max(0, Swift.min(sharedUeventCount - seen, sharedUevents.count))
        return (Array(sharedUevents.suffix(missed)), sharedUeventCount)
    }
}
