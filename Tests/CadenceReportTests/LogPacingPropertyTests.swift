import CadenceCore
import CadenceReport
import Foundation
import PropertyBased
import Testing

/// Random scenarios logged as `cadence run --log` does (``RunLogWriter``, with `--log-max-size`
/// rotation in some): `report` of the log (``ReportChart``'s and ``LogAnalysis``'s summary)
/// equals the live summary, and `replay` says equal.
@Suite struct LogPacingPropertyTests {
    /// Replay discrepancies are tolerated here and pinned, exactly, by the disabled
    /// `replayOfEveryLogIsExact` (bugs): content on a drifting or jittery display, a link
    /// slower than the refresh at latency 3 with late frames, and rotated logs are not
    /// replayed (their reports are checked), and the hitch time ratio may differ by a
    /// relative 10⁻⁶.
    @Test func reportAndReplayOfTheLogEqualTheRun() async {
        await check(count: 250, exact: false)
    }

    /// Replay equal, exactly, for every scenario. Three ways it is not:
    ///
    /// 1. Content on a drifting, jittery display: a frame whose time is within ε of a vblank
    ///    can be aimed by the replay at another vblank than the run's; it is then shown (at the
    ///    recorded vblank) a refresh before its replayed target and counted on time with an
    ///    on-time error of a whole refresh. 60 Hz, latency 1, 60 frames, content 24 Hz,
    ///    −500 ppm, jitter 28 µs, seed 0: frame 2 recorded target sequence 1006, on time at
    ///    1006; replayed target 1007, "on time" at 1006; onTimeErrorUs max 16666.667 (replayed)
    ///    vs 49.822 µs, 0 divergences. It can change fates: latency 2, content 24 Hz,
    ///    −500 ppm, jitter 45 µs, seed 748483: 4 dropped refreshes in 2 events (flip-late) in
    ///    the replay, none in the run, 1 divergence.
    /// 2. A later file of a rotated log: 60 Hz, latency 2, 60 frames, late 3:3 and 10:1, 8 KiB
    ///    files (11 files): file 3 replays with onTimeErrorUs p99 0.00096 µs vs 0.001 recorded.
    ///    A file that ends just before a late frame: 60 Hz, latency 2, 60 frames, late 18:4,
    ///    8 KiB files (11 files, 5 frames each): file 2 (frames 13–17) replays frame 17
    ///    flip-late (causes {flip-late: 1} vs {}), durationSeconds 0.05 vs 0.066666667.
    /// 3. A slow link with a late frame: 60 Hz, range 0:0:1.2 (1.2 Hz, 50 refreshes a frame),
    ///    latency 2, 24 frames, late 3:1: hitchTimeRatio 0.8688097480602747 (run) vs
    ///    0.8688096959316908 (replay): the late frame's hitch is ~1 µs shorter in the replay
    ///    (same durationSeconds; not at latency 1 or 3, nor at 5 Hz and above).
    /// 4. Latency 3, a link slower than the refresh (n ≥ 2 refreshes a frame) and a late
    ///    frame: the replay invents a drop of about n refreshes more, blamed flip-late and
    ///    scheduler-late, with 0 divergences. Shrunk: 60 Hz, range 0:0:2.1 (29 refreshes a
    ///    frame), latency 3, 41 frames, late 4:1: run 1 dropped refresh, render-late (as the
    ///    model); replay 30, causes {flip-late: 1, scheduler-late: 1}. 60 Hz, 30 frames, late
    ///    4:K at latency 3: n 5 (K 1, 3), 6 (K 3), 10 (K 1), 12, 15 (K 3), 20, 29 (K 1, 3),
    ///    55 (K 1) all so; n 2, 4, 8 give on-time error p99 0.00072 vs 0 µs instead; n 1 and
    ///    latency 1–2 are exact (but for 3.).
    @Test(.disabled("bug: replay is not exact: content on a drifting jittery display (other targets, even other fates), later rotated files (on-time error p99 1 ns off; a file ending just before a late frame replays its last frame flip-late), a slow link with a late frame (hitch 1 µs off at latency 2; at latency 3 about n more dropped refreshes replayed, flip-late + scheduler-late)"))
    func replayOfEveryLogIsExact() async throws {
        // 4.'s shrunk counterexample.
        var c = RunConfiguration()
        c.frames = 41
        c.latency = 3
        c.range = FrameRateRange(minimum: 0, maximum: 0, preferred: 2.1)
        c.injectLate = [4: 1]
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, live) = try recordRun(c, in: dir)
        #expect(live.droppedRefreshes == 1 && live.causes == ["render-late": 1])
        let replay = try Replay.run(try RunLog.read(path: path))
        #expect(replay.differences.isEmpty, "\(replay.differences)")
        await check(count: 300, exact: true)
    }

    func check(count: Int, exact: Bool) async {
        await propertyCheck(count: count, input: PacingGen.knobs(frames: 60...160), Gen.int(in: 0...3)) { k, rotate in
            let s = PacingGen.scenario(k, noisy: k.noise.0 % 2 == 1, jitteryContent: true)
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = dir + "/run.jsonl"
            // Rotation in a quarter of the scenarios: a file every 8–24 KiB (a few dozen frames).
            let rotation = rotate == 3 ? LogRotation(maxBytes: Int64(8 << 10) * Int64(1 + k.noise.3 % 3), keep: 1_000) : nil
            let writer = try RunLogWriter(path: path, rotation: rotation)
            let display = FakeDisplay(s.fakeDisplay)
            let config = s.runConfiguration()
            let run = try PacingRun(backend: display, configuration: config)
            try writer.begin(RunLogHeader(backend: display, configuration: config))
            var failures: [String] = []
            run.onFrame = { r in
                do { try writer.write(FrameRecord(r)) } catch { failures.append("\(error)") }
            }
            run.onRateSwitch = { try? writer.write($0) }
            run.onSessionChange = { try? writer.write($0) }
            let live = try run.run()
            try writer.end(live)
            #expect(failures.isEmpty, "\(s): \(failures.prefix(2))")

            let files = (0...1_000).reversed().map { LogRotation.path(path, age: $0) }.filter { FileManager.default.fileExists(atPath: $0) }
            let logs = try files.map { try RunLog.read(path: $0) }
            guard let last = logs.last else {
                Issue.record("\(s): no log")
                return
            }
            #expect(last.end?.summary == live, "\(s): the end line's summary")
            if logs.count == 1 {
                #expect(LogAnalysis.summary(of: logs[0]) == live, "\(s): report's summary differs from the live one")
                #expect(ReportChart(log: logs[0], width: 800, height: 480).summary == live, "\(s): report's chart summary differs")
            } else {
                // Each file is reported on its own frames; together they are the run's.
                let parts = logs.map { LogAnalysis.summary(of: $0) }
                #expect(parts.map(\.frames).reduce(0, +) == live.frames, "\(s), rotated: frames")
                #expect(parts.map(\.presented).reduce(0, +) == live.presented, "\(s), rotated: presented")
                #expect(parts.map(\.droppedRefreshes).reduce(0, +) == live.droppedRefreshes, "\(s), rotated: dropped refreshes")
                #expect(parts.map(\.dropEvents).reduce(0, +) == live.dropEvents, "\(s), rotated: drop events")
            }
            let slowLinkLate = s.latency == 3 && !s.injectLate.isEmpty && ReferenceModel.refreshesPerFrame(for: s.range, refreshHz: s.refreshHz) > 1
            if !exact && ((s.isNoisy && s.mode.isContent) || slowLinkLate || logs.count > 1) { return }
            for (i, log) in logs.enumerated() {
                let replay = try Replay.run(log)
                let differences = exact ? replay.differences : replay.differences.filter { !Self.nearlyEqualRatio($0) }
                #expect(differences.isEmpty && replay.divergences == 0,
                        "\(s)\(logs.count > 1 ? ", rotated into \(logs.count) files: file \(i + 1)" : ""): replay differs: \(replay.differences.prefix(3)), \(replay.divergences) divergences")
            }
        }
    }

    /// "hitchTimeRatio: A vs B" with A and B within a relative 10⁻⁶.
    static func nearlyEqualRatio(_ difference: String) -> Bool {
        guard difference.hasPrefix("hitchTimeRatio: ") else { return false }
        let values = difference.dropFirst("hitchTimeRatio: ".count).components(separatedBy: " vs ").compactMap { Double($0) }
        guard values.count == 2 else { return false }
        return abs(values[0] - values[1]) <= 1e-6 * max(abs(values[0]), abs(values[1]))
    }
}
