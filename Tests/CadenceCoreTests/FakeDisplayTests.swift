import Testing
@testable import CadenceCore

/// Waits (on virtual time) until the next event and returns everything delivered.
private func nextEvents(_ d: FakeDisplay, within ns: Nanoseconds = 1_000_000_000) throws -> [BackendEvent] {
    var out: [BackendEvent] = []
    try d.waitForEvents(until: d.now() + ns, into: &out)
    return out
}

private func presented(_ e: [BackendEvent]) -> [(FrameID, VBlank)] {
    e.compactMap { if case let .presented(f, vb, _) = $0 { return (f, vb) } else { return nil } }
}

@Suite struct FakeDisplayTests {
    @Test func flipLatchesAtNextVBlankWithKernelStyleEvent() throws {
        let d = FakeDisplay(.init(refreshHz: 60))
        let t0 = d.now()
        try d.submit(frame: 7)
        let e = try nextEvents(d)
        let p = try #require(presented(e).first)
        #expect(p.0 == 7)
        #expect(p.1.sequence == 1_001)
        #expect(p.1.timestamp == t0 + 16_666_667)
        #expect(d.now() == p.1.timestamp)
    }

    @Test func secondFlipWhilePendingIsEBUSY() throws {
        let d = FakeDisplay(.init(refreshHz: 60))
        try d.submit(frame: 1)
        #expect(throws: BackendFailure.busy) { try d.submit(frame: 2) }
        _ = try nextEvents(d)
        try d.submit(frame: 2)  // after completion it is accepted
    }

    @Test func submitAfterVBlankShowsAtTheFollowingOne() throws {
        let d = FakeDisplay(.init(refreshHz: 144))
        let t0 = d.now()
        d.spin(until: t0 + 7_000_000)  // just past the first 144 Hz vblank (6.944 ms)
        try d.submit(frame: 1)
        let p = try #require(presented(try nextEvents(d)).first)
        #expect(p.1.sequence == 1_002)
        #expect(p.1.timestamp == t0 + Nanoseconds((2e9 / 144).rounded()))
    }

    @Test func exactGridAt5994() throws {
        let d = FakeDisplay(.init(refreshHz: 60_000.0 / 1001))
        let t0 = d.now()
        #expect(abs(d.refreshInterval - 16_683_333.33) < 0.01)
        for k in 1...1000 {
            try d.requestVBlank(after: try d.lastVBlank().sequence)
            var e: [BackendEvent] = []
            try d.waitForEvents(until: Nanoseconds.max, into: &e)
            guard case let .vblank(vb) = e.first else { Issue.record("no vblank"); return }
            #expect(vb.timestamp == t0 + Nanoseconds((Double(k) * 1e9 * 1001 / 60_000).rounded()))
        }
    }

    @Test func requestForPastVBlankIsImmediate() throws {
        let d = FakeDisplay(.init(refreshHz: 60))
        d.spin(until: d.now() + 40_000_000)
        let now = d.now()
        try d.requestVBlank(after: 1_000)
        let e = try nextEvents(d)
        #expect(e == [.vblank(VBlank(sequence: 1_002, timestamp: 1_000_000_000 + 33_333_333))])
        #expect(d.now() == now)
    }

    @Test func jitterIsBoundedAndSeeded() throws {
        func stamps(seed: UInt64) throws -> [Nanoseconds] {
            var c = FakeDisplayConfiguration(refreshHz: 60, seed: seed)
            c.jitter = 200_000
            let d = FakeDisplay(c)
            var out: [Nanoseconds] = []
            for _ in 0..<200 {
                try d.requestVBlank(after: try d.lastVBlank().sequence)
                var e: [BackendEvent] = []
                try d.waitForEvents(until: .max, into: &e)
                if case let .vblank(vb) = e[0] { out.append(vb.timestamp - d.now()) }
            }
            return out
        }
        let a = try stamps(seed: 1), b = try stamps(seed: 1), c = try stamps(seed: 2)
        #expect(a == b)
        #expect(a != c)
        #expect(a.allSatisfy { abs($0) <= 200_000 })
        #expect(Set(a).count > 100)
    }

