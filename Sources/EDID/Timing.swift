/// Video timings decoded from EDID, CTA-861 and DisplayID, with their exact refresh.

/// Where a ``Timing`` came from.
public enum TimingSource: Sendable, Equatable, CustomStringConvertible {
    /// An 18-byte detailed timing descriptor in `block` (1-based number among all DTDs, as
    /// edid-decode counts them).
    case detailed(block: Int, number: Int)
    /// An established timing bit (EDID base block bytes 0x23–0x25).
    case established
    /// A standard timing (2-byte code) that names a VESA DMT timing.
    case standard
    /// A VESA DMT timing by id (DisplayID type 4 / supported DMT block).
    case dmt(Int)
    /// A CTA-861 short video descriptor.
    case vic(Int)
    /// An HDMI 1.4 VIC (HDMI VSDB).
    case hdmiVIC(Int)
    /// A DisplayID detailed timing (type 1 or type 7).
    case displayID(type: Int, block: Int)

    public var description: String {
        switch self {
        case .detailed(let b, let n): return "DTD \(n) (block \(b))"
        case .established: return "established"
        case .standard: return "standard"
        case .dmt(let id): return "DMT 0x" + String(id, radix: 16)
        case .vic(let v): return "VIC \(v)"
        case .hdmiVIC(let v): return "HDMI VIC \(v)"
        case .displayID(let t, let b): return "DisplayID type \(t) (block \(b))"
        }
    }
}

/// One video timing: active area, blanking, sync, pixel clock, and the refresh that follows
/// exactly from them: pixel clock / (htotal · vtotal). For interlaced timings ``refreshHz``
/// is the field rate (vtotal = field lines + ½), as edid-decode prints it.
public struct Timing: Sendable, Equatable {
    /// Pixel clock in Hz.
    public var pixelClockHz: Int
    /// Active pixels per line.
    public var hActive: Int
    /// Horizontal front porch, sync width and back porch in pixels; border pixels on each side.
    public var hFrontPorch: Int
    public var hSync: Int
    public var hBackPorch: Int
    public var hBorder: Int
    /// Active lines of the frame (both fields for interlaced timings).
    public var vActive: Int
    /// Vertical front porch, sync width and back porch in lines (per field when interlaced).
    public var vFrontPorch: Int
    public var vSync: Int
    public var vBackPorch: Int
    public var vBorder: Int
    /// Interlaced: two fields per frame.
    public var interlaced: Bool
    /// CTA VIC 39: both fields have the same vertical total.
    public var evenVTotal: Bool
    /// Sync polarities (positive = true).
    public var hSyncPositive: Bool
    public var vSyncPositive: Bool
    /// Picture aspect ratio (0:0 when undefined).
    public var aspect: (h: Int, v: Int)
    /// Image size in mm from a DTD (0 when not given).
    public var imageSizeMM: (width: Int, height: Int)
    /// Where the timing was declared.
    public var source: TimingSource
    /// Marked preferred by its block (first DTD of the base block, DisplayID preferred bit).
    public var preferred: Bool
    /// A CTA native timing (SVD native bit, or one of the "native detailed modes").
    public var native: Bool
    /// VESA reduced blanking (DMT tables).
    public var reducedBlanking: Bool

