import CadenceCore
import CadenceMetrics
import KMSDisplay

/// What a run says about the display it runs on: the driver for the log header, whether it is
/// a named output, its metrics series. The fake display and a `KMSDisplay` answer each.
public enum RunDisplay {
    /// The display driver for the log header: the DRM driver's name and version (and the
    /// profile of a fake DRM device), or "fake display".
    public static func driverName(_ display: any DisplayBackend) -> String {
        guard let k = display as? KMSDisplay else { return display.name == "fake" ? "fake display" : display.name }
        if let sim = k.device.simulatorName, let v = try? k.device.version() {
            return "\(v.name) \(v.versionString) (\(sim) profile)"
        }
        guard let v = try? k.device.version() else { return "unknown DRM driver" }
        return "\(v.name) \(v.versionString)"
    }

    /// True when `display` is the output `name` names (its connector, or `cardN-NAME`).
    public static func drives(_ display: any DisplayBackend, _ name: String) -> Bool {
        guard let k = display as? KMSDisplay else { return false }
        return k.output.connector.name == name || k.address.description == name
    }

    /// The metrics series of a run: the KMS connector and CRTC index, or the display's name and 0.
    public static func metricsLabels(_ display: any DisplayBackend) -> FrameMetrics.Labels {
        guard let k = display as? KMSDisplay else { return FrameMetrics.Labels(connector: display.name, crtc: 0) }
        return FrameMetrics.Labels(connector: k.output.connector.name, crtc: k.output.crtcIndex)
    }
}
