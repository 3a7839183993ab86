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

    /// The fake display's timing options given on the command line (they shape only
    /// `--backend fake`; a fake DRM device takes its timing from its profile).
    func fakeDisplayTimingOptionsGiven() -> [String] { fakeOptions.timingOptionsGiven }

    /// The fake display's configuration (one line for a bad value).
    func makeFakeConfiguration(surface: Bool) throws -> FakeDisplayConfiguration {
        try fakeOptions.configuration(backend: backend, surface: surface)
    }
}
