import DRM
import KMSDisplay

/// The one-line warning when `connector` offers a faster mode at the size of `mode` (see
/// `OutputSelection.fasterMode(than:in:)`), with the `--mode` that uses it; `use` says what
/// `mode` is: "is measured at", "is driven at", "prefers".
func fasterModeWarning(connector: Connector, mode: ModeInfo, use: String) -> String? {
    guard let f = OutputSelection.fasterMode(than: mode, in: connector.modes) else { return nil }
    return "\(connector.name) \(use) \(mode.description) Hz but offers \(f.description) Hz at the same size (stuck at \(ModeInfo.formatHz(mode.refreshHz.rounded())) Hz?): --mode \(f.hdisplay)x\(f.vdisplay)@\(ModeInfo.formatHz(f.refreshHz)) uses it"
}
