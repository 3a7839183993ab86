/// What a run of display links produced: the summary (what the CLI prints as JSON) and
/// the running totals behind it (outcomes, drops, causes, hitch, interval histograms).
public struct PacingResult {
    /// Frames, drops, causes, hitch time ratio, interval statistics, end reason.
    public var summary: RunSummary
    /// The totals the summary was built from, with the interval histograms.
    public var accounting: FrameAccounting
}

/// Why a run ended. A summary carries it as ``RunSummary/end``; its JSON (`endReason`) is
/// ``reason``, and ``init(reason:)`` is the one place that text is read back.
public enum RunEnd: Equatable, Sendable {
    /// The time was up, the frame count reached, or every link was invalidated.
    case completed
    /// Stopped early: `shouldStop` returned true (the CLI: SIGINT, SIGTERM or SIGHUP).
    case stopped
    /// The display went away (the device was lost): why.
    case deviceLost(String)
    /// The output was unplugged (its connector reported disconnected): why.
    case disconnected(String)
    /// A log file that ends with a rotation record: the run went on in the next file.
    case rotated
    /// A log file that ends without an end record (the run was killed, or is still running).
    case unfinished
    /// An end this version does not know (a log written by another version), kept as written.
    case other(String)

    /// "completed", "stopped", "device-lost: why" or "disconnected: why" (``RunSummary/endReason``);
    /// a log's analysis: "rotated (continued in the next file)" or "unfinished (no end record)".
    public var reason: String {
        switch self {
        case .completed: return "completed"
        case .stopped: return "stopped"
        case .deviceLost(let why): return "device-lost: \(why)"
        case .disconnected(let why): return "disconnected: \(why)"
        case .rotated: return "rotated (continued in the next file)"
        case .unfinished: return "unfinished (no end record)"
        case .other(let text): return text
        }
    }

    /// Reads ``reason`` back: `RunEnd(reason: e.reason) == e` for every end (text it does not
    /// know is ``other(_:)``).
    public init(reason: String) {
        switch reason {
        case "completed": self = .completed
        case "stopped": self = .stopped
        case RunEnd.rotated.reason: self = .rotated
        case RunEnd.unfinished.reason: self = .unfinished
        default:
            guard let colon = reason.firstIndex(of: ":") else { self = .other(reason); return }
            let after = reason[reason.index(after: colon)...]
            guard after.first == " " else { self = .other(reason); return }
            let why = String(after.dropFirst())
            switch reason[..<colon] {
            case "device-lost": self = .deviceLost(why)
            case "disconnected": self = .disconnected(why)
            default: self = .other(reason)
            }
        }
    }

    /// True when the display failed under the run: the device was lost or the output unplugged
    /// (`cadence run` exits 1).
    public var isDisplayFailure: Bool {
        switch self {
        case .deviceLost, .disconnected: return true
        case .completed, .stopped, .rotated, .unfinished, .other: return false
        }
    }
}

extension RunEnd: Codable {
    /// Decodes ``reason`` (a JSON string).
    public init(from decoder: any Decoder) throws {
        self.init(reason: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes ``reason`` (a JSON string).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(reason)
    }
}

extension FramePacer {
    /// Runs the pacer's links until `deadline`, until `shouldStop` returns true (asked at least
    /// once a refresh), until every link is invalidated, or until the device is lost; then lets
    /// the frames already presented complete (for at most a second) and returns what happened.
    /// A link callback that throws ends the run, and the error is rethrown here.
    ///
    /// `onFrame` sees every completed frame (log writers hook here).
    public func run(until deadline: DisplayInstant, shouldStop: () -> Bool = { false },
                    onFrame: ((FrameReport) -> Void)? = nil) throws -> PacingResult {
        var accounting = FrameAccounting(expectedFrames: expectedFrames(until: deadline.nanoseconds))
        let previous = onFrameCompleted
        onFrameCompleted = { r in
            accounting.add(r)
            previous?(r)
            onFrame?(r)
        }
        defer { onFrameCompleted = previous }
        for link in links { link.needsReanchor = true }
        let tick = Nanoseconds(refreshInterval.rounded())
        var end = RunEnd.completed
        let first = links.first { $0.isValid }
        while deviceLost == nil, links.contains(where: { $0.isValid }), !links.contains(where: { $0.callbackError != nil }) {
            if shouldStop() { end = .stopped; break }
            let now = backend.now()
            if now >= deadline.nanoseconds { break }
            try runOnce(until: Swift.min(deadline.nanoseconds, now &+ 4 &* tick))
        }
        try drain(until: backend.now() &+ 1_000_000_000)
        if let failed = links.first(where: { $0.callbackError != nil }), let error = failed.callbackError {
            for link in links { link.callbackError = nil }
            throw error
        }
        if let why = outputDisconnected { end = .disconnected(why) } else if let why = deviceLost { end = .deviceLost(why) }
        let link = first
        let summary = RunSummary(accounting: accounting, backend: backend.name, refreshHz: 1e9 / refreshInterval,
                                 vrr: vrrRange, effectiveRateHz: link?.effectiveRate.hz ?? 1e9 / refreshInterval,
                                 latency: link?.plannedLatency ?? 1, end: end)
        return PacingResult(summary: summary, accounting: accounting)
    }

    private func expectedFrames(until deadline: Nanoseconds) -> Int {
        let span = Double(Swift.max(0, deadline &- backend.now()))
        return Swift.min(1 << 20, Int(span / refreshInterval) + 16)
    }
}

extension DisplayLink {
    /// Runs the link on its display for `duration` (see ``FramePacer/run(until:shouldStop:onFrame:)``):
    /// callbacks on this thread, presented handlers too. Returns the run's summary and totals;
    /// rethrows the first error the callback threw.
    public func run(for duration: Duration, shouldStop: () -> Bool = { false }) throws -> PacingResult {
        let p = try attachedPacer()
        // The pacer holds the link only while it runs (the link keeps its pacer for the next run).
        p.add(self)
        defer { p.remove(self) }
        return try p.run(until: DisplayInstant(nanoseconds: p.now()).advanced(by: duration), shouldStop: shouldStop)
    }

    /// The pacer this link runs on: created for the link's display on first use.
    func attachedPacer() throws -> FramePacer {
        if let p = pacer { return p }
        guard let display else {
            preconditionFailure("run a link made without a display through FramePacer.run(until:)")
        }
        let p = try FramePacer(backend: display)
        pacer = p
        return p
    }
}
