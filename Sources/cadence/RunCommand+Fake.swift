import CadenceCore
import CadenceSession

/// The fake display's options (`--fake-*`, `--seed`), checked and turned into its
/// configuration by CadenceSession's `FakeDisplayOptions`.
extension RunCommand {
    /// The fake display's options as given.
    var fakeOptions: FakeDisplayOptions {
        var o = FakeDisplayOptions()
        o.refreshHz = fakeRefresh
        o.vrr = fakeVRR
        o.jitterUs = fakeJitterUs
        o.driftPPM = fakeDriftPPM
        o.clock = fakeClock
        o.sessionPause = fakeSessionPause
        o.seed = seed
        return o
    }
}
