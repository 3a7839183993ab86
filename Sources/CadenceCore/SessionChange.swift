/// A seat session paused or resumed during a run (a VT switch away and back): the log's
/// `{"record":"session",…}` line. Between a pause and its resume nothing is shown and no
/// refresh is counted as dropped; the summary reports the gaps (count and total time).
public struct SessionChange: Codable, Equatable, Sendable {
    /// "paused" or "resumed".
    public enum Event: String, Codable, Sendable { case paused, resumed }

    /// Always "session".
    public var record: String = "session"
    public var version: Int = 1
    public var event: Event
    /// When it happened (display clock, ns).
    public var timeNs: Int64
    /// On a resume: how long the session was away (ns); absent on a pause.
    public var gapNs: Int64?

    public init(event: Event, timeNs: Int64, gapNs: Int64? = nil) {
        self.event = event
        self.timeNs = timeNs
        self.gapNs = gapNs
    }
}
