import CadenceSession
import DRM
import KMSDisplay

/// The one-line warning when `connector` offers a faster mode at the size of `mode` (see
/// `OutputSelection.fasterMode(than:in:)`), with the `--mode` that uses it; `use` says what
/// `mode` is: "is measured at", "is driven at", "prefers".
func fasterModeWarning(connector: Connector, mode: ModeInfo, use: String) -> String? {
    guard let f = OutputSelection.fasterMode(than: mode, in: connector.modes) else { return nil }
    return fasterModeWarning(connector: connector, mode: mode, faster: f, use: use)
}

extension DeviceInventory {
    /// `list`'s warnings: one line per connector of `fasterModes`.
    var fasterModeWarnings: [String] { fasterModes.map(fasterModeWarning) }
}

/// `list`'s warning for a connector that offers a faster mode than it is driven at, or prefers.
func fasterModeWarning(_ f: DeviceInventory.FasterMode) -> String {
    let use: String
    switch f.use {
    case .driven: use = "is driven at"
    case .preferred: use = "prefers"
    }
    return fasterModeWarning(connector: f.connector, mode: f.mode, faster: f.faster, use: use)
}

/// The warning line: `connector` `use` `mode` but offers `f` at the same size.
private func fasterModeWarning(connector: Connector, mode: ModeInfo, faster f: ModeInfo, use: String) -> String {
    "\(connector.name) \(use) \(mode.description) Hz but offers \(f.description) Hz at the same size (stuck at \(ModeInfo.formatHz(mode.refreshHz.rounded())) Hz?): --mode \(f.hdisplay)x\(f.vdisplay)@\(ModeInfo.formatHz(f.refreshHz)) uses it"
}
