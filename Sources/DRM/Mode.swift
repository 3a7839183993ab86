/// A display timing (drm_mode_modeinfo) and its exact refresh arithmetic.

/// Timing flags of a mode (DRM_MODE_FLAG_*).
public struct ModeFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let phsync = ModeFlags(rawValue: 1 << 0)
    public static let nhsync = ModeFlags(rawValue: 1 << 1)
    public static let pvsync = ModeFlags(rawValue: 1 << 2)
    public static let nvsync = ModeFlags(rawValue: 1 << 3)
    /// Two fields per frame: the field rate is twice the frame rate.
    public static let interlace = ModeFlags(rawValue: 1 << 4)
    /// Every line is scanned twice: half the refresh.
    public static let doublescan = ModeFlags(rawValue: 1 << 5)
    public static let csync = ModeFlags(rawValue: 1 << 6)
    public static let dblclk = ModeFlags(rawValue: 1 << 12)
}

/// Type bits of a mode (DRM_MODE_TYPE_*).
public struct ModeType: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The connector's preferred (native) mode.
    public static let preferred = ModeType(rawValue: 1 << 3)
    /// Built by the driver (not from EDID).
    public static let driver = ModeType(rawValue: 1 << 6)
    /// Added by the user.
    public static let userdef = ModeType(rawValue: 1 << 5)
}

/// A display mode: the complete timing the CRTC generates.
public struct ModeInfo: Hashable, Sendable, CustomStringConvertible {
    /// Pixel clock in kHz.
    public var clock: UInt32
    public var hdisplay: UInt16, hsyncStart: UInt16, hsyncEnd: UInt16, htotal: UInt16, hskew: UInt16
    public var vdisplay: UInt16, vsyncStart: UInt16, vsyncEnd: UInt16, vtotal: UInt16, vscan: UInt16
    /// The kernel's rounded refresh (integer Hz); use ``refreshHz`` for the exact value.
    public var vrefresh: UInt32
    public var flags: ModeFlags
    public var type: ModeType
    /// The mode's name ("1024x768", "1920x1080i").
    public var name: String

    public init(
        clock: UInt32, hdisplay: UInt16, hsyncStart: UInt16, hsyncEnd: UInt16, htotal: UInt16,
        hskew: UInt16 = 0, vdisplay: UInt16, vsyncStart: UInt16, vsyncEnd: UInt16, vtotal: UInt16,
        vscan: UInt16 = 0, vrefresh: UInt32? = nil, flags: ModeFlags = [], type: ModeType = [],
        name: String? = nil
    ) {
        self.clock = clock
        self.hdisplay = hdisplay; self.hsyncStart = hsyncStart; self.hsyncEnd = hsyncEnd
        self.htotal = htotal; self.hskew = hskew
        self.vdisplay = vdisplay; self.vsyncStart = vsyncStart; self.vsyncEnd = vsyncEnd
        self.vtotal = vtotal; self.vscan = vscan
        self.flags = flags
        self.type = type
        self.name = name ?? "\(hdisplay)x\(vdisplay)\(flags.contains(.interlace) ? "i" : "")"
        self.vrefresh = 0
        self.vrefresh = vrefresh ?? ModeInfo.roundedHz(refreshHz)
    }

    /// The exact vertical refresh in Hz (fields per second for interlaced modes), computed
    /// as the kernel's drm_mode_vrefresh does but without rounding:
    /// clock·1000 / (htotal·vtotal), doubled when interlaced, halved for doublescan,
    /// divided by vscan when vscan > 1. 0 for a degenerate mode.
    public var refreshHz: Double {
        var num = Double(clock) * 1000
        var den = Double(htotal) * Double(vtotal)
        if flags.contains(.interlace) { num *= 2 }
        if flags.contains(.doublescan) { den *= 2 }
        if vscan > 1 { den *= Double(vscan) }
        guard den > 0 else { return 0 }
        return num / den
    }

    /// The refresh period in nanoseconds (16_683_350.0 for 59.94 Hz); 0 for a degenerate mode.
    public var refreshInterval: Double {
        let hz = refreshHz
        return hz > 0 ? 1e9 / hz : 0
    }

    /// `hz` rounded to an integer the way drm_mode_vrefresh reports it, clamped to UInt32.
    static func roundedHz(_ hz: Double) -> UInt32 {
        guard hz.isFinite, hz > 0 else { return 0 }
        return UInt32(min(hz.rounded(), Double(UInt32.max)))
    }

