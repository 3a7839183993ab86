import Testing
import CadenceCore
import DRM
@testable import KMSDisplay

/// The presentation contracts on the KMS path: PacingRun over KMSDisplay over the fake DRM
/// device (flip events carry whole microseconds, vblank queries nanoseconds; 1 ms commit margin
/// as `cadence run` uses on KMS).
@Suite struct KMSPacingTests {
    /// The same hand-computed table as the fake display's (ε = 1 µs: the fake DRM device's
    /// timestamps sit on its grid, truncated to the microsecond in flip events).
    static let table: [(ms: Double, at60: Int, at144: Int)] = [
        (16.0, 1, 3), (16.7, 2, 3), (17, 2, 3), (18, 2, 3), (33.4, 3, 5), (34, 3, 5),
    ]

    /// A vkms-like fake DRM device that also lists 640x480 at exactly 60 and 144 Hz
    /// (800×500 total: 24 000 and 57 600 kHz).
    static func device() -> FakeDRMDevice {
        let fake = FakeDRMDevice()
        for clock: UInt32 in [24_000, 57_600] {
            fake.connectors[0].modes.append(ModeInfo(clock: clock, hdisplay: 640, hsyncStart: 656, hsyncEnd: 752, htotal: 800,
                                                     vdisplay: 480, vsyncStart: 490, vsyncEnd: 492, vtotal: 500,
                                                     flags: [.nhsync, .nvsync], type: [.driver]))
        }
        return fake
    }

