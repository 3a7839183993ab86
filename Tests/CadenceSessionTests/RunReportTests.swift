import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// `RunReport`'s summary text and scanout line, `FakeDisplayOptions`, `RunTimingOptions` and
/// `RunPlanning`'s lines: what `cadence run` prints and refuses, as known answers.
@Suite struct RunReportTests {
    static func summary() -> RunSummary {
        var s = RunSummary(
            accounting: FrameAccounting(), backend: "kms", refreshHz: 60, vrr: nil, effectiveRateHz: 60, latency: 1,
            end: .completed)
        s.frames = 300
        s.presented = 298
        s.onTime = 296
        s.late = 2
        s.discarded = 1
        s.failed = 0
        s.unconfirmed = 1
        s.droppedRefreshes = 3
        s.dropEvents = 2
        s.hitchTimeRatio = 10
        s.onTimeErrorUs = nil
        s.rateSwitches = 2
        s.intervalMs.mean = 16.6667
        s.intervalMs.stddev = 0.5
        s.intervalMs.p50 = 16.6667
        s.intervalMs.p99 = 33.3333
        s.intervalMs.max = 50
        s.intervalRefreshes = ["3": 1, "1": 295, "2": 1]
        s.causes = ["render-late": 2]
        s.durationSeconds = 5
        s.measuredRateHz = 59.6
        return s
    }

