import ArgumentParser
import CadenceCore
import CadenceReport
import DRM
import EDID
import Foundation
import KMSDisplay

/// `validate`'s panel-identity criteria: a kiosk image checks it drives the panel it was built
/// for. The EDID is read from the connector the run drives; on the fake display there is none
/// (each criterion fails with "no EDID on the fake display") unless `--fake-edid FILE` gives one.
struct PanelExpectations: ParsableArguments {
    @Option(name: .customLong("expect-monitor"), help: "Fail unless the EDID's monitor name is NAME (exact, trailing spaces ignored).")
    var monitor: String?
    @Option(name: .customLong("expect-serial"), help: "Fail unless the EDID's serial string or serial number is S.")
    var serial: String?
    @Option(name: .customLong("expect-mode"), help: "Fail unless the mode driven is WxH[@HZ] (HZ matched to the decimals given: @60 is 59.5–60.5, @59.94 is 59.935–59.945).")
    var mode: String?
    @Option(name: .customLong("fake-edid"), help: "With --backend fake: the EDID FILE the fake display reports (a test hook for --expect-*).")
    var fakeEDID: String?

    var isEmpty: Bool { monitor == nil && serial == nil && mode == nil }

    /// What the run drove: the decoded EDID (or why there is none) and the mode.
    struct Observed {
        var edid: EDID?
        var noEDID = "no EDID on the fake display"
        /// (width, height, exact refresh); nil on the fake display without --fake-edid.
        var mode: (width: Int, height: Int, refreshHz: Double)?
        var noMode = "the fake display drives no KMS mode"
    }

    /// Checks the options before the run (a bad --expect-mode or --fake-edid is exit 2).
    func validate() throws {
        if let m = mode { _ = try Self.parseMode(m) }
        if let f = fakeEDID { _ = try Self.decodeFile(f) }
    }

    /// Reads what `backend` drives; call while the display is open.
    func observe(_ backend: any DisplayBackend) -> Observed {
        var o = Observed()
        if let k = backend as? KMSDisplay {
            let c = k.selection.connector
            let m = k.selection.mode
            o.mode = (Int(m.hdisplay), Int(m.vdisplay), m.refreshHz)
            do {
                if let bytes = try k.device.edid(of: c.id), !bytes.isEmpty {
                    do { o.edid = try EDID(bytes) } catch { o.noEDID = "the EDID of \(c.name) does not decode: \(error)" }
                } else {
                    o.noEDID = "\(c.name) has no EDID"
                }
            } catch {
                o.noEDID = "cannot read the EDID of \(c.name): \(error)"
            }
        } else if let f = fakeEDID, let e = try? Self.decodeFile(f) {
            o.edid = e
            if let p = e.preferredTiming { o.mode = (p.hActive, p.vActive, 1e9 / backend.refreshInterval) }
        }
        return o
    }

    /// One result per given expectation.
    func evaluate(_ o: Observed) -> [CriterionResult] {
        var r: [CriterionResult] = []
        if let want = monitor {
            let want = Self.trimmed(want)
            if let e = o.edid {
                let name = e.name ?? ""
                r.append(CriterionResult(name: "expect-monitor", passed: name == want,
                                         detail: "monitor \"\(name)\" (expected \"\(want)\")"))
            } else {
                r.append(CriterionResult(name: "expect-monitor", passed: false, detail: "\(o.noEDID) (expected \"\(want)\")"))
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
                r.append(CriterionResult(name: "expect-serial", passed: have.contains(want), detail: "serial \(shown) (expected \"\(want)\")"))
            } else {
                r.append(CriterionResult(name: "expect-serial", passed: false, detail: "\(o.noEDID) (expected \"\(want)\")"))
            }
        }
        if let text = mode, let want = try? Self.parseMode(text) {
            if let m = o.mode {
                var ok = m.width == want.width && m.height == want.height
                if let hz = want.hz { ok = ok && abs(m.refreshHz - hz) < want.tolerance }
                r.append(CriterionResult(name: "expect-mode", passed: ok,
                                         detail: "mode \(m.width)x\(m.height)@\(EDIDFormat.fixed(m.refreshHz, 4)) (expected \(text))"))
            } else {
                r.append(CriterionResult(name: "expect-mode", passed: false, detail: "\(o.noMode) (expected \(text))"))
            }
        }
        return r
    }

    static func trimmed(_ s: String) -> String {
        var t = Substring(s)
        while t.last == " " { t = t.dropLast() }
        return String(t)
    }

    /// "WxH" or "WxH@HZ"; the tolerance is half a unit of HZ's last decimal.
    static func parseMode(_ s: String) throws -> (width: Int, height: Int, hz: Double?, tolerance: Double) {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        let wh = parts[0].split(separator: "x")
        guard parts.count <= 2, wh.count == 2, let w = Int(wh[0]), let h = Int(wh[1]), w > 0, h > 0 else {
            throw CLIFailure("--expect-mode '\(s)' must be WxH or WxH@HZ (e.g. 1920x1080@60)")
        }
        guard parts.count == 2 else { return (w, h, nil, 0) }
        guard let hz = Double(parts[1]), hz.isFinite, hz > 0 else {
            throw CLIFailure("--expect-mode '\(s)': the refresh after @ must be a number of Hz")
        }
        let decimals = parts[1].split(separator: ".").dropFirst().first?.count ?? 0
        var tol = 0.5
        for _ in 0..<decimals { tol /= 10 }
        return (w, h, hz, tol)
    }

    static func decodeFile(_ path: String) throws -> EDID {
        do {
            return try EDID(try EDIDCommand.read(path))
        } catch let e as EDIDError {
            throw CLIFailure("--fake-edid \(path): \(e)")
        } catch let e as CLIFailure {
            throw CLIFailure("--fake-edid: \(e)")
        }
    }
}
