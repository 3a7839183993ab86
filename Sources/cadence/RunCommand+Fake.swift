import CadenceCore

/// The fake display's options (`--fake-*`, `--seed`): checked and turned into its configuration.
extension RunCommand {
    /// The fake display's timing options given on the command line (they shape only
    /// `--backend fake`; a fake DRM device takes its timing from its profile).
    func fakeDisplayTimingOptionsGiven() -> [String] {
        var used: [String] = []
        if fakeRefresh != 60 { used.append("--fake-refresh") }
        if fakeVRR != nil { used.append("--fake-vrr") }
        if fakeJitterUs != 0 { used.append("--fake-jitter-us") }
        if fakeDriftPPM != 0 { used.append("--fake-drift-ppm") }
        return used
    }

    func makeFakeConfiguration(surface: Bool) throws -> FakeDisplayConfiguration {
        let timing = fakeDisplayTimingOptionsGiven()
        if !timing.isEmpty, backend == "kms" || BackendChoice.isFakeDRM(backend) {
            let source =
                backend == "kms"
                ? "a real display has its own timing"
                : "a fake DRM device takes its timing from its profile's \"cadence\" section"
            let verb = timing.count == 1 ? "is" : "are"
            throw CLIFailure("\(timing.joined(separator: ", ")) \(verb) for --backend fake only: \(source)")
        }
        guard fakeRefresh.isFinite, fakeRefresh > 0, fakeRefresh <= 1000 else {
            throw CLIFailure("--fake-refresh must be a rate in Hz between 0 and 1000")
        }
        var c = FakeDisplayConfiguration(refreshHz: fakeRefresh, seed: seed)
        if let v = fakeVRR {
            let p = v.split(separator: ":")
            guard p.count == 2, let lo = Double(p[0]), let hi = Double(p[1]), lo > 0, hi >= lo, hi <= 1000 else {
                throw CLIFailure("--fake-vrr '\(v)' must be MIN:MAX in Hz with 0 < MIN ≤ MAX")
            }
            c.vrrRange = lo...hi
        }
        guard fakeJitterUs.isFinite, fakeJitterUs >= 0 else { throw CLIFailure("--fake-jitter-us must be ≥ 0") }
        c.jitter = Nanoseconds(fakeJitterUs * 1000)
        guard fakeDriftPPM.isFinite, abs(fakeDriftPPM) < 100_000 else {
            throw CLIFailure("--fake-drift-ppm is out of range")
        }
        c.driftPPM = fakeDriftPPM
        switch fakeClock {
        case "virtual": c.clock = .virtual
        case "wall": c.clock = .wall
        default: throw CLIFailure("--fake-clock must be virtual or wall")
        }
        if let spec = fakeSessionPause {
            for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
                let p = part.split(separator: ":", omittingEmptySubsequences: false)
                guard p.count == 2, let at = Double(p[0]), let d = Double(p[1]), at.isFinite, d.isFinite,
                    at >= 0, d > 0, at <= 86_400, d <= 86_400
                else {
                    throw CLIFailure("--fake-session-pause '\(spec)' must be AT:FOR[,…] in seconds (AT ≥ 0, FOR > 0)")
                }
                c.faults.append(
                    .sessionPaused(after: Nanoseconds((at * 1e9).rounded()), for: Nanoseconds((d * 1e9).rounded())))
            }
        }
        if surface {
            c.surfaceWidth = 1280
            c.surfaceHeight = 720
        }
        return c
    }
}
