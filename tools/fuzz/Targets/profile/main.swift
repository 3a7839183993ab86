import CadenceSession
import DRM
import Foundation
import FuzzSupport
import KMSDisplay

/// `--backend fake-drm:PROFILE`: a device profile (`drm_info -j` JSON and the `"cadence"`
/// section) read as the CLI reads it (JSONSerialization, then CadenceSession's
/// `FakeDRMProfileFile.json` and `FakeDRMProfile(json:)`), and a
/// profile that parses played as `list` plays it: the fake device opened (read-only, as `list`
/// opens a card), its version, capabilities, resources, every connector with its properties and
/// EDID, encoders, CRTCs and planes read, and the output a `run` would pick selected. Parsing
/// never traps; whatever parses is a device the KMS code can list without trapping.
func play(_ profile: FakeDRMProfile) {
    let fake = profile.makeDevice(wallClock: false, seed: 0)
    guard let dev = try? DRMDevice.open(path: profile.node, fake: fake, readOnly: true) else {
        preconditionFailure("a parsed profile's own node does not open")
    }
    precondition(dev.isReadOnly)
    _ = try? dev.version()
    _ = dev.has(.dumbBuffer)
    _ = try? dev.enable(.universalPlanes)
    _ = try? dev.enable(.atomic)
    guard let res = try? dev.resources() else { return }
    for id in res.connectors {
        guard let c = try? dev.connector(id) else { continue }
        _ = c.name
        for m in c.modes { precondition(m.refreshHz.isFinite && m.refreshHz >= 0, "refresh \(m.refreshHz)"); _ = m.description }
        _ = try? dev.edid(of: id)
        for p in (try? dev.properties(of: id, type: .connector)) ?? [] { _ = p.info.name; _ = p.value }
    }
    for id in res.encoders { _ = try? dev.encoder(id) }
    for id in res.crtcs { _ = try? dev.crtc(id) }
    for id in (try? dev.planeIDs()) ?? [] { _ = try? dev.plane(id); _ = try? dev.planeKind(id) }
    _ = try? OutputSelection.select(device: dev, connector: nil, mode: nil)
}

runFuzzer { data, size in
    let bytes = Data(fuzzBytes(data, size))
    guard let top = try? JSONSerialization.jsonObject(with: bytes),
          let profile = try? FakeDRMProfile(json: FakeDRMProfileFile.json(top)) else { return 0 }
    play(profile)
    return 0
}