    public init(pixelClockHz: Int, hActive: Int, hFrontPorch: Int, hSync: Int, hBackPorch: Int, hBorder: Int = 0,
                vActive: Int, vFrontPorch: Int, vSync: Int, vBackPorch: Int, vBorder: Int = 0,
                interlaced: Bool = false, evenVTotal: Bool = false, hSyncPositive: Bool = false, vSyncPositive: Bool = false,
                aspect: (h: Int, v: Int) = (0, 0), imageSizeMM: (width: Int, height: Int) = (0, 0),
                source: TimingSource, preferred: Bool = false, native: Bool = false, reducedBlanking: Bool = false) {
        self.pixelClockHz = pixelClockHz
        self.hActive = hActive; self.hFrontPorch = hFrontPorch; self.hSync = hSync; self.hBackPorch = hBackPorch
        self.hBorder = hBorder
        self.vActive = vActive; self.vFrontPorch = vFrontPorch; self.vSync = vSync; self.vBackPorch = vBackPorch
        self.vBorder = vBorder
        self.interlaced = interlaced; self.evenVTotal = evenVTotal
        self.hSyncPositive = hSyncPositive; self.vSyncPositive = vSyncPositive
        self.aspect = aspect; self.imageSizeMM = imageSizeMM
        self.source = source; self.preferred = preferred; self.native = native; self.reducedBlanking = reducedBlanking
    }

    /// Pixels per line including blanking and borders.
    public var hTotal: Int { hActive + hFrontPorch + hSync + hBackPorch + 2 * hBorder }

    /// Lines per field (per frame when progressive), as a double: interlaced fields carry ½ line.
    public var vTotalPerField: Double {
        let blank = vFrontPorch + vSync + vBackPorch + 2 * vBorder
        if !interlaced { return Double(vActive + blank) }
        let field = vActive / 2
        if evenVTotal { return Double(field + vFrontPorch + vSync + vBackPorch) }
        return Double(field + vFrontPorch + vSync + vBackPorch) + 0.5
    }

    /// The exact refresh (field rate when interlaced): pixel clock / (htotal · vtotal); 0 when
    /// the totals are 0.
    public var refreshHz: Double {
        let t = Double(hTotal) * vTotalPerField
        return t > 0 ? Double(pixelClockHz) / t : 0
    }

    /// The 1000/1001 ("NTSC") variant that CTA-861 allows for rates that are a multiple of 6 Hz
    /// (59.94 for 60, 23.976 for 24), else nil.
    public var fractionalRefreshHz: Double? {
        guard case .vic = source else { return nil }
        let r = refreshHz
        guard r > 0, (r / 6).rounded() * 6 == r else { return nil }
        return r * 1000 / 1001
    }

    /// Horizontal rate in kHz.
    public var hRateKHz: Double { hTotal > 0 ? Double(pixelClockHz) / Double(hTotal) / 1000 : 0 }

    /// "3840x2160@60.000000" (interlaced: "1920x1080i@60.000000").
    public var description: String {
        "\(hActive)x\(vActive)\(interlaced ? "i" : "")@\(EDIDFormat.fixed(refreshHz, 6))"
    }

    public static func == (a: Timing, b: Timing) -> Bool {
        a.pixelClockHz == b.pixelClockHz && a.hActive == b.hActive && a.hFrontPorch == b.hFrontPorch
            && a.hSync == b.hSync && a.hBackPorch == b.hBackPorch && a.hBorder == b.hBorder
            && a.vActive == b.vActive && a.vFrontPorch == b.vFrontPorch && a.vSync == b.vSync
            && a.vBackPorch == b.vBackPorch && a.vBorder == b.vBorder && a.interlaced == b.interlaced
            && a.evenVTotal == b.evenVTotal && a.source == b.source && a.preferred == b.preferred && a.native == b.native
    }
}

/// A row of a generated timing table (TimingTables.swift).
struct TableTiming: Sendable {
    var id: Int
    var timing: Timing

    init(_ id: Int, _ w: Int, _ h: Int, _ i: Bool, _ clockKHz: Int,
         _ hfp: Int, _ hs: Int, _ hbp: Int, _ hb: Int, _ vfp: Int, _ vs: Int, _ vbp: Int, _ vb: Int,
         _ hp: Bool, _ vp: Bool, _ even: Bool, _ hr: Int, _ vr: Int) {
        self.id = id
        timing = Timing(pixelClockHz: clockKHz * 1000, hActive: w, hFrontPorch: hfp, hSync: hs, hBackPorch: hbp, hBorder: hb,
                        vActive: h, vFrontPorch: vfp, vSync: vs, vBackPorch: vbp, vBorder: vb,
                        interlaced: i, evenVTotal: even, hSyncPositive: hp, vSyncPositive: vp,
                        aspect: (hr, vr), source: .dmt(id))
    }
}