    func run(hz: Int, d: Nanoseconds, frames: Int = 30) throws -> (RunSummary, [FrameReport], PacingRun) {
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: Self.device()), mode: "640x480@\(hz)")
        #expect(abs(display.refreshInterval - 1e9 / Double(hz)) < 1e-3)
        var c = RunConfiguration()
        c.frames = frames
        c.minimumDuration = d
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c)
        var out: [FrameReport] = []
        run.onFrame = { out.append($0) }
        let s = try run.run()
        try display.close()
        return (s, out, run)
    }

    /// Issue 21, finding 1, on the KMS path: a render K refreshes late at latency 2–3 kept the
    /// loop from the flip events past the completion timeout; the shown flip was logged
    /// unconfirmed with an invented flip-late drop. Exactly K refreshes in one event now.
    @Test(arguments: [1, 2, 3], [60, 144])
    func injectedLatenessIsExactAtEveryLatency(latency: Int, hz: Int) throws {
        for k in [1, 4, 6] {
            let display = try KMSDisplay.open(on: try DRMDevice.open(fake: Self.device()), mode: "640x480@\(hz)")
            var c = RunConfiguration()
            c.frames = 150
            c.latency = latency
            c.injectLate = [100: k]
            c.commitMargin = 1_000_000
            let run = try PacingRun(backend: display, configuration: c)
            let s = try run.run()
            try display.close()
            let what = "latency \(latency) (effective \(s.latency)), \(hz) Hz, K \(k)"
            #expect(s.droppedRefreshes == k && s.dropEvents == 1, "\(what): \(s.droppedRefreshes) in \(s.dropEvents)")
            #expect(s.causes == ["render-late": 1] && s.unconfirmed == 0 && s.presented == 150, "\(what): \(s.causes)")
        }
    }

    /// Rendering work on KMS (`--inject-late`, `--render-cost`) sleeps and holds the CPU only for
    /// its last millisecond: at the edges, a span shorter than that tail is all busy wait, and a
    /// span just longer sleeps the difference. A frame injected 3 refreshes late at latency 1
    /// sleeps all of its lateness but that millisecond and still drops exactly 3 refreshes (the
    /// cards VM check: a 50 ms busy wait on one vCPU made the other card drop refreshes).
    @Test func renderingWorkSleepsAllButItsLastMillisecond() throws {
        let tail = KMSDisplay.spinTail
        let cases: [(span: Nanoseconds, slept: Int64, spun: Int64)] = [
            (tail / 2, 0, tail / 2), (tail, 0, tail), (tail + 1, 1, tail), (20_000_000, 20_000_000 - tail, tail)
        ]
        for (span, slept, spun) in cases {
            let fake = Self.device()
            let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "640x480@60")
            display.spin(until: display.now() &+ span)
            let what = "span \(span): slept \(fake.sleptNanoseconds), spun \(fake.busyWaitNanoseconds)"
            #expect(fake.sleptNanoseconds == slept && fake.busyWaitNanoseconds == spun, "\(what)")
            try display.close()
        }
        let fake = Self.device()
        let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "640x480@60")
        var c = RunConfiguration()
        c.frames = 150
        c.injectLate = [100: 3]
        c.commitMargin = 1_000_000
        let run = try PacingRun(backend: display, configuration: c)
        let s = try run.run()
        try display.close()
        #expect(s.droppedRefreshes == 3 && s.dropEvents == 1 && s.causes == ["render-late": 1], "\(s.causes)")
        #expect(fake.busyWaitNanoseconds == tail, "spun \(fake.busyWaitNanoseconds) ns")
        let asleep = Double(fake.sleptNanoseconds)
        #expect(asleep >= 2.5 * display.refreshInterval - Double(tail), "slept \(asleep) ns")
    }

    /// Issue 21, finding 3, on the KMS path: 24/25/30 fps content on a 60 Hz mode whose real
    /// clock is off by ±200 / ±500 ppm, with and without 50 µs of timestamp jitter, for 10 minutes
    /// of virtual time: 0 dropped refreshes (the fake DRM device's `refreshOverrideHz` and
    /// `vblankJitterNs`; flip timestamps in whole microseconds).
    @Test(arguments: [0, 50_000] as [Int64], [24.0, 25, 30])
    func contentOnADriftingJitteryPanelDropsNothing(jitter: Int64, content: Double) throws {
        for ppm in [0.0, 200, -200, 500, -500] {
            let fake = Self.device()
            fake.refreshOverrideHz = 60 / (1 + ppm / 1e6)
            fake.vblankJitterNs = jitter
            fake.jitterSeed = 11
            let display = try KMSDisplay.open(on: try DRMDevice.open(fake: fake), mode: "640x480@60")
            var c = RunConfiguration()
            c.duration = 600_000_000_000
            c.contentRate = content
            c.commitMargin = 1_000_000
            let s = try PacingRun(backend: display, configuration: c).run()
            try display.close()
            let what = "\(content) fps, \(ppm) ppm, jitter \(jitter / 1000) µs"
            #expect(s.droppedRefreshes == 0 && s.dropEvents == 0, "\(what): \(s.droppedRefreshes) in \(s.dropEvents), \(s.causes)")
            #expect(s.presented == s.frames && s.frames >= Int(600 * content), "\(what): \(s.presented) of \(s.frames)")
        }
    }

    @Test(arguments: [60, 144])
    func minimumDurationTableHolds(hz: Int) throws {
        for row in Self.table {
            let d = Nanoseconds((row.ms * 1e6).rounded())
            let (s, out, run) = try run(hz: hz, d: d)
            let n = hz == 60 ? row.at60 : row.at144
            let eps = run.pacer.timestampUncertainty
            #expect(eps >= 1_000 && eps <= 1_001, "\(row.ms) ms at \(hz) Hz: ε \(eps)")
            #expect(s.presented == 30 && s.droppedRefreshes == 0, "\(row.ms) ms at \(hz) Hz")
            #expect(s.intervalRefreshes == ["\(n)": 29], "\(row.ms) ms at \(hz) Hz")
            // Flip timestamps are whole microseconds: an interval is known to ±1 µs.
            #expect(out.dropFirst().allSatisfy { $0.interval >= d - eps - 1_000 }, "\(row.ms) ms at \(hz) Hz")
        }
    }

    @Test(arguments: [60, 144])
    func justAboveOneRefresh(hz: Int) throws {
        let period = Nanoseconds((1e9 / Double(hz)).rounded(.up))
        let (a, _, _) = try run(hz: hz, d: period + 5_000)
        #expect(a.intervalRefreshes == ["2": 29])
        let (b, _, _) = try run(hz: hz, d: period + 500)
        #expect(b.intervalRefreshes == ["1": 29])
    }

    /// The copy into the scanout buffer is timed on KMS too (the fake device's is instant).
    @Test func copyEndIsRecorded() throws {
        let (_, out, _) = try run(hz: 60, d: 0, frames: 5)
        #expect(out.allSatisfy { $0.copyEnd >= $0.renderEnd && $0.copyEnd <= $0.commitTime })
    }
}

