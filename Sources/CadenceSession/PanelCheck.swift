import CadenceCore
import CadenceReport
import EDID
import KMSDisplay

/// The panel a run drove, for ``ExpectedPanel``: the decoded EDID (or why there is none) and
/// the mode.
public struct DrivenPanel {
    /// The decoded EDID; nil when there is none (``noEDID`` says why).
    public var edid: EDID?
    /// Why ``edid`` is nil.
    public var noEDID = "no EDID on the fake display"
    /// (width, height, exact refresh); nil on the fake display without an EDID.
    public var mode: (width: Int, height: Int, refreshHz: Double)?
    /// Why ``mode`` is nil.
    public var noMode = "the fake display drives no KMS mode"

    /// Nothing read (the fake display without an EDID).
    public init() {}

    /// Reads what `backend` drives; call while the display is open. A `KMSDisplay`'s EDID is
    /// read from the connector it drives; another display has none unless `fakeEDID` gives
    /// one (its preferred timing is then the mode, at the display's refresh).
    public init(reading backend: any DisplayBackend, fakeEDID: EDID? = nil) {
        if let k = backend as? KMSDisplay {
            let c = k.selection.connector
            let m = k.selection.mode
            mode = (Int(m.hdisplay), Int(m.vdisplay), m.refreshHz)
            do {
                if let bytes = try k.device.edid(of: c.id), !bytes.isEmpty {
                    do { edid = try EDID(bytes) } catch { noEDID = "the EDID of \(c.name) does not decode: \(error)" }
                } else {
                    noEDID = "\(c.name) has no EDID"
                }
            } catch {
                noEDID = "cannot read the EDID of \(c.name): \(error)"
            }
        } else if let e = fakeEDID {
            edid = e
            if let p = e.preferredTiming { mode = (p.hActive, p.vActive, 1e9 / backend.refreshInterval) }
        }
    }
}

/// A mode a panel is expected to be driven at: "WxH" or "WxH@HZ", the refresh matched to the
/// decimals given (@60 is 59.5–60.5, @59.94 is 59.935–59.945).
public struct ExpectedMode: Sendable {
    /// What is wrong with a mode's text.
    public enum Invalid: Error, Sendable {
        /// Not WxH or WxH@HZ.
        case shape
        /// The refresh after @ is not a number of Hz.
        case refresh
    }

    /// The text parsed.
    public var text: String
    /// The size.
    public var width: Int, height: Int
    /// The refresh, nil when not given.
    public var hz: Double?
    /// Half a unit of the refresh's last decimal.
    public var tolerance: Double

    /// Parses `text`; throws ``Invalid``.
    public init(_ text: String) throws {
        self.text = text
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        let wh = parts[0].split(separator: "x")
        guard parts.count <= 2, wh.count == 2, let w = Int(wh[0]), let h = Int(wh[1]), w > 0, h > 0 else {
            throw Invalid.shape
        }
        width = w
        height = h
        tolerance = 0
        guard parts.count == 2 else { return }
        guard let hz = Double(parts[1]), hz.isFinite, hz > 0 else { throw Invalid.refresh }
        let decimals = parts[1].split(separator: ".").dropFirst().first?.count ?? 0
        var tol = 0.5
        for _ in 0..<decimals { tol /= 10 }
        self.hz = hz
        tolerance = tol
    }

    /// Whether a mode of `width`×`height` at `refreshHz` is this one.
    public func matches(width: Int, height: Int, refreshHz: Double) -> Bool {
        var ok = width == self.width && height == self.height
        if let hz { ok = ok && abs(refreshHz - hz) < tolerance }
        return ok
    }
}

/// The panel a run is expected to drive (a kiosk image checks it drives the panel it was built
/// for): its EDID's monitor name and serial, and the mode. Each expectation given is one
/// criterion (`expect-monitor`, `expect-serial`, `expect-mode`).
public struct ExpectedPanel: Sendable {
    /// The EDID's monitor name (exact, trailing spaces ignored).
    public var monitor: String?
    /// The EDID's serial string or serial number.
    public var serial: String?
    /// The mode driven.
    public var mode: ExpectedMode?

    /// The expectations given (nil: not checked).
    public init(monitor: String? = nil, serial: String? = nil, mode: ExpectedMode? = nil) {
        self.monitor = monitor
        self.serial = serial
        self.mode = mode
    }

    /// One result per expectation given.
    public func evaluate(_ o: DrivenPanel) -> [CriterionResult] {
        var r: [CriterionResult] = []
        if let want = monitor {
            let want = Self.trimmed(want)
            if let e = o.edid {
                let name = e.name ?? ""
                r.append(
                    CriterionResult(
                        name: "expect-monitor", passed: name == want,
                        detail: "monitor \"\(name)\" (expected \"\(want)\")"))
            } else {
                r.append(
                    CriterionResult(name: "expect-monitor", passed: false, detail: "\(o.noEDID) (expected \"\(want)\")")
                )
            }
        }
        if let want = serial {
            let want = Self.trimmed(want)
            if let e = o.edid {
                var have: [String] = []
                if let s = e.serialString, !s.isEmpty { have.append(s) }
                if let n = e.serialNumber { have.append(String(n)) }
                if let n = e.displayID?.product?.serialNumber { have.append(String(n)) }
                let shown = have.isEmpty ? "none" : have.map { "\"\($0)\"" }.joined(separator: " / ")
                r.append(
                    CriterionResult(
                        name: "expect-serial", passed: have.contains(want),
                        detail: "serial \(shown) (expected \"\(want)\")"))
            } else {
                r.append(
                    CriterionResult(name: "expect-serial", passed: false, detail: "\(o.noEDID) (expected \"\(want)\")"))
            }
        }
        if let want = mode {
            if let m = o.mode {
                let ok = want.matches(width: m.width, height: m.height, refreshHz: m.refreshHz)
                r.append(
                    CriterionResult(
                        name: "expect-mode", passed: ok,
                        detail:
                            "mode \(m.width)x\(m.height)@\(EDIDFormat.fixed(m.refreshHz, 4)) (expected \(want.text))"))
            } else {
                r.append(
                    CriterionResult(name: "expect-mode", passed: false, detail: "\(o.noMode) (expected \(want.text))"))
            }
        }
        return r
    }

    /// `s` without trailing spaces (an EDID pads its strings).
    public static func trimmed(_ s: String) -> String {
        var t = Substring(s)
        while t.last == " " { t = t.dropLast() }
        return String(t)
    }
}
