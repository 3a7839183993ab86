import EDID
import FuzzSupport

/// The EDID decoder as `cadence edid`, `list` and `validate --expect-monitor` use it: raw bytes
/// (sysfs, a DRM blob, `--fake-edid FILE`) and the hex text form (`EDID.bytes(fromHex:)`),
/// decoded, then every derived value read. Decoding never traps; whatever it reports stays in
/// the ranges the fields promise.
func exercise(_ bytes: [UInt8]) {
    guard let e = try? EDID(bytes) else { return }
    precondition(e.bytes.count % 128 == 0 && e.bytes.count <= bytes.count)
    for t in e.timings {
        let hz = t.refreshHz
        precondition(hz.isFinite && hz >= 0, "refresh \(hz)")
        _ = t.fractionalRefreshHz
        _ = t.hRateKHz
        _ = t.hTotal
        _ = t.vTotalPerField
        _ = t.source.description
    }
    _ = e.preferredTiming
    _ = e.nativeResolution
    for r in e.vrrRanges { precondition(r.minHz.isFinite && r.maxHz.isFinite) }
    _ = e.adaptiveSyncRange
    if let d = e.diagonalInches { precondition(d.isFinite && d >= 0) }
    _ = e.cta
    _ = e.displayID
    _ = e.warnings.count
}

runFuzzer { data, size in
    let raw = Array(fuzzBytes(data, size))
    exercise(raw)
    if let hex = EDID.bytes(fromHex: fuzzText(data, size)) { exercise(hex) }
    return 0
}