/// Issue 21, finding 5: the display-link contract as CADisplayLink writes it, on the fake display
/// and on the KMS code over the fake DRM device (1 ms commit margin), at latency 1–3 and at 60,
/// 30 and 20 Hz links on a 60 Hz mode: `duration` is one refresh (1 / the display's maximum
/// rate), 1 / (targetTimestamp − timestamp) is the link's effective rate within 0.1 %, the frame
/// is shown `latency` frames after `timestamp`, and the deadline is that minus the margin. (With
/// the margin inside targetTimestamp, 60 Hz on KMS read 63.8 Hz at latency 1 and 30 at 2.)
@Suite struct DisplayLinkContractTests {
    func updates(_ backend: any DisplayBackend, margin: Nanoseconds, latency: Int, hz: Double) throws -> [DisplayLinkUpdate] {
        let p = try FramePacer(backend: backend)
        p.commitMargin = margin
        var out: [DisplayLinkUpdate] = []
        var n = 0
        let link = DisplayLink(preferredFrameRateRange: FrameRateRange(minimum: hz, maximum: hz, preferred: hz), preferredFrameLatency: latency) { [weak p] u in
            out.append(u)
            let t = backend.now()
            _ = try? p?.present(update: u, frameIndex: n, renderStart: t, renderEnd: t)
            n += 1
        }
        p.add(link)
        let end = p.now() + 1_000_000_000
        while p.now() < end && p.deviceLost == nil { try p.runOnce(until: end) }
        return out
    }

    @Test(arguments: [1, 2, 3], [60.0, 30, 20])
    func timestampsMeanWhatCADisplayLinkSays(latency: Int, hz: Double) throws {
        let kms = try KMSDisplay.open(on: try DRMDevice.open(fake: KMSPacingTests.device()), mode: "640x480@60")
        defer { try? kms.close() }
        for (name, backend, margin) in [("fake", FakeDisplay(.init(refreshHz: 60)) as any DisplayBackend, Nanoseconds(0)),
                                        ("fake DRM", kms, 1_000_000)] {
            let us = try updates(backend, margin: margin, latency: latency, hz: hz)
            #expect(us.count >= Int(hz) - 3, "\(name)")
            let refresh = backend.refreshInterval
            for u in us.dropFirst() {
                let what = "\(name), latency \(u.latency), \(hz) Hz"
                #expect(abs(Double(u.duration.components.attoseconds) / 1e9 - refresh) <= 1, "\(what): duration \(u.duration)")
                let frame = u.timestamp.duration(to: u.targetTimestamp)
                let rate = 1e18 / Double(frame.components.attoseconds)
                #expect(abs(rate / u.rate.hz - 1) <= 0.001, "\(what): 1/(target − timestamp) = \(rate) Hz")
                let ahead = u.timestamp.duration(to: u.targetPresentationTimestamp)
                #expect(abs(Double(ahead.components.attoseconds) / 1e9 - Double(u.latency) * 1e9 / u.rate.hz) <= 2, "\(what): presentation \(ahead) after timestamp")
                #expect(u.deadline.duration(to: u.targetPresentationTimestamp) == .nanoseconds(margin), "\(what)")
                if u.latency == 1 { #expect(u.targetTimestamp == u.targetPresentationTimestamp, "\(what)") }
            }
        }
    }
}
