import ArgumentParser
import CadenceCore
import CadenceReport
import CadenceSession
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

    /// Checks the options before the run (a bad --expect-mode or --fake-edid is exit 2).
    func validate() throws {
        if let m = mode { _ = try ExpectedMode(option: m) }
        if let f = fakeEDID { _ = try Self.decodeFile(f) }
    }

    /// Reads what `backend` drives (`DrivenPanel`); call while the display is open.
    func observe(_ backend: any DisplayBackend) -> DrivenPanel {
        // Only the fake display reports --fake-edid.
        let fake = backend is KMSDisplay ? nil : fakeEDID.flatMap { try? Self.decodeFile($0) }
        return DrivenPanel(reading: backend, fakeEDID: fake)
    }

    /// The expectations given.
    var expected: ExpectedPanel {
        ExpectedPanel(monitor: monitor, serial: serial, mode: mode.flatMap { try? ExpectedMode(option: $0) })
    }

    static func decodeFile(_ path: String) throws -> EDID {
        do {
            return try EDID(try EDIDInput.bytes(ofFile: path))
        } catch let e as EDIDError {
            throw CLIFailure("--fake-edid \(path): \(e)")
        } catch let e as EDIDInput.Failure {
            throw CLIFailure("--fake-edid: \(e)")
        }
    }
}
