import DRM

/// Connector names and mode refreshes of the card's CRTCs (by index), when the card can be read.
public struct ObservedDisplays {
    /// Each driven CRTC's connector and mode refresh (0 when it has no mode).
    public var byCRTC: [Int32: (connector: String, refreshHz: Double)] = [:]

    /// Reads the card at `devicePath` (read-only); none when it cannot be read.
    public init(devicePath: String) {
        guard let dev = try? DRMDevice.open(path: devicePath, readOnly: true), let res = try? dev.resources() else {
            return
        }
        for c in (try? dev.connectors()) ?? [] where c.encoderID.rawValue != 0 {
            guard let enc = try? dev.encoder(c.encoderID), let i = res.crtcs.firstIndex(of: enc.crtcID) else {
                continue
            }
            let hz = (try? dev.crtc(enc.crtcID))?.mode?.refreshHz ?? 0
            byCRTC[Int32(i)] = (c.name, hz)
        }
    }

    /// The CRTC `name` drives, if any.
    public func crtc(ofConnector name: String) -> Int32? { byCRTC.first { $0.value.connector == name }?.key }
    /// The connector driving `crtc`, else "crtc-N".
    public func connector(_ crtc: Int32) -> String { byCRTC[crtc]?.connector ?? "crtc-\(crtc)" }
}
