import CadenceCore

/// What an ``ObserveSession`` accounted: the CRTCs traced, each client's flips as a
/// `RunSummary`, and what the trace cost (`cadence observe --json` prints this structure).
public struct ObserveResult: Codable, Sendable {
    /// One traced CRTC.
    public struct CRTC: Codable, Sendable {
        /// The CRTC's index on the card.
        public var crtc: Int
        /// The connector driving it ("crtc-N" when the card could not be read).
        public var connector: String
        /// The vblanks traced.
        public var vblanks: Int
        /// 1e9 / slope of the least-squares fit of vblank timestamp against sequence.
        public var refreshHz: Double
        /// The refresh of the CRTC's mode, when the card could be read.
        public var modeRefreshHz: Double?
        /// The content check of every client's flips on the CRTC against its CRC (`observe
        /// --verify crc`): flips that changed nothing (`stale`), content changes without a flip,
        /// and the longest frozen stretch; nil without CRC.
        public var scanout: ScanoutSummary?
    }

    /// One client's flips on one CRTC.
    public struct Client: Codable, Sendable {
        /// The CRTC's index on the card.
        public var crtc: Int
        /// The connector driving the CRTC.
        public var connector: String
        /// The flipping process' command ("(kernel)" for commits no client asked an event for).
        public var client: String
        /// The process id, when known.
        public var pid: Int?
        /// The drm_file, as the kernel's pointer in hex (identifies the client within a boot).
        public var file: String
        /// Where `client` and `pid` come from: "debugfs" (the DRM debugfs `clients` file, matched
        /// by pid) or "trace" (the traced task's comm and pid).
        public var nameSource: String
        /// Whether the client's file is DRM master (debugfs only).
        public var master: Bool?
        /// The interval judged normal, in refreshes.
        public var expectedRefreshes: Int
        /// The most refreshes one drop event dropped.
        public var largestDropEvent: Int
        /// The client's flips accounted as a run's frames.
        public var summary: RunSummary

        /// The key of a client's frames in ``ObserveSession/reports`` by ``key``.
        public static func key(crtc: Int, file: String) -> String { "\(crtc)/\(file)" }
        /// "CRTC/FILE": this client's key (``key(crtc:file:)``).
        public var key: String { Self.key(crtc: crtc, file: file) }
    }

    /// How long the trace was read, in seconds.
    public var durationSeconds = 0.0
    /// The CRTCs with vblanks traced, by index.
    public var crtcs: [CRTC] = []
    /// The clients in the order of their first flip.
    public var clients: [Client] = []
    /// Trace lines read.
    public var traceLines = 0
    /// Events the kernel lost (reported only when flips could not be matched).
    public var lostEvents = 0
    /// Flips without their vblank event.
    public var inexactFlips = 0
    /// Deliveries that answered vblank or CRTC-sequence requests (not flips).
    public var requestDeliveries = 0
    /// Deliveries told apart by the event's own type (send probe); the rest were inferred.
    public var typedDeliveries = 0
    /// The send probe disagreed with the deliveries (and was ignored).
    public var sendProbeMismatch = false
    /// CPU time of the whole process (start-up included).
    public var cpuSeconds = 0.0
    /// CPU time spent in the observing loop (reading, parsing, accounting, outputs).
    public var cpuObservingSeconds: Double?
    /// ``cpuObservingSeconds`` per traced vblank, µs.
    public var cpuPerVBlankUs: Double?
    /// The outputs that stopped being written, one line each.
    public var incompleteOutputs: [String] = []

    /// Nothing accounted yet.
    public init() {}

    /// True when no client presented a flip.
    public var noFlips: Bool { clients.allSatisfy { $0.summary.presented == 0 } }

    /// The client a verdict or a picture is about: the one named `command` (its `client`
    /// name; among several, the one with the most flips), else the client with the most flips
    /// that is a process (not the kernel's own event-less commits). Nil when none flipped.
    public func pick(command: String?) -> Client? {
        let candidates = clients.filter { c in
            c.summary.presented > 0 && (command.map { c.client == $0 } ?? (c.file != "0"))
        }
        return candidates.max { $0.summary.presented < $1.summary.presented }
    }
}

extension ObserveResult {
    /// The CRTCs whose content check saw flips that changed nothing (stale flips): what an
    /// observation that expects motion fails on.
    public var frozenCRTCs: [CRTC] { crtcs.filter { ($0.scanout?.stale ?? 0) > 0 } }
}