    /// True for the connector's preferred mode.
    public var isPreferred: Bool { type.contains(.preferred) }

    /// "1024x768@60.0038".
    public var description: String {
        "\(hdisplay)x\(vdisplay)\(flags.contains(.interlace) ? "i" : "")@\(Self.formatHz(refreshHz))"
    }

    /// Refresh with four decimals, trailing zeros trimmed ("60.0038", "75", "59.94").
    public static func formatHz(_ hz: Double) -> String {
        var s = String(format4: hz)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    /// This timing with its pixel clock scaled so the refresh is as close as a 1 kHz clock
    /// step allows to `hz`; everything else (totals, sync, flags) is kept.
    public func withClockScaled(toRefresh hz: Double) -> ModeInfo {
        var m = self
        var perFrame = Double(htotal) * Double(vtotal)
        if flags.contains(.interlace) { perFrame /= 2 }
        if flags.contains(.doublescan) { perFrame *= 2 }
        if vscan > 1 { perFrame *= Double(vscan) }
        let clock = (hz * perFrame / 1000).rounded()
        m.clock = clock.isFinite && clock >= 1 ? UInt32(min(clock, Double(UInt32.max))) : 1
        m.type = [.userdef]
        m.vrefresh = ModeInfo.roundedHz(m.refreshHz)
        return m
    }

    /// A CVT reduced-blanking (v1) timing for `width`x`height` at `hz`: 160-pixel horizontal
    /// blank (48 front porch, 32 sync), at least 460 µs of vertical blank with a 3-line front
    /// porch and the aspect-ratio vsync width, +hsync −vsync. The pixel clock is kept at 1 kHz
    /// precision (instead of CVT's 250 kHz steps) so the refresh is as requested.
    public static func cvtReducedBlanking(width: Int, height: Int, hz: Double) -> ModeInfo? {
        guard width > 0, height > 0, width <= 16384, height <= 16384, hz > 1, hz <= 1000 else { return nil }
        let hdisplay = (width / 8) * 8 == width ? width : (width / 8 + 1) * 8
        let vsyncWidth: Int
        switch Double(width) / Double(height) {
        case let r where abs(r - 4.0 / 3) < 0.01: vsyncWidth = 4
        case let r where abs(r - 16.0 / 9) < 0.01: vsyncWidth = 5
        case let r where abs(r - 16.0 / 10) < 0.01: vsyncWidth = 6
        case let r where abs(r - 5.0 / 4) < 0.01 || abs(r - 15.0 / 9) < 0.01: vsyncWidth = 7
        default: vsyncWidth = 10
        }
        let framePeriodUs = 1e6 / hz
        let hPeriodEstUs = (framePeriodUs - 460) / Double(height)
        guard hPeriodEstUs > 0 else { return nil }
        let vbiLines = Int((460 / hPeriodEstUs).rounded(.down)) + 1
        let minVBI = 3 + vsyncWidth + 6
        let vtotal = height + max(vbiLines, minVBI)
        let htotal = hdisplay + 160
        guard htotal <= Int(UInt16.max), vtotal <= Int(UInt16.max) else { return nil }
        let clock = (hz * Double(htotal) * Double(vtotal) / 1000).rounded()
        guard clock >= 1, clock < Double(UInt32.max) else { return nil }
        return ModeInfo(
            clock: UInt32(clock),
            hdisplay: UInt16(width), hsyncStart: UInt16(hdisplay + 48), hsyncEnd: UInt16(hdisplay + 80),
            htotal: UInt16(htotal),
            vdisplay: UInt16(height), vsyncStart: UInt16(height + 3), vsyncEnd: UInt16(height + 3 + vsyncWidth),
            vtotal: UInt16(vtotal),
            flags: [.phsync, .nvsync], type: [.userdef], name: "\(width)x\(height)")
    }
}

extension String {
    /// `value` with exactly four decimals, without Foundation (`-0.0500`; a non-finite value as
    /// Swift writes it). `ModeInfo.formatHz` and `measure`'s numbers.
    public init(format4 value: Double) {
        guard value.isFinite else { self = "\(value)"; return }
        let negative = value < 0
        let scaled = (abs(value) * 10000).rounded()
        let whole = Int(scaled / 10000)
        let frac = Int(scaled - Double(whole) * 10000)
        var f = String(frac)
        while f.count < 4 { f = "0" + f }
        self = (negative ? "-" : "") + "\(whole).\(f)"
    }
}
