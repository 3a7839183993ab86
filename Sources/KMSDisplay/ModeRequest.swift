import DRM

/// A mode asked for by size and, optionally, refresh: "WxH" or "WxH@HZ".
public struct ModeRequest: Equatable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var hz: Double?

    public init(width: Int, height: Int, hz: Double? = nil) {
        self.width = width; self.height = height; self.hz = hz
    }

    /// Parses "1024x768" or "1024x768@143.5"; nil when malformed, a size is outside 1...65535
    /// or the rate outside 1...1000 Hz.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let dims = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard dims.count == 2, let w = Int(dims[0]), let h = Int(dims[1]), (1...65535).contains(w), (1...65535).contains(h)
        else { return nil }
        width = w; height = h
        if parts.count == 2 {
            guard let z = Double(parts[1]), z.isFinite, z >= 1, z <= 1000 else { return nil }
            hz = z
        } else {
            hz = nil
        }
    }

    public var description: String {
        hz.map { "\(width)x\(height)@\(ModeInfo.formatHz($0))" } ?? "\(width)x\(height)"
    }

    /// How a request was satisfied.
    public enum Resolution: Equatable, Sendable {
        /// A mode the connector lists.
        case listed(ModeInfo)
        /// The nearest listed mode of that size with its pixel clock scaled.
        case scaled(ModeInfo, from: ModeInfo)
        /// A CVT reduced-blanking timing (no listed mode of that size).
        case cvt(ModeInfo)

        /// The mode to set.
        public var mode: ModeInfo {
            switch self {
            case .listed(let m), .scaled(let m, _), .cvt(let m): return m
            }
        }
    }

    /// Two refreshes within this many Hz are the same rate (60 matches 60.0038, 59.94 does not).
    public static let refreshTolerance = 0.05

    /// Picks the mode for this request from `modes`. Without a rate: the preferred mode of
    /// that size, else the first. With a rate: the listed mode nearest in refresh when within
    /// ``refreshTolerance``; otherwise the listed mode of that size nearest in refresh with its
    /// clock scaled; otherwise a CVT-RB timing. Nil when no rate was given and no mode of that
    /// size is listed, or no timing can be built.
    public func resolve(in modes: [ModeInfo]) -> Resolution? {
        let sameSize = modes.filter { Int($0.hdisplay) == width && Int($0.vdisplay) == height }
        guard let hz else {
            guard let m = sameSize.first(where: \.isPreferred) ?? sameSize.first else { return nil }
            return .listed(m)
        }
        let progressive = sameSize.filter { !$0.flags.contains(.interlace) }
        let candidates = progressive.isEmpty ? sameSize : progressive
        if let nearest = candidates.min(by: { abs($0.refreshHz - hz) < abs($1.refreshHz - hz) }) {
            if abs(nearest.refreshHz - hz) <= Self.refreshTolerance { return .listed(nearest) }
            return .scaled(nearest.withClockScaled(toRefresh: hz), from: nearest)
        }
        return ModeInfo.cvtReducedBlanking(width: width, height: height, hz: hz).map { .cvt($0) }
    }
}

