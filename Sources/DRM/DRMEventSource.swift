/// Something DRM events are read from until a deadline: a ``DRMDevice`` (every CRTC's) or a
/// ``KMSOutput`` (its CRTC's flip events clear its ``KMSOutput/flipPending``). The reading is
/// each one's own; the allocating form is written once here.
public protocol DRMEventSource: AnyObject {
    /// Waits until events arrive or `deadline` (CLOCK_MONOTONIC ns) passes, and appends them to
    /// `events` (no allocation when it has capacity). True when a signal interrupted the wait.
    @discardableResult
    func readEvents(until deadline: Int64, into events: inout [DRMEvent]) throws -> Bool
}

extension DRMEventSource {
    /// The events read until `deadline` (see ``readEvents(until:into:)``); [] on timeout or when
    /// a signal interrupted the wait.
    public func readEvents(until deadline: Int64) throws -> [DRMEvent] {
        var events: [DRMEvent] = []
        try readEvents(until: deadline, into: &events)
        return events
    }
}
