/// The vblank grid the pacer predicts from: a least-squares line of kernel timestamp against
/// vblank sequence over the recent vblanks (exponentially forgotten, a window of about
/// ``window`` observations), so that a prediction is
///
/// - drift-aware: the period is the one the timestamps show, not the mode's nominal one (a panel
///   200 ppm slow is 3.3 µs a refresh later than nominal, 16.7 µs at five refreshes: more than
///   ε, enough to put a 24 fps frame due exactly at a vblank on the wrong side of it);
/// - jitter-free: the line goes through the middle of the jittered timestamps, so the vblank a
///   time falls at is the same whichever vblank the pacer last saw. Predicting from the last
///   raw timestamp moved the whole grid by that timestamp's jitter at every vblank, and a content
///   time the callback at one vblank found "not yet" was found "already passed" at the next.
///
/// Until the observations span ``minimumSpan`` refreshes the fit is not used (``isEstablished``):
/// a short baseline under jitter is worse than the last vblank and the nominal period. Coordinates are kept relative to a recent origin (re-centred as they grow), so
/// day-long runs keep nanosecond precision. Fixed storage, no allocation.
struct VBlankGrid: Codable, Equatable, Sendable {
    /// The number of observations the fit effectively remembers (forgetting 1 − 1/window).
    static let window = 1024.0
    /// The span of sequences (in refreshes) the observations must cover before their slope is
    /// used instead of the nominal period.
    static let minimumSpan = 16.0

    private(set) var nominal: Double
    private var seq0: UInt64 = 0
    private var ts0: Nanoseconds = 0
    private var w = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
    private var minX = 0.0, maxX = 0.0

    init(nominal: Double) {
        self.nominal = nominal
    }

    /// True once the observations span ``minimumSpan`` refreshes: before that, a prediction from
    /// the last vblank and the nominal period is closer (a line through the first few with the
    /// nominal slope is off by the drift times their distance from their middle).
    var isEstablished: Bool { w > 0 && maxX - minX >= Self.minimumSpan }

    /// Forgets every observation (a mode change, a session gap: the grid is a new one).
    mutating func reset(nominal: Double) {
        self.nominal = nominal
        w = 0; sx = 0; sy = 0; sxx = 0; sxy = 0; minX = 0; maxX = 0
    }

    /// Adds vblank `sequence` seen at `timestamp`.
    mutating func add(sequence: UInt64, timestamp: Nanoseconds) {
        if w == 0 {
            seq0 = sequence
            ts0 = timestamp
        }
        let x = Double(Int64(bitPattern: sequence &- seq0))
        let y = Double(timestamp &- ts0)
        let keep = 1 - 1 / Self.window
        w = w * keep + 1
        sx = sx * keep + x
        sy = sy * keep + y
        sxx = sxx * keep + x * x
        sxy = sxy * keep + x * y
        minX = Swift.min(minX, x)
        maxX = Swift.max(maxX, x)
        if x > 4 * Self.window { recentre(at: sequence) }
    }

    /// The period the fit uses (ns per refresh).
    var period: Double {
        guard isEstablished else { return nominal }
        let mx = sx / w
        let varx = sxx / w - mx * mx
        guard varx > 0 else { return nominal }
        let slope = (sxy / w - mx * sy / w) / varx
        // A fit far from the mode's period is not a drifting panel: keep the nominal one.
        return abs(slope - nominal) <= nominal * 0.005 ? slope : nominal
    }

    /// The predicted timestamp of vblank `sequence`; nil before any observation.
    func time(of sequence: UInt64) -> Nanoseconds? {
        guard w > 0 else { return nil }
        let x = Double(Int64(bitPattern: sequence &- seq0))
        let y = sy / w + period * (x - sx / w)
        return ts0 &+ clampedNanoseconds(y.rounded())
    }

    /// Moves the origin to `sequence` on the line (the sums translate exactly), keeping the
    /// coordinates small.
    private mutating func recentre(at sequence: UInt64) {
        guard let t = time(of: sequence) else { return }
        let dx = Double(Int64(bitPattern: sequence &- seq0))
        let dy = Double(t &- ts0)
        sxx = sxx - 2 * dx * sx + dx * dx * w
        sxy = sxy - dx * sy - dy * sx + dx * dy * w
        sx -= dx * w
        sy -= dy * w
        minX -= dx
        maxX -= dx
        seq0 = sequence
        ts0 = t
    }
}
