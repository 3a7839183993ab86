import CadenceCore
import FuzzSupport

/// `--rate MIN:MAX[:PREFERRED]`: parse, choose the effective rate on fixed and VRR displays,
/// and pace a few frames with it on the fake display (virtual time), as `cadence run --rate`.
/// A parsed range must validate and give a finite positive rate.
runFuzzer { data, size in
    guard let range = try? FrameRateRange(parsing: fuzzText(data, size)) else { return 0 }
    precondition((try? range.validate()) != nil)
    for refresh in [59.94, 60, 144, 240] {
        let r = EffectiveRate.select(for: range, refreshHz: refresh)
        precondition(r.hz.isFinite && r.hz > 0 && r.refreshesPerFrame >= 1)
    }
    for vrr in [48.0...144.0, 1.0...1000.0] {
        let r = EffectiveRate.select(for: range, refreshHz: vrr.upperBound, vrr: vrr)
        precondition(r.hz.isFinite && r.hz > 0 && r.refreshesPerFrame >= 1)
    }
    var c = RunConfiguration()
    c.range = range
    c.frames = 3
    for vrr in [nil, 48.0...144.0] {
        guard let run = try? PacingRun(backend: FakeDisplay(FakeDisplayConfiguration(refreshHz: 60, vrrRange: vrr)), configuration: c),
              let s = try? run.run() else { preconditionFailure("a valid range must run") }
        precondition(s.frames == 3)
    }
    return 0
}