    @Test func driftStretchesThePeriodButNotTheNominalInterval() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.driftPPM = 100
        let d = FakeDisplay(c)
        let t0 = d.now()
        d.spin(until: t0 + 10_000_000_000)
        let vb = try d.lastVBlank()
        #expect(d.refreshInterval == 1e9 / 60)
        // 600 nominal vblanks would end at exactly 10 s; with +100 ppm the 600th is 1 ms later.
        #expect(vb.sequence == 1_000 + 599)
    }

    @Test func flipLatencyPushesALateCommitToTheNextVBlank() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.flipLatency = 2_000_000
        let d = FakeDisplay(c)
        let t0 = d.now()
        d.spin(until: t0 + 15_000_000)  // 1.67 ms before the vblank: too late
        try d.submit(frame: 1)
        let p = try #require(presented(try nextEvents(d)).first)
        #expect(p.1.sequence == 1_002)
    }

    @Test func lateAndMissingEvents() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.faults = [.lateEvent(submission: 0, by: 5_000_000), .missingEvent(submission: 1)]
        let d = FakeDisplay(c)
        let t0 = d.now()
        try d.submit(frame: 1)
        var e = try nextEvents(d)
        guard case let .presented(_, vb, at) = e.first else { Issue.record("no event"); return }
        #expect(vb.timestamp == t0 + 16_666_667)
        #expect(at == vb.timestamp + 5_000_000 && d.now() == at)
        try d.submit(frame: 2)
        e = try nextEvents(d, within: 100_000_000)
        #expect(e.isEmpty)
        try d.submit(frame: 3)  // the flip itself completed: the CRTC is free
    }

    @Test func scriptedBusy() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.faults = [.busy(submission: 0)]
        let d = FakeDisplay(c)
        #expect(throws: BackendFailure.busy) { try d.submit(frame: 1) }
        try d.submit(frame: 1)
    }

    @Test func deviceGoneFailsThePendingFlipAndEverythingAfter() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.faults = [.deviceGone(afterVBlanks: 2)]
        let d = FakeDisplay(c)
        try d.submit(frame: 9)
        d.spin(until: d.now() + 20_000_000)  // vblank 1 latches frame 9
        try d.submit(frame: 10)  // vblank 2 never comes
        #expect(presented(try nextEvents(d)).map(\.0) == [9])
        let e = try nextEvents(d)
        #expect(e.contains(.failed(frame: 10, .deviceLost("fake display removed"))))
        #expect(e.contains(.failed(frame: nil, .deviceLost("fake display removed"))))
        #expect(throws: BackendFailure.self) { try d.submit(frame: 11) }
        #expect(throws: BackendFailure.self) { _ = try nextEvents(d) }
    }

    @Test func modeChangeSwitchesTheGrid() throws {
        var c = FakeDisplayConfiguration(refreshHz: 60)
        c.faults = [.modeChange(afterVBlanks: 3, refreshHz: 120)]
        let d = FakeDisplay(c)
        let t0 = d.now()
        d.spin(until: t0 + 50_000_001)
        var e: [BackendEvent] = []
        try d.waitForEvents(until: d.now(), into: &e)
        #expect(e == [.failed(frame: nil, .modeChanged)])
        #expect(d.refreshInterval == 1e9 / 120)
        try d.submit(frame: 1)
        let p = try #require(presented(try nextEvents(d)).first)
        #expect(p.1.timestamp == t0 + 50_000_000 + 8_333_333)
    }

    @Test func vrrFlipStartsRefreshAndRepeatsAtMinimum() throws {
        let d = FakeDisplay(.init(refreshHz: 144, vrrRange: 48...144))
        let t0 = d.now()
        d.spin(until: t0 + 10_000_000)
        try d.submit(frame: 1)
        var p = try #require(presented(try nextEvents(d)).first)
        #expect(p.1.timestamp == t0 + 10_000_000)  // no grid: flips as submitted
        try d.submit(frame: 2)  // immediately: must wait the 1/144 s minimum
        p = try #require(presented(try nextEvents(d)).first)
        #expect(p.1.timestamp == t0 + 10_000_000 + 6_944_444)
        // No flip for a while: the panel repeats every 1/48 s.
        let before = try d.lastVBlank()
        d.spin(until: d.now() + 100_000_000)
        let after = try d.lastVBlank()
        #expect(after.sequence - before.sequence == 4)
    }

    @Test func fakeIsDeterministic() throws {
        func run() throws -> [BackendEvent] {
            var c = FakeDisplayConfiguration(refreshHz: 120, seed: 42)
            c.jitter = 50_000
            c.driftPPM = -30
            let d = FakeDisplay(c)
            var all: [BackendEvent] = []
            for f in 0..<50 {
                try d.submit(frame: FrameID(f))
                try d.waitForEvents(until: .max, into: &all)
                d.spin(until: d.now() + Nanoseconds(f % 3) * 5_000_000)
            }
            return all
        }
        #expect(try run() == run())
    }
}
