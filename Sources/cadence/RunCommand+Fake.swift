import CadenceCore
import CadenceSession

/// The fake display's options (`--fake-*`, `--seed`), checked and turned into its
/// configuration by CadenceSession's `FakeDisplayOptions`.
extension RunCommand {
    /// The fake display's options as given.
    var fakeOptions: FakeDisplayOptions {
        FakeDisplayOptions(
            refreshHz: fakeRefresh, vrr: fakeVRR, jitterUs: fakeJitterUs, driftPPM: fakeDriftPPM, clock: fakeClock,
            sessionPause: fakeSessionPause, seed: seed)
    }
}
