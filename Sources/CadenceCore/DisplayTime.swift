/// An instant on the display clock: `CLOCK_MONOTONIC` for KMS (the clock the kernel stamps
/// vblanks and page flips with), the virtual clock for ``FakeDisplay``.
///
/// Instants and durations are distinct types, as in Swift's `Clock` API: subtracting two
/// instants gives a `Duration`, adding a `Duration` gives an instant. ``zero`` is the "did not
/// happen" value that Apple's `presentedTime` reports as 0 (no real vblank is stamped at boot).
///
///     let shown = drawable.presentedTime            // DisplayInstant
///     let late = update.targetPresentationTimestamp.duration(to: shown)   // Duration
public struct DisplayInstant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
    public typealias Duration = Swift.Duration

    /// Nanoseconds since the clock's origin (boot, for `CLOCK_MONOTONIC`).
    public var nanoseconds: Int64

    /// The instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's origin; used for "never" (a discarded drawable's ``Drawable/presentedTime``).
    public static let zero = DisplayInstant(nanoseconds: 0)

    public func advanced(by duration: Swift.Duration) -> DisplayInstant {
        DisplayInstant(nanoseconds: nanoseconds &+ duration.nanoseconds)
    }

    public func duration(to other: DisplayInstant) -> Swift.Duration {
        .nanoseconds(other.nanoseconds &- nanoseconds)
    }

    public static func < (a: DisplayInstant, b: DisplayInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Seconds since the clock's origin, e.g. `12.345678901 s`.
    public var description: String {
        let s = nanoseconds / 1_000_000_000, f = abs(nanoseconds % 1_000_000_000)
        let frac = String(f)
        return "\(nanoseconds < 0 && s == 0 ? "-" : "")\(s).\(String(repeating: "0", count: 9 - frac.count))\(frac) s"
    }
}

extension Duration {
    /// The duration in whole nanoseconds (rounded toward zero; saturating far outside ±292 years).
    public var nanoseconds: Int64 {
        let (s, atto) = components
        let (ns, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return s < 0 ? .min : .max }
        return ns &+ atto / 1_000_000_000
    }
}

/// `x` as nanoseconds, truncated like `Nanoseconds(x)`, saturating at the Int64 range instead of
/// trapping (NaN: 0). For arithmetic on values that may come from outside (a replayed log's
/// sequences and timestamps): a prediction so far off that it saturates is wrong either way, but
/// it must not end the process.
@inline(__always) package func clampedNanoseconds(_ x: Double) -> Nanoseconds {
    if x.isNaN { return 0 }
    if x >= 9.223372036854775e18 { return .max }
    if x <= -9.223372036854775e18 { return .min }
    return Nanoseconds(x)
}