/// A VESA DMT row with its standard-timing code (0 when it has none).
struct DMTEntry: Sendable {
    var id: Int
    var timing: Timing
    var std: Int

    init(_ id: Int, _ w: Int, _ h: Int, _ i: Bool, _ clockKHz: Int,
         _ hfp: Int, _ hs: Int, _ hbp: Int, _ hb: Int, _ vfp: Int, _ vs: Int, _ vbp: Int, _ vb: Int,
         _ hp: Bool, _ vp: Bool, _ even: Bool, _ hr: Int, _ vr: Int, std: Int, rb: Bool) {
        self.id = id
        self.std = std
        var t = TableTiming(id, w, h, i, clockKHz, hfp, hs, hbp, hb, vfp, vs, vbp, vb, hp, vp, even, hr, vr).timing
        t.reducedBlanking = rb
        timing = t
    }
}

/// The VESA DMT, CTA-861 VIC and HDMI VIC tables (rows in TimingTables.swift).
enum TimingTables {
    static func dmt(id: Int) -> Timing? { dmt.first { $0.id == id }?.timing }
    static func dmt(std code: Int) -> DMTEntry? { code == 0 ? nil : dmt.first { $0.std == code } }

    /// A CTA VIC's timing with `source` = `.vic(n)`.
    static func vic(_ n: Int) -> Timing? {
        guard var t = vic.first(where: { $0.id == n })?.timing else { return nil }
        t.source = .vic(n)
        return t
    }

    static func hdmiVIC(_ n: Int) -> Timing? {
        guard var t = hdmiVIC.first(where: { $0.id == n })?.timing else { return nil }
        t.source = .hdmiVIC(n)
        return t
    }

    /// The established timings of bytes 0x23–0x25 in bit order (byte 0x23 bit 7 first); the
    /// five that are not DMT timings (IBM and Apple modes) carry their own totals.
    static let established: [Timing] = {
        func own(_ w: Int, _ h: Int, _ clockKHz: Int, _ ht: Int, _ vt: Int) -> Timing {
            Timing(pixelClockHz: clockKHz * 1000, hActive: w, hFrontPorch: 0, hSync: ht - w, hBackPorch: 0,
                   vActive: h, vFrontPorch: 0, vSync: vt - h, vBackPorch: 0, source: .established)
        }
        func d(_ id: Int) -> Timing {
            var t = dmt(id: id)!
            t.source = .established
            return t
        }
        return [
            own(720, 400, 28320, 900, 449), own(720, 400, 35500, 900, 449), d(0x04), own(640, 480, 30240, 864, 525),
            d(0x05), d(0x06), d(0x08), d(0x09),
            d(0x0a), d(0x0b), own(832, 624, 57284, 1152, 667), d(0x0f), d(0x10), d(0x11), d(0x12), d(0x24),
            own(1152, 870, 100000, 1456, 915),
        ]
    }()
}

/// Number formatting without Foundation.
public enum EDIDFormat {
    /// `v` with exactly `decimals` digits after the point, rounded half away from zero.
    public static func fixed(_ v: Double, _ decimals: Int) -> String {
        guard v.isFinite else { return "nan" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let neg = v < 0
        let r = (abs(v) * scale).rounded()
        guard r < 9e17 else { return String(v) }
        let n = UInt64(r)
        let ip = n / UInt64(scale), fp = n % UInt64(scale)
        var s = (neg && n != 0 ? "-" : "") + String(ip)
        if decimals > 0 {
            let f = String(fp)
            s += "." + String(repeating: "0", count: decimals - f.count) + f
        }
        return s
    }
}