    @Test func theSummaryTextHasOneLinePerFact() {
        let text = RunReport.summaryText(Self.summary())
        #expect(
            text.split(separator: "\n", omittingEmptySubsequences: false) == [
                "backend           kms  refresh 60.000 Hz  effective 60.000 Hz  latency 1",
                "frames            300  presented 298 (on time 296, late 2)  discarded 1  failed 0  unconfirmed 1",
                "dropped           3 refreshes in 2 events  hitch 10.000 ms/s",
                "rate switches     2",
                "interval ms       mean 16.667  stddev 0.500  p50 16.667  p99 33.333  max 50.000",
                "interval refr.    1×: 295  2×: 1  3×: 1",
                "causes            render-late 2",
                "end               completed  (5.000 s shown, 59.600 Hz measured)"
            ])
    }

    @Test func underVRRTheRangeAndTheRefreshUnitAreSaid() {
        var s = Self.summary()
        s.vrrRangeHz = [48, 144]
        s.refreshHz = 144
        s.backend = "fake"
        s.sessionGaps = 1
        s.sessionGapSeconds = 2
        s.incompleteOutputs = ["--log run.jsonl: No space left on device"]
        let lines = RunReport.summaryText(s).split(separator: "\n").map(String.init)
        #expect(
            lines[0]
                == "backend           fake display (simulator)  refresh VRR 48.000–144.000 Hz  effective 60.000 Hz  latency 1"
        )
        #expect(lines.contains("interval refr.    (of 6.944 ms) 1×: 295  2×: 1  3×: 1"))
        #expect(lines.contains("session gaps      1  (2.000 s away; no drops counted inside)"))
        #expect(lines.last == "INCOMPLETE        --log run.jsonl: No space left on device")
    }

    @Test func theSummaryJSONIsTheEncodedSummary() throws {
        let s = Self.summary()
        let json = try RunReport.summaryJSON(s)
        #expect(try JSONDecoder().decode(RunSummary.self, from: Data(json.utf8)) == s)
        #expect(json.hasPrefix("{\"backend\":\"kms\",\"causes\":{\"render-late\":2}"))
    }

    @Test func theScanoutLineOfWritebackAlone() {
        var w = WritebackSummary()
        w.captures = 3
        w.decoded = 3
        w.equal = 2
        w.mismatchedFrames = [50]
        w.timedOut = 1
        w.readMicroseconds = 300
        var v = ScanoutSummary()
        v.writeback = w
        #expect(
            RunReport.scanoutLine(v)
                == "writeback: captures 3, decoded 3, equal 2 (mismatched frames 50), timed out 1, read 100.0 µs/capture"
        )
        w.mismatchedFrames = []
        w.timedOut = 0
        w.skipped = 2
        w.captures = 0
        #expect(RunReport.writebackText(w) == "writeback: captures 0, decoded 3, equal 2, skipped 2")
    }

    @Test func theFakeDisplaysOptionsBecomeItsConfiguration() throws {
        var o = FakeDisplayOptions()
        #expect(o.timingOptionsGiven.isEmpty)
        o.vrr = "48:144"
        o.jitterUs = 50
        o.sessionPause = "1:2,3.5:0.5"
        let c = try o.configuration(backend: "fake", surface: true)
        #expect(c.vrrRange == 48...144 && c.jitter == 50_000 && c.faults.count == 2)
        #expect(c.surfaceWidth == 1280 && c.surfaceHeight == 720)
        #expect(o.timingOptionsGiven == ["--fake-vrr", "--fake-jitter-us"])
    }

    @Test func badFakeDisplayOptionsAreOneLineNamingTheOption() {
        func line(_ backend: String = "fake", _ change: (inout FakeDisplayOptions) -> Void) -> String? {
            var o = FakeDisplayOptions()
            change(&o)
            do {
                _ = try o.configuration(backend: backend, surface: false)
                return nil
            } catch {
                return String(describing: error)
            }
        }
        #expect(
            line("kms") { $0.refreshHz = 144 }
                == "--fake-refresh is for --backend fake only: a real display has its own timing")
        #expect(
            line("fake-drm:vkms") {
                $0.refreshHz = 144
                $0.driftPPM = 5
            }
                == "--fake-refresh, --fake-drift-ppm are for --backend fake only: a fake DRM device takes its timing from its profile's \"cadence\" section"
        )
        #expect(line { $0.clock = "fast" } == "--fake-clock must be virtual or wall")
        #expect(line { $0.vrr = "144:48" } == "--fake-vrr '144:48' must be MIN:MAX in Hz with 0 < MIN ≤ MAX")
        #expect(
            line { $0.sessionPause = "1:0" }
                == "--fake-session-pause '1:0' must be AT:FOR[,…] in seconds (AT ≥ 0, FOR > 0)")
        #expect(line { $0.refreshHz = 0 } == "--fake-refresh must be a rate in Hz between 0 and 1000")
    }

    @Test func theTimingOptionsBecomeTheRunsConfiguration() throws {
        var o = RunTimingOptions()
        #expect(try o.configuration(severalOutputs: false, connector: nil).duration == 5_000_000_000)
        o.durationSeconds = 0
        #expect(try o.configuration(severalOutputs: false, connector: nil).duration == nil)
        o.durationSeconds = 2
        o.minDurationMs = 34
        o.injectLate = ["100:2"]
        let c = try o.configuration(severalOutputs: false, connector: "DP-1")
        #expect(c.duration == 2_000_000_000 && c.minimumDuration == 34_000_000 && c.injectLate == [100: 2])
        o.minDurationMs = 20_000
        #expect(throws: RunSpec.Invalid("--min-duration must be 0 to 10000 ms")) {
            try o.configuration(severalOutputs: false, connector: nil)
        }
        o.minDurationMs = nil
        o.durationSeconds = -1
        #expect(throws: RunSpec.Invalid("--duration must be 0 (until stopped) to 86400 seconds")) {
            try o.configuration(severalOutputs: false, connector: nil)
        }
    }

    @Test func theLogRotationOptionsAreCheckedInOneLine() throws {
        #expect(try RunPlanning.logRotation(log: "run.jsonl", maxSize: nil, keep: nil) == nil)
        #expect(throws: RunSpec.Invalid("--log-keep needs --log-max-size (the size at which the log rotates)")) {
            try RunPlanning.logRotation(log: "run.jsonl", maxSize: nil, keep: 2)
        }
        #expect(throws: RunSpec.Invalid("--log-max-size needs --log FILE")) {
            try RunPlanning.logRotation(log: nil, maxSize: "10M", keep: nil)
        }
        #expect(
            throws: RunSpec.Invalid(
                "--log-max-size 32K is below the minimum of 64K (a log file must hold its header and many frames)")
        ) { try RunPlanning.logRotation(log: "run.jsonl", maxSize: "32K", keep: nil) }
        let r = try #require(try RunPlanning.logRotation(log: "run.jsonl", maxSize: "1M", keep: 3))
        #expect(r.maxBytes == 1 << 20 && r.keep == 3)
    }

    @Test func refusalsAreOneLineNamingTheOptions() {
        #expect(
            RunPlanning.refusalLine(
                OutputGroupRun.Refusal.injectLateTargetNotRun(target: "HDMI-A-1", outputs: ["DP-1", "eDP-1"]))
                == "--inject-late HDMI-A-1=…: HDMI-A-1 is not one of the outputs run (DP-1, eDP-1)")
        #expect(
            RunPlanning.refusalLine(DisplayChoice.Refusal.vrrOnFake)
                == "--vrr is for kms and fake-drm backends: the fake display takes --fake-vrr MIN:MAX")
        #expect(
            RunPlanning.noticeLine(.unevenRate(output: "DP-1", "50 Hz is shown unevenly"), command: "validate")
                == "cadence validate: DP-1: 50 Hz is shown unevenly")
        #expect(
            RunPlanning.noticeLine(.display(output: nil, "no DRM device"), command: "validate")
                == "cadence run: no DRM device")
        #expect(
            RunPlanning.crcRefusalLine(.unsupported(driver: "bochs-drm", path: "/sys/kernel/debug/dri/0/crtc-0/crc"))
                == "--verify crc: not supported by bochs-drm")
    }

    @Test func theSceneIsNamedOrSolid() throws {
        #expect(try RunPlanning.scene(named: "solid", hud: false) == nil)
        #expect(try RunPlanning.scene(named: "bar", hud: true) != nil)
        #expect(throws: RunSpec.Invalid("--hud needs a scene; --scene solid draws plain colours only")) {
            try RunPlanning.scene(named: "solid", hud: true)
        }
        #expect(throws: RunSpec.Invalid.self) { try RunPlanning.scene(named: "no-such-scene", hud: false) }
    }
}
