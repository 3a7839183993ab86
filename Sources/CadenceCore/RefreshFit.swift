/// A CRTC's measured refresh: the least-squares line of kernel vblank timestamp against vblank
/// sequence, whose slope is the period the panel really runs at (drift included), in constant
/// memory.
///
/// This is the one refresh fit: the live run, `measure`, `observe`, `report` and `validate`
/// (over the whole run and per window) all measure the refresh with it, so a log's report and
/// the run it came from give the same number. Which frames feed it is the caller's rule (shown
/// frames with a real vblank sequence); on drivers without a vblank interrupt the sequences are
/// synthetic and callers leave the refresh unknown. The pacer's own prediction grid
/// (`VBlankGrid`) is a different line on purpose: it forgets old vblanks and keeps the nominal
/// period until it has a long enough baseline.
public struct RefreshFit: Equatable, Sendable {
    private var line = RunningLinearFit()

    /// A fit with no vblank yet.
    public init() {}

    /// The fit of `points`, in order.
    public init<S: Sequence>(_ points: S) where S.Element == (sequence: UInt64, timestamp: Nanoseconds) {
        for p in points { add(sequence: p.sequence, timestamp: p.timestamp) }
    }

    /// Adds vblank `sequence`, seen at kernel time `timestamp`.
    public mutating func add(sequence: UInt64, timestamp: Nanoseconds) {
        line.add(x: Double(sequence), y: Double(timestamp))
    }

    /// The number of vblanks added.
    public var count: Int { line.count }

    /// Nanoseconds per refresh; nil with fewer than two distinct sequences, or when the
    /// timestamps do not increase with the sequence.
    public var periodNs: Double? {
        guard let f = line.fit, f.slope > 0 else { return nil }
        return f.slope
    }

    /// The refresh in Hz (1e9 / ``periodNs``); nil when ``periodNs`` is.
    public var hz: Double? { periodNs.map { 1e9 / $0 } }
}
