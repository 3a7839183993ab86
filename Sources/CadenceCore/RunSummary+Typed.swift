/// The typed view of a summary's text-keyed fields: its JSON keeps `endReason`, `causes` and
/// `intervalRefreshes` as they are written (strings and string-keyed counts), and the code that
/// judges or prints a run reads them here, never by taking the strings apart itself.
extension RunSummary {
    /// ``end``'s text: "completed", "stopped", "device-lost: why" or "disconnected: why".
    public var endReason: String { end.reason }

    /// Frames per drop cause (``causes`` typed; a name this version does not know is left out).
    public var causeCounts: [DropCause: Int] {
        var out: [DropCause: Int] = [:]
        for (name, n) in causes { if let c = DropCause(rawValue: name) { out[c] = n } }
        return out
    }

    /// The causes that occurred with their frames, in the order of their names (the JSON's
    /// order, and the order the CLI prints them in).
    public var causesByName: [(cause: DropCause, frames: Int)] {
        let counts = causeCounts
        return DropCause.byName.compactMap { c in counts[c].map { (c, $0) } }
    }

    /// ``intervalRefreshes`` typed, shortest first: intervals of each length in refreshes.
    public var intervalRefreshCounts: [IntervalRefreshCount] {
        intervalRefreshes.compactMap { IntervalRefreshCount(key: $0.key, intervals: $0.value) }
            .sorted { $0.refreshes < $1.refreshes }
    }
}

/// How many intervals between shown frames lasted a given number of refreshes (one entry of
/// ``RunSummary/intervalRefreshes``).
public struct IntervalRefreshCount: Equatable, Sendable {
    /// The interval's length in refreshes.
    public var refreshes: Int
    /// True for the last bucket: this many refreshes or more (JSON key "32+").
    public var orMore: Bool
    /// How many intervals.
    public var intervals: Int

    /// The JSON key: "2", or "32+" for the last bucket.
    public var key: String { orMore ? "\(refreshes)+" : "\(refreshes)" }

    /// Reads a JSON key ("2", "32+"); nil for text that is neither.
    init?(key: String, intervals: Int) {
        let orMore = key.last == "+"
        guard let k = Int(orMore ? String(key.dropLast()) : key), k >= 0 else { return nil }
        refreshes = k
        self.orMore = orMore
        self.intervals = intervals
    }
}

extension DropCause {
    /// Every cause in the order of its name (`busy`, `copy-late`, …): the order of a summary's
    /// sorted JSON keys, in which the CLI prints them.
    public static let byName: [DropCause] = allCases.sorted { $0.rawValue < $1.rawValue }
}
