import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import KMSDisplay
import PropertyBased
import Testing

/// Issue 21's "every log reproduces its run", over the session library as `cadence run --log
/// --summary` drives it (``OutputGroupPlan``, ``SessionSinks``): random runs on every display
/// a log can come from — the fake display (fixed, VRR, without a vblank interrupt, with a seat
/// session paused, with a stalled client) and KMS over the fake DRM device playing each shipped
/// profile (vkms, bochs and virtio-gpu without vblank, amdgpu-vrr fixed and VRR) — at latency
/// 1–3, with link rates, minimum durations, content rates and injected lateness, the log
/// rotated in a third of them. For each: `report` of the log (all its files as one run) equals
/// the summary file field for field, the log's end line says the same, and `replay` of every
/// file says equal.
///
/// `LogPacingPropertyTests` checks the same on the fake display alone, below the session
/// library; these displays and faults are where findings 9–11 were (replay of a bochs log,
/// rotated VRR logs, a session gap in the report's rate).
@Suite struct SessionLogPropertyTests {
    /// One random run: where it runs and what it asks for.
    struct Case: CustomStringConvertible, Sendable {
        var display: Int
        var scenario = PacingScenario()
        var rotateBytes: Int64? = nil
        var vrrHz: Double = 0
        var pause: (after: Nanoseconds, for: Nanoseconds) = (0, 0)
        var stall: (at: Int, by: Nanoseconds) = (0, 0)

        static let displays = [
            "fake", "fake VRR 48–144", "fake without vblank", "fake with a session pause", "fake with a stall",
            "fake-drm:vkms", "fake-drm:bochs", "fake-drm:virtio-gpu", "fake-drm:amdgpu-vrr", "fake-drm:amdgpu-vrr VRR"
        ]
        var name: String { Self.displays[display] }
        var isVRR: Bool { name.hasSuffix("VRR") || name.contains("VRR 48") }

        var description: String {
            var s = "\(name), \(scenario.refreshHz) Hz, latency \(scenario.latency), \(scenario.frames) frames, "
            s += isVRR ? "rate 0:144:\(vrrHz), \(scenario.mode)" : "\(scenario.mode), range \(scenario.range)"
            if !scenario.injectLate.isEmpty { s += ", late \(scenario.injectLate.sorted { $0.key < $1.key })" }
            if name.hasSuffix("pause") { s += ", paused after \(pause.after) ns for \(pause.for) ns" }
            if name.hasSuffix("stall") { s += ", stalled at vblank \(stall.at) by \(stall.by) ns" }
            if let b = rotateBytes { s += ", rotated every \(b) bytes" }
            return s
        }

        /// The plan `cadence run --log DIR/run.jsonl --summary DIR/summary.json` makes.
        func plan(in dir: String) -> OutputGroupPlan {
            var files = SessionOutputs()
            files.log = dir + "/run.jsonl"
            files.summary = dir + "/summary.json"
            files.quiet = true
            files.logRotation = rotateBytes.map { LogRotation(maxBytes: $0, keep: 1_000) }
            var config = scenario.runConfiguration()
            if isVRR { config.range = FrameRateRange(minimum: 0, maximum: 144, preferred: vrrHz) }
            let backend: DisplayChoice.Backend =
                name.hasPrefix("fake-drm:")
                ? .fakeDRM(profiles: String(name.dropFirst("fake-drm:".count).prefix { $0 != " " })) : .fake
            var fake = FakeDisplayConfiguration(refreshHz: scenario.refreshHz)
            switch name {
            case "fake VRR 48–144":
                fake.refreshHz = 144
                fake.vrrRange = 48...144
            case "fake without vblank":
                fake.hasHardwareVBlank = false
                fake.flipLatency = 1_000_000
            case "fake with a session pause": fake.faults = [.sessionPaused(after: pause.after, for: pause.for)]
            case "fake with a stall": fake.faults = [.stall(atVBlank: stall.at, by: stall.by)]
            default: break
            }
            return OutputGroupPlan(
                backend: backend, fake: fake, vrr: name.hasPrefix("fake-drm:amdgpu-vrr") ? (isVRR ? .on : .off) : nil,
                configuration: config,
                sinks: { _ in try SessionSinks(files: files, notice: { _ in }) })
        }
    }

    static func cases() -> Generator<Case, some SendableSequenceType> {
        zip(
            PacingGen.knobs(frames: 60...160), Gen.int(in: 0...9), Gen.int(in: 0...5), Gen.int(in: 300...14_400),
            zip(Gen.int(in: 200...1_500), Gen.int(in: 100...2_000), Gen.int(in: 5...100), Gen.int(in: 1...120))
        ).map { k, display, rotate, vrr, faults in
            let refresh: [Double] =
                switch display {
                case 5: [60.0038]
                case 6, 7: [75]
                case 8, 9: [144]
                case 1: [144]
                default: PacingGen.refreshes
                }
            return Case(
                display: display, scenario: PacingGen.scenario(k, refreshes: refresh, noisy: false),
                rotateBytes: rotate >= 4 ? Int64(8 << 10) * Int64(rotate - 3) : nil, vrrHz: Double(vrr) / 100,
                pause: (Nanoseconds(faults.0) * 1_000_000, Nanoseconds(faults.1) * 1_000_000),
                stall: (faults.2, Nanoseconds(faults.3) * 1_000_000))
        }
    }

    /// Runs `c` and returns what its log does not reproduce (empty: every check holds).
    static func check(_ c: Case, replay: Bool = true) throws -> [String] {
        try run(c) { dir in try check(c, in: dir, replay: replay) }
    }

    /// Runs `c` with its files in a temporary folder, then `body` with the folder (removed after).
    static func run<T>(_ c: Case, _ body: (_ dir: String) throws -> T) throws -> T {
        let dir = NSTemporaryDirectory() + "session-log-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let group = try OutputGroupRun.open(c.plan(in: dir), notice: { _ in })
        _ = try group.run()
        group.close()
        return try body(dir)
    }

    /// What the files `c` wrote in `dir` do not reproduce.
    private static func check(_ c: Case, in dir: String, replay: Bool) throws -> [String] {
        var wrong: [String] = []
        let summaryData = try Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))
        let live = try JSONDecoder().decode(RunSummary.self, from: summaryData)
        let path = dir + "/run.jsonl"
        let files = (0...1_000).reversed().map { LogRotation.path(path, age: $0) }
            .filter { FileManager.default.fileExists(atPath: $0) }
        if c.rotateBytes == nil && files.count != 1 { wrong.append("\(files.count) files without rotation") }
        let report = try LogReport.read(files, client: nil, allowPartialLastLine: false, width: 800, height: 480)
        if report.chart.summary != live {
            wrong.append("report differs from the summary file: \(Self.differences(report.chart.summary, live))")
        }
        if let end = try RunLog.read(path: files.last!).end?.summary, end != live {
            wrong.append("the log's end line differs from the summary file: \(Self.differences(end, live))")
        }
        for (i, file) in files.enumerated() where replay {
            let replay = try LogReplay.run(path: file, allowPartialLastLine: false, logOut: nil)
            if !replay.isEqual || replay.divergences != 0 {
                wrong.append(
                    "replay of file \(i + 1) of \(files.count) differs: \(replay.differences.prefix(3)), \(replay.divergences) divergences"
                )
            }
        }
        return wrong
    }

    /// Runs `c`, whose replay is a known issue: every difference is one `allowed` accepts (the
    /// report is right, the replay differs only as described) and there is one.
    static func expectKnownReplayIssue(_ c: Case, _ issue: Comment, allowed: (String) -> Bool) throws {
        let wrong = try check(c)
        let described = wrong.allSatisfy(allowed)
        #expect(described, "\(wrong)")
        withKnownIssue(issue) {
            #expect(wrong.isEmpty, "\(wrong)")
        }
    }

    /// The fields of two summaries that differ, as `name: a vs b`.
    static func differences(_ a: RunSummary, _ b: RunSummary) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let x = try? JSONSerialization.jsonObject(with: encoder.encode(a)) as? [String: Any],
            let y = try? JSONSerialization.jsonObject(with: encoder.encode(b)) as? [String: Any]
        else { return "?" }
        return Set(x.keys).union(y.keys).sorted().compactMap { k in
            let u = x[k].map(Self.text) ?? "-", v = y[k].map(Self.text) ?? "-"
            return u == v ? nil : "\(k): \(u) vs \(v)"
        }.joined(separator: ", ")
    }

    /// A JSON value as sorted JSON text.
    static func text(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
        else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The configurations whose replay is one of the known issues below (their report is still
    /// checked).
    static func replayIsAKnownIssue(_ c: Case) -> Bool {
        // A rotated VRR log with a minimum duration: a later file's first carried frame may be
        // aimed from its predecessor's prediction, not in the file, further than a fresh link
        // aims it (`aRotatedKMSVRRLogWithAMinimumDurationKeepsItsTargets`, whose whole-µs flips
        // show it in the on-time error, and, at latency 3 with a late frame,
        // `aRotatedVRRLogAtLatency3WithAMinimumDurationAndALateFrameKeepsItsCause`).
        if c.isVRR && c.rotateBytes != nil, case .minimumDuration = c.scenario.mode {
            if c.name == "fake-drm:amdgpu-vrr VRR" { return true }
            if c.scenario.latency == 3 && !c.scenario.injectLate.isEmpty { return true }
        }
        // A stall in a rotated log: a later file's replay starts without a frame the stall left
        // in the run's pipeline (`aRotatedLogAfterAStallAtLatency3ReplaysExactly`).
        if c.name == "fake with a stall" && c.rotateBytes != nil { return true }
        return false
    }

    /// 150 generated configurations, the same ones in every run (seeds 0–149): a landing CI
    /// does not fail on a configuration nobody has seen yet. `CADENCE_EXPLORE=1` runs
    /// ``randomConfigurations()`` instead.
    @Test func theLogOfEveryRunReportsAndReplaysAsTheRun() throws {
        for seed in 0..<150 {
            var rng = Xoshiro(seed: (0xCADE, 0x1065, 0x21, UInt64(seed)))
            let c = Self.cases().run(using: &rng)
            let wrong = try Self.check(c, replay: !Self.replayIsAKnownIssue(c))
            #expect(wrong.isEmpty, "seed \(seed), \(c): \(wrong.joined(separator: "; "))")
        }
    }

    /// Random configurations, shrunk when one fails (`CADENCE_EXPLORE=1 swift test --filter
    /// randomConfigurations`): 600–700 at a time found the six issues below, about one in a few
    /// hundred configurations before they were set aside, and later runs found more; those not
    /// fixed yet are ``replayIsAKnownIssue(_:)``'s, each with a pinned known-issue test below.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CADENCE_EXPLORE"] != nil))
    func randomConfigurations() async {
        await propertyCheck(count: 700, input: Self.cases()) { c in
            let wrong = try Self.check(c, replay: !Self.replayIsAKnownIssue(c))
            #expect(wrong.isEmpty, "\(c): \(wrong.joined(separator: "; "))")
        }
    }

    /// The property's counterexamples, shrunk, each fixed:
    /// 1. bochs, latency 2 (and 3), 60 frames: the replay put software vblank 1 on the line
    ///    between the first callback and completion 2 (13.834 ms), where the run stepped it from
    ///    the start by the nominal refresh (13.334 ms): on-time error max 999.146 vs 999.719 µs.
    /// 2. vkms, latency 3, 60 frames: `report` said latency 3, the run's summary 2 (3 asked of a
    ///    display holding 1 finished frame).
    /// 3. The fake display, 1.8 Hz, 36 frames, a session paused 534 ms in for 100 ms, a file
    ///    every 8 KiB: the first file replayed without its gap (measuredRateHz 1.607 vs 1.818;
    ///    with the CLI, `run --frames 900 --fake-session-pause 1.6:1 --log-max-size 64K`: 38.6
    ///    vs 60.0 Hz).
    @Test(arguments: [1, 2, 3])
    func foundByTheProperty(_ n: Int) throws {
        var c = Case(display: 0)
        c.scenario.frames = 60
        switch n {
        case 1:
            c.display = 6
            c.scenario.refreshHz = 75
            c.scenario.latency = 2
        case 2:
            c.display = 5
            c.scenario.latency = 3
        default:
            c.display = 3
            c.scenario.frames = 36
            c.scenario.range = FrameRateRange(minimum: 1.8, maximum: 1.8, preferred: 1.8)
            c.pause = (534_000_000, 100_000_000)
            c.rotateBytes = 8 << 10
        }
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// A KMS VRR run's log says where the panel's last refresh before the run was: KMSDisplay's
    /// second probe flip (it learns the panel's response), tens of µs before the first callback,
    /// the vblank the link counts frame 0 from. Replayed from it, the log replays equal; from the
    /// first callback (the field removed, as in older logs), the frames are aimed that much
    /// later: 4 of the property's 150 runs differed before the field, this one (seed 19: minimum
    /// duration 18.753867 ms, 60 frames) with on-time error 40.311 µs in the replay against
    /// 0.311 in the run.
    @Test func aKMSVRRLogStartsAtThePanelsLastRefresh() throws {
        var c = Case(display: 9, vrrHz: 139.94)
        c.scenario.refreshHz = 144
        c.scenario.frames = 60
        c.scenario.mode = .minimumDuration(18_753_867)
        var log = try Self.run(c) { try RunLog.read(path: $0 + "/run.jsonl") }
        let last = try #require(log.header?.vrrLastRefreshNs)
        let first = try #require(log.records.first)
        #expect(last < first.callbackNs && first.callbackNs - last < 1_000_000, "\(last) \(first.callbackNs)")
        let replay = try Replay.run(log)
        #expect(replay.isEqual, "\(replay.differences)")
        log.header?.vrrLastRefreshNs = nil
        let older = try Replay.run(log)
        #expect(older.differences.contains { $0.hasPrefix("onTimeErrorUs") }, "\(older.differences)")
    }

    /// Found by the property above (issue 21, fixed): content frames at latency 2–3 on KMS with a
    /// vblank interrupt (flip timestamps in whole µs) replayed with on-time errors up to 0.8 µs
    /// apart (24 fps on vkms, latency 2: p50 0.1 µs in the run, 0.8 µs in the replay). Every
    /// other frame's callback was woken with a flip completion, 40 µs after its vblank, and took
    /// that flip event's µs timestamp; the replay delivered the vblank's event at the vblank and
    /// called back then, with the vblank's nanosecond timestamp, so the content clock's target
    /// moved by the truncated 0.8 µs. The replay now reads that vblank's event no sooner than the
    /// completion, as the run did.
    @Test(arguments: [(24.0, 2), (30, 3), (59.9, 2)])
    func contentAtLatency2Or3OnKMSReplaysExactly(rate: Double, latency: Int) throws {
        var c = Case(display: 5)
        c.scenario.refreshHz = 60.0038
        c.scenario.latency = latency
        c.scenario.frames = 60
        c.scenario.mode = .content(rate)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property above (issue 21, fixed): content at exactly the refresh at latency
    /// 1 on KMS with a vblank interrupt (60.0038 fps on vkms, 60 frames) replayed a frame
    /// discarded (render-late) that the run showed: `run --backend fake-drm:vkms --content-rate
    /// 60.0038 --frames 60 --log c.jsonl` then `replay c.jsonl` said DIFFERS. The run's pacer
    /// fitted its vblank grid from 108 timestamps: each flip's whole µs and, for 48 of the 60
    /// vblanks, the vblank event's nanoseconds read with it; the replay had only the 60 flips'
    /// (the log did not keep the events'), and frame 53's decision sat 0.03 ns from the ε
    /// boundary. A frame's line now keeps the vblank timestamps the pacer learned from vblank
    /// events and queries (`vblanks`): the replay fits from the same 108.
    @Test(arguments: [1, 2, 3])
    func contentAtTheRefreshOnKMSReplaysExactly(latency: Int) throws {
        let c = Self.pinned(display: 5, hz: 60.0038, latency: latency, mode: .content(60.0038))
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the random property (issue 21, fixed): the same content rotated, a file every
    /// 8 KiB at latency 2: a later file started the pacer's vblank fit and ε afresh, where the
    /// run had fitted them since the start, and every frame there is a tie decided within
    /// nanoseconds of ε: file 4 of 18 replayed its frames a refresh early (on-time error p50
    /// 16,665.2 µs against 0.2). Restoring the state at the file's first own frame was not
    /// enough (files 7–26 of 26 still differed): the carried frames before it, replayed on a
    /// fresh fit, called back a vblank late. A continuation line now carries the pacer's state
    /// at the callback of the lowest carried frame, where the replay starts. That state alone
    /// left the random property one more (70 frames at latency 2: the last file replayed frame
    /// 69 scheduler-late, 1 dropped refresh, where the run showed it on time): between that
    /// callback and its frame's completion the replay learned one vblank timestamp fewer than
    /// the run, and at the refresh rate every frame is a tie. It also carries the state at that
    /// frame's completion, restored then.
    @Test(arguments: [1, 2, 3], [60, 70])
    func aRotatedLogOfContentAtTheRefreshOnKMSReplaysExactly(latency: Int, frames: Int) throws {
        var c = Self.pinned(display: 5, hz: 60.0038, latency: latency, mode: .content(60.0038))
        c.scenario.frames = frames
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the random property (issue 21, fixed): 60 fps content on amdgpu-vrr's fixed
    /// 144 Hz at latency 2 (also 72 fps; 30 and 48 replayed equal): the replay had a
    /// scheduler-late drop the run did not (`run --backend fake-drm:amdgpu-vrr --vrr off
    /// --content-rate 60 --latency 2 --frames 60 --log c.jsonl`, `replay c.jsonl`). Frame 5's
    /// time is 0.82 µs after vblank 14 on the ns grid and 1.33 µs after it as predicted from the
    /// µs timestamp of the flip shown at vblank 12. The run read vblank 12's event with that flip's
    /// completion (both 40 µs after the vblank), predicted from the flip, aimed at vblank 15 and
    /// called back at 13; the replay delivered the vblank event at its ns time, before the
    /// completion, aimed at 14 and called back at 12. A vblank event is now read no sooner than
    /// the completion of the flip shown at it, unless the run called back at that vblank
    /// (`flipReceivedAt`).
    @Test(arguments: [60.0, 72])
    func contentOnAFixed144HzKMSDisplayReplaysExactly(rate: Double) throws {
        let wrong = try Self.check(Self.pinned(display: 8, hz: 144, latency: 2, mode: .content(rate)))
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Found by the random property (issue 21, fixed): the fake display at 120 Hz, latency 3,
    /// minimum duration 8.339314 ms (two refreshes a frame), a seat session paused for 100 ms,
    /// the log rotated: the file the pause falls in replayed frame 134 discarded by the pause and
    /// 135 scheduler-late, where the run showed both on time. Two-refresh frames at latency 3 run
    /// 4 refreshes ahead of their callbacks; a fresh link aims its first frame 3 ahead, so the
    /// replay, started at the file's first callback, called back a refresh early from then on,
    /// and frame 134's callback came before the pause. It now starts a refresh later
    /// (`ReplaySegment.startsLater`). With the CLI: `run --backend fake --fake-refresh 120
    /// --latency 3 --min-duration 8.339314 --frames 900 --fake-session-pause 2.217:0.1 --log
    /// r.jsonl --log-max-size 64K`, then `replay r.jsonl.8` said DIFFERS.
    @Test(arguments: [3, 2, 1])
    func aRotatedLogWithAPauseAndMinimumDurationsReplaysExactly(latency: Int) throws {
        var c = Self.pinned(display: 3, hz: 120, latency: latency, mode: .minimumDuration(8_339_314))
        c.rotateBytes = 8 << 10
        c.pause = (217_000_000, 100_000_000)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// A pinned 60-frame run on display `display` of ``Case/displays`` at `hz`.
    static func pinned(display: Int, hz: Double, latency: Int, mode: PacingScenario.Mode) -> Case {
        var c = Case(display: display)
        c.scenario.refreshHz = hz
        c.scenario.latency = latency
        c.scenario.frames = 60
        c.scenario.mode = mode
        return c
    }

    /// ``expectKnownReplayIssue(_:_:allowed:)`` where only replays differ (the report is right).
    static func expectKnownReplayIssue(_ c: Case, _ issue: Comment) throws {
        try expectKnownReplayIssue(c, issue) { $0.contains("replay of file") && !$0.contains("report differs") }
    }

    /// Found by the random property (issue 21, fixed): 59.94 fps content on a 60 Hz fake display
    /// at latency 2, the process stalled at vblank 27 for 67 ms, the log rotated every 8 KiB.
    /// After the stall the run completed frames out of order: frames 26–28, discarded, were
    /// logged before frame 25, shown late, and the cut fell between them (one file: frames 24,
    /// 26, 27, 28; the next: 25, 29, 30, 31). The replay counted frames by number from the
    /// file's first: the first file 5 frames against 4 (frame 25, "could not follow the
    /// recording"), the next 7 against 4 (frames 26–28 again). A file's frames are now the ones
    /// it logged; the frames it lacks inside its range are in the file before or after.
    @Test func aRotatedLogCutBetweenFramesCompletedOutOfOrderReplaysExactly() throws {
        var c = Self.pinned(display: 4, hz: 60, latency: 2, mode: .content(59.94))
        c.stall = (27, 67_000_000)
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property (issue 21, fixed; seed 96 once continuation lines grew by
    /// `statusNs`): a seat session paused 805 ms into a 60 Hz run for 1.45 s, the log rotated
    /// so that the pause's line starts a file. The reader took every session line before a
    /// file's first frame for one repeated from the file before: that pause, and the resume after
    /// two context lines, were dropped, and `report` of the files lost the gap (`sessionGaps` 0
    /// against 1; `measuredRateHz` 22.17 against 50.43 at a 192 Hz link with three late
    /// frames; here, a 60 Hz link: 23.84 against 60.00). The continuation line of a file a
    /// session line starts now says how many are repeated (`sessions`), and only those right
    /// after it can be. Of the sizes from 8 to 12 KiB in 128-byte steps, 2 cut there.
    @Test func aSessionLineThatStartsAFileIsTheFilesOwn() throws {
        var cut = 0
        for size in stride(from: 8 << 10, through: 12 << 10, by: 128) {
            var c = Self.pinned(display: 3, hz: 60, latency: 1, mode: .link)
            c.pause = (805_000_000, 1_450_000_000)
            c.rotateBytes = Int64(size)
            let wrong = try Self.run(c) { dir in
                let names = try FileManager.default.contentsOfDirectory(atPath: dir)
                if try names.contains(where: {
                    try String(contentsOfFile: dir + "/" + $0, encoding: .utf8).contains(#""sessions":"#)
                }) {
                    cut += 1
                }
                return try Self.check(c, in: dir, replay: false)
            }
            #expect(wrong.isEmpty, "\(c): \(wrong)")
        }
        #expect(cut > 0, "no file started with a session line")
    }

    /// Found by the random property (issue 21, fixed; one explore run in three hit it): a seat
    /// session paused 0.2 s into a 30 Hz run for 0.1 s, at latency 2, while frame 3's render ran
    /// 5 refreshes late (1.1–1.3167 s). The run read frame 2's completion, the pause and the
    /// resume together when the render ended. The replay held the pause until that read but
    /// delivered the resume at its own time, before it, and stayed paused to its end: 4 frames
    /// against 60 (`cadence run --backend fake --fake-refresh 30 --latency 2 --inject-late 3:5
    /// --frames 60 --fake-session-pause 0.2:0.1 --log p.jsonl`, then `cadence replay p.jsonl`).
    /// A resume due before the held pause's read is now read with it, after it.
    @Test func aResumeDuringALateRenderIsReadAfterItsPause() throws {
        var c = Self.pinned(display: 3, hz: 30, latency: 2, mode: .link)
        c.scenario.injectLate = [3: 5]
        c.pause = (200_000_000, 100_000_000)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the random property (issue 21, fixed): a 30 Hz link on a 60 Hz fake display at
    /// latency 2 presenting with a minimum duration of 0, frame 3 late by 3, the process stalled
    /// at vblank 89 for 67 ms, the log rotated so that a file ends at frame 41 (every 12 KiB).
    /// Frame 41's completion came at the stall's end (2.5503 s), 0.33 ms after its flip
    /// timeout (4 refreshes after its vblank, 2.5500 s). The run's loop, still producing frames,
    /// waited no longer than 4 refreshes: from its commit at 2.4667 s to 2.5333 s, where it
    /// queried vblank 1092 (the flip's timeout in its next wait, counted from the vblank after
    /// that, moved to 2.6167 s), then to 2.6000 s, and read the completion at 2.5503 s. The
    /// replay of the file made one frame past it (frame 42) and then drained, waiting for the
    /// timeout: at 2.5500 s it found nothing and gave the flip up (unconfirmed, flip-late). A
    /// replay of a file the run continued now makes frames, as the run did, until every frame
    /// of the file has completed. Found again as a fake display stalled at vblank 51 for 42 ms
    /// (120 Hz, a 30 Hz link, latency 2, a file every 8 KiB, the first file ending at frame 11).
    @Test func aStallEndingJustAfterTheFlipTimeoutReplaysExactly() throws {
        var c = Self.pinned(display: 4, hz: 60, latency: 2, mode: .minimumDuration(0))
        c.scenario.range = FrameRateRange(minimum: 0, maximum: 0, preferred: 25)
        c.scenario.injectLate = [3: 3]
        c.stall = (89, 67_000_000)
        c.rotateBytes = 12_288
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the random property (issue 21, fixed) once continuation lines carried the
    /// pacer's state and files were cut elsewhere: the fake display at 75 Hz, latency 1, a
    /// minimum duration of 26.67 ms (two refreshes), the process stalled at vblank 73 for 27 ms
    /// (1.9733–2.0003 s), a file every 8 KiB. File 9 of 26 (frames 24–25, replayed from frame
    /// 16) replayed frame 24's cause as scheduler-late where the run logged flip-late; every
    /// frame's vblank and dropped refreshes were equal. The vblank event frame 24 was to be
    /// committed after was held back by the stall until 2.0003 s; the run's loop woke at
    /// 2.0000 s anyway, at its once-a-second status (the run started at 1.0000 s), queried the
    /// vblank and committed at the deadline (flip-late: committed in time, shown late). The
    /// replay's status clock started at its own start (1.64 s), so it slept until the event and
    /// committed 0.33 ms after the deadline (scheduler-late). A continuation line now says where
    /// the run's status clock stood at the lowest carried frame's callback (`statusNs`), and
    /// the replay of the file starts its clock there.
    @Test func aShortStallNearAFileCutKeepsItsCause() throws {
        var c = Self.pinned(display: 4, hz: 75, latency: 1, mode: .minimumDuration(26_672_647))
        c.stall = (73, 27_000_000)
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the random property (issue 21, not fixed) once rotated logs of stalls were
    /// checked: 59.94 fps content on a 60 Hz fake display at latency 3, the process stalled at
    /// vblank 5 for 34 ms, a file every 8 KiB. After the stall every frame was shown a refresh
    /// after its target, at the vblank after the one the frame before it took (on time, no
    /// dropped refresh), its callback a refresh before its target. A later file's replay starts
    /// a fresh run at its lowest carried frame without the frame shown before it (file 2: frame
    /// 4, aimed at vblank 1008 and shown at 1009, replayed from 2 refreshes before its callback;
    /// frame 2, shown at 1008, is in no carried record): the replay shows frame 4 late
    /// (flip-late, a dropped refresh), its link then calls back 2 refreshes ahead and every other
    /// frame is discarded, and the file's own frames differ: 24 of 25 files (the whole log and
    /// the first file replay equal). Latency 2, or the link's own rate, replay equal. Still so
    /// once continuation lines carried `vblanks` (file 2's has frame 2's, 1008): after the stall
    /// the run's callbacks came one refresh before their targets (held back 2 of latency 3's
    /// 3), and its frames were committed at their target's vblank and shown a refresh later, on
    /// time; the replay of file 2 starts a fresh link 2 refreshes before frame 4's callback, and
    /// by frame 12 its callbacks come two refreshes ahead (1.2333 s against the run's 1.2500 s):
    /// frame 12 is shown at the same vblank (1017) but late, flip-late, and frame 13 discarded.
    @Test func aRotatedLogAfterAStallAtLatency3ReplaysExactly() throws {
        var c = Self.pinned(display: 4, hz: 60, latency: 3, mode: .content(59.94))
        c.stall = (5, 34_000_000)
        c.rotateBytes = 8 << 10
        try Self.expectKnownReplayIssue(
            c, "issue 21: a later file starts without the frame a stall left in the pipeline")
    }

    /// Found by the property's random configurations (issue 21, fixed) once rotated logs of
    /// stalls were checked, shrunk: a 30 Hz link on a 60 Hz fake display at latency 1, a minimum
    /// duration of 0, frame 3 late by 3, the process stalled at vblank 6 for 27 ms, a file every
    /// 8 KiB. File 2 of 26 (frames 11–12) is replayed from frame 3, whose callback was planned at
    /// vblank 1006 (1.1000 s) and ran at the stall's end (1.1270 s, woken with frame 2's
    /// completion, in no carried record) with vblank 1007's timestamp (1.1167 s). The replay
    /// started at 1.1270 s and called back first at vblank 1008 (1.1333 s): frame 3 was aimed at
    /// 1010 instead of 1008 and shown at 1013 instead of 1011, and every frame after it was made
    /// at the callback after the run's (10 divergences). It replays equal (all 26 files) since
    /// the jittery-content fix: a continuation line's pacer state holds the last shown and newest
    /// queued frame (`PacerState`), and the line carries the vblanks frames before the carried
    /// ones were shown at after the first carried callback (`LogContinuation.vblanks`): frame 2,
    /// in no carried record, is no longer missing from the replay's start.
    @Test func aFileStartingAtACallbackAStallDelayedReplaysExactly() throws {
        var c = Self.pinned(display: 4, hz: 60, latency: 1, mode: .minimumDuration(0))
        c.scenario.range = FrameRateRange(minimum: 0, maximum: 0, preferred: 30)
        c.scenario.injectLate = [3: 3]
        c.stall = (6, 27_000_000)
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Found by the random property (issue 21, fixed) once continuation lines carried the
    /// pacer's state and files were cut elsewhere (the state is not written under VRR): the fake
    /// VRR display (48–144 Hz), a 3 Hz link at latency 3, frame 39 late by 1, a file every 8 KiB.
    /// Frame 39's render held the loop until 15.003 s, and the callbacks of frames 40 and 41 (due
    /// at 14.333 s and 14.667 s) ran together then, aimed one and two intervals ahead (15.337 s,
    /// 15.670 s): held back two frame intervals. File 11 of 13 (frames 48–51) replays from
    /// frame 40, whose fresh link started at its callback and aimed it 3 intervals ahead
    /// (16.003 s): the replay display moved the start back to where a fresh link aims at the
    /// recorded target only when that was at most one interval before the callback (enough at
    /// latency 2). Every frame from 40 on was called back 0.69 s late (frame 48: 17.691 s
    /// against 17.003 s) and 3 of the file's 4 were shown late (flip-late). The start now moves
    /// back up to just under the link's lead (`latency` intervals); the file replays equal.
    @Test func aRotatedVRRLogAtLatency3WithALateFrameReplaysExactly() throws {
        var c = Self.pinned(display: 1, hz: 144, latency: 3, mode: .link)
        c.vrrHz = 3
        c.scenario.injectLate = [39: 1]
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Found by the random property (issue 21, not fixed) once the one above was: KMS over the
    /// fake DRM device (amdgpu-vrr, VRR on, whole-µs flip events), a 29.11 Hz link (below the
    /// panel's 48 Hz: LFC) at latency 2 with a minimum duration of 34.374 ms, a file every 8 KiB.
    /// Each frame is aimed at the previous one's prediction plus the duration less ε, so the
    /// run's targets went 1 ns further from the µs flips per frame (frame n's on-time error
    /// n ns). A later file's first carried frame was aimed from its predecessor's prediction,
    /// which no line of the file holds: file 2's frame 3, called back at 1000.117846 s (when
    /// frame 1's flip event was read), was aimed at frame 2's prediction plus the duration, 1.09
    /// µs after where a fresh link started at that callback aims, so the replay started the
    /// chain again: files 2–18 of 18 replayed a largest on-time error of 8–10 ns against the
    /// run's 13–59 ns. Starting such a file's link later, where it aims at the recorded target,
    /// replays all 18 equal but moves the callbacks of other runs (130.91 Hz with a 35.7 ms
    /// minimum duration at latency 3 and late frames: 28 ms later, and two files' frames 6.58 ms
    /// late). The property leaves out rotated amdgpu-vrr VRR logs with a minimum duration.
    @Test func aRotatedKMSVRRLogWithAMinimumDurationKeepsItsTargets() throws {
        var c = Self.pinned(display: 9, hz: 144, latency: 2, mode: .minimumDuration(34_374_001))
        c.vrrHz = 29.11
        c.rotateBytes = 8 << 10
        try Self.expectKnownReplayIssue(
            c, "issue 21: a rotated KMS VRR file's first frame, chained by a minimum duration, aimed 1.09 µs early")
    }

    /// Found checking rotated VRR logs (issue 21, not fixed) once the 3 Hz one above was fixed,
    /// and left out of the property with it before: the fake VRR display, a 47.93 Hz link (LFC)
    /// at latency 3 with a minimum duration of 34 ms, frame 36 late by 2, a file every 8 KiB.
    /// The same as the KMS one above on the fake display: file 10 of 18 (frames 35–37) replays
    /// from frame 27, whose target the minimum duration had put 82.58 ms after its callback,
    /// 19.99 ms further than a fresh link started there aims (3 intervals of 20.86 ms). The
    /// frames after it are aimed at their recorded targets again, but the link calls back
    /// 6.28 ms earlier than in the run (frame 36: 2.2045 s against 2.2108 s); frame 36's injected
    /// render then ends at 2.2907 s, before its deadline (2.2934 s; the run's at 2.2970 s), and the
    /// frame is late for its copy (copy-late, the run: render-late). At latency 2 it replays
    /// equal. The property leaves out rotated VRR logs at latency 3 with a minimum duration and a
    /// late frame.
    @Test func aRotatedVRRLogAtLatency3WithAMinimumDurationAndALateFrameKeepsItsCause() throws {
        var c = Self.pinned(display: 1, hz: 144, latency: 3, mode: .minimumDuration(34_000_000))
        c.vrrHz = 47.93
        c.scenario.injectLate = [36: 2]
        c.rotateBytes = 8 << 10
        try Self.expectKnownReplayIssue(
            c,
            "issue 21: a rotated VRR file at latency 3 whose first frame a minimum duration put later calls back earlier"
        )
    }

    /// Found by the random property (issue 21, fixed): bochs at 75 Hz, latency 2, frame 3 late
    /// by a refresh, the log rotated every 8 KiB: the second file's replay (frames 12–15, frames
    /// 4–11 carried) followed none of its 12 frames' records (`cadence replay` of that file
    /// alone the same: both go through `LogReplay.run`). Frame 3's late flip (74.339 ms, shown
    /// at vblank 6) moved the run's software grid half a refresh after frame 4's callback
    /// (vblank 5, 67.672 ms); that flip is in the first file, and the replay, starting at frame
    /// 4, put its start at vblank 6 (the flips' timeline put 6 nearer, 6.667146 ms against
    /// 6.667281) and stepped from the callback: every frame 2 refreshes late. The replay now
    /// takes the flip before its first frame from that frame's interval (7 at 87.673 ms, 13.334
    /// ms and 1 refresh after it) and its start from the frame's target (2 refreshes after the
    /// callback).
    @Test func aSmallRotatedLogWithoutVBlankAndALateFrameReplaysExactly() throws {
        var c = Self.pinned(display: 6, hz: 75, latency: 2, mode: .link)
        c.scenario.injectLate = [3: 1]
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found once the rotated bochs and virtio-gpu logs with late frames were replayed (issue 21,
    /// fixed): 75 fps content on bochs at 75 Hz, latency 2, frame 3 late by 2 refreshes, a file
    /// every 8 KiB: `replay` of the 16th of 17 files refused it (`frame number -1 in a log of 11
    /// frames`). Frame 4, discarded behind the late frame 3, was logged before it, and the
    /// replay started at the first carried record (frame 4), numbering frame 3 −1. It now starts
    /// at the lowest carried frame (11 of 300 such runs on the displays without vblank threw).
    @Test func aRotatedFileCarryingAFrameLoggedBeforeAnEarlierOneReplaysExactly() throws {
        var c = Self.pinned(display: 6, hz: 75, latency: 2, mode: .content(75))
        c.scenario.injectLate = [3: 2]
        c.rotateBytes = 8 << 10
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property (issue 21, fixed): the fake display without a vblank interrupt
    /// (the simulator's, not KMS's: its grid ticks on by itself from the last flip completion,
    /// and a flip completes its commit latency after the commit), 60 Hz, latency 2, 48 fps
    /// content: the replay's on-time error p99 was 410.0 µs against the run's 1,000 µs. Frame 0,
    /// committed at its target vblank's tick (1,033.333 ms), completed 1 ms later with that
    /// vblank's sequence (1002, the nearest whole refresh count), and the run's next callback
    /// ran at the tick; the replay had vblank 1002 only at the completion and aimed frame 1 1 ms
    /// later (1,067.667 ms, on time, where the run's was 1 ms late). It now ticks a flip's
    /// vblank on the grid stepped from the completion before, when that came before the flip.
    @Test func contentOnTheFakeDisplayWithoutVBlankReplaysExactly() throws {
        let c = Self.pinned(display: 2, hz: 60, latency: 2, mode: .content(48))
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property above (issue 21, fixed): on KMS without a vblank interrupt (bochs),
    /// latency 2, frame 3 late by a refresh: the frame after it was aimed 427 ns apart in the
    /// replay. The run's software vblank 5 was stepped from completion 3 (41.003 ms + 2
    /// refreshes = 67.671854 ms): completion 4 had happened but was not read yet, the late render
    /// held the loop. The replay stepped it from completion 4 (54.337 ms + 1 refresh =
    /// 67.671427 ms). Content frames too (50 fps on bochs at latency 2: the run woke at software
    /// vblank 5, 67.671281 ms, stepped from flip 2, before flip 5 completed at 67.672 ms; the
    /// replay woke with that flip's completion; on-time error p99 809.4449 µs against
    /// 809.4705), and 30 fps (p99 0.854 against 0.865 µs). The replay now steps its vblanks, and
    /// its vblank events, from the completions it has delivered (`softwareAnchor`).
    @Test(arguments: [
        (6, 2, PacingScenario.Mode.link), (7, 3, .link), (6, 2, .content(50)), (6, 2, .content(30)),
        (7, 2, .minimumDuration(16_668_000))
    ])
    func aLateRenderWithoutVBlankReplaysExactly(display: Int, latency: Int, mode: PacingScenario.Mode) throws {
        var c = Case(display: display)
        c.scenario.refreshHz = 75
        c.scenario.latency = latency
        c.scenario.frames = 60
        c.scenario.mode = mode
        c.scenario.injectLate = [3: 1]
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property above (issue 21, fixed): a rotated log of a VRR run on KMS with a
    /// late frame (amdgpu-vrr, 3 Hz on 48–144 Hz, latency 2, frame 3 late by a refresh, a file
    /// every 8 KiB): a later file replayed every frame 3.6 ms off its target (on-time error p50
    /// 3,612.8 µs in the replay, 0.55 µs in the run), as the fresh link of that file did not aim
    /// where the run's link, re-anchored by the late frame, aimed. The run was what parted from
    /// the model: KMSDisplay committed no LFC repeat while the late frame was drawn, so the panel
    /// refreshed on its own and the late frame waited a refresh more. With its repeats going on
    /// (`keepRepeating`) the run is the model's and every file replays equal.
    @Test func aRotatedVRRLogWithALateFrameReplaysExactly() throws {
        let wrong = try Self.check(Self.rotatedVRR(hz: 3, latency: 2, frames: 60, injectLate: [3: 1]))
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// A run on the fake `amdgpu-vrr` device under VRR at `hz` on its 48–144 Hz panel, its log
    /// rotated every 8 KiB.
    static func rotatedVRR(hz: Double, latency: Int, frames: Int, injectLate: [Int: Int] = [:]) -> Case {
        var c = Case(display: 9, rotateBytes: 8 << 10, vrrHz: hz)
        c.scenario.refreshHz = 144
        c.scenario.latency = latency
        c.scenario.frames = frames
        c.scenario.injectLate = injectLate
        return c
    }

    /// A rotated log of a VRR run on KMS with minimum durations and a late frame (amdgpu-vrr,
    /// 90 Hz asked on 48–144 Hz, a 12 ms minimum duration, frame 30 late by 2 refreshes, a file
    /// every 8 KiB) replays equal, file by file, at latencies 1–3. With the CLI (`run --backend
    /// fake-drm:amdgpu-vrr --rate 0:144:90 --min-duration 12 --latency 2 --frames 1500
    /// --inject-late 300:2 --log r.jsonl --log-max-size 64K`) the file holding frame 300 replayed
    /// its injected render end 3.78 ms later (on-time error 3,679.889 µs against 0). Each frame's
    /// plan reads the predicted time of the frame queued before it; under VRR the pacer kept the
    /// predicted time a minimum-duration frame was given at its callback, chained from the frames
    /// before (a phase from the run's first frame, not in the log), even once the previous
    /// frame's presentation set a later one (`trySubmit` moved its target, not its prediction),
    /// and a file's replay, started fresh at its first carried frame, chained from a different
    /// phase. The prediction now follows the target, as on a fixed refresh.
    @Test(arguments: [1, 2, 3])
    func aRotatedKMSVRRLogWithMinimumDurationsAndALateFrameReplaysExactly(latency: Int) throws {
        var c = Self.rotatedVRR(hz: 90, latency: latency, frames: 60, injectLate: [30: 2])
        c.scenario.mode = .minimumDuration(12_000_000)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Rotated VRR logs just below the panel's minimum (47.89 Hz on 48–144 Hz, latency 2, 98
    /// frames, a file every 8 KiB: the last of 31 files replayed a hitch time ratio 0.007 % apart,
    /// 496.616 vs 496.653 ms/s, when the property found it) and a rotated 142.17 Hz run at
    /// latency 3 with nothing late replay equal now (also without `keepRepeating`).
    @Test(arguments: [(47.89, 2, 98), (142.17, 3, 98), (142.17, 3, 150), (142.17, 3, 60), (100, 3, 120)])
    func aRotatedVRRLogBelowThePanelsMinimumReplaysExactly(hz: Double, latency: Int, frames: Int) throws {
        let wrong = try Self.check(Self.rotatedVRR(hz: hz, latency: latency, frames: frames))
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Found by the random property after `keepRepeating` (issue 21, fixed): a rotated log of a
    /// VRR run on KMS at an LFC rate with a late frame (amdgpu-vrr, 6.52 Hz on 48–144 Hz, latency
    /// 2, frame 3 late by a refresh, a file every 8 KiB): the second of 15 files replayed 4
    /// flip-late drops the run did not have (12 divergences). That file's replay starts at frame
    /// 4, whose callback ran when frame 3's late render was handed over and which was aimed one
    /// frame interval after it; a fresh link at latency 2 aims two after its start, and the
    /// replay moved its start back only when that was less than one interval (it was exactly one).
    @Test func aRotatedVRRLogAtAnLFCRateReplaysExactly() throws {
        let wrong = try Self.check(Self.rotatedVRR(hz: 6.52, latency: 2, frames: 60, injectLate: [3: 1]))
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Found by the property above (issue 21, fixed): a rotated log with a seat session paused
    /// in it (the fake display, 24 fps content, paused 200 ms in for 867 ms, a file every 16 KiB):
    /// the second of 3 files replayed one frame interval fewer (17 vs 18), measured rate 24.29 vs
    /// 25.71 Hz. Its first carried frame was called at the resume, and the replay, starting
    /// there, replayed the whole gap at its start: the loop fired the first callbacks before it
    /// read the pause, which flushed the carried frames, and the resume then forgot the frame
    /// shown after them, so the file's first frame had no interval. A gap that ended by the
    /// replay's start is now not replayed (a fresh run is as the run was after the resume).
    @Test func aRotatedLogWithASessionPauseReplaysExactly() throws {
        var c = Case(display: 3, rotateBytes: 16 << 10, pause: (200_000_000, 867_000_000))
        c.scenario.frames = 60
        c.scenario.mode = .content(24)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property above (issue 21, fixed): the fake display's stall fault (the client
    /// gets no event for a while: 84 ms at vblank 66), latency 1, 60 frames, frame 2 late by 6
    /// refreshes: the replay timed the last frame out as unconfirmed (causes flip-late 1 +
    /// render-late 1 vs render-late 1; durationSeconds 1.0667 vs 1.0833). The run read that
    /// frame's completion 84 ms late together with the stalled vblank event it had asked for;
    /// that vblank event's lateness, noted only as it was handled (after the completion), went
    /// into no frame's record, so the replay delivered the vblank event on time, and the flip's
    /// timeout counted from it ran out before the completion. The pacer now notes the late
    /// vblank events of a read before it handles any of them: the last frame's record keeps it.
    @Test func aStalledClientReplaysExactly() throws {
        var c = Case(display: 4, stall: (66, 84_000_000))
        c.scenario.frames = 60
        c.scenario.injectLate = [2: 6]
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by the property above (issue 21, fixed), two ways:
    /// 1. 60 fps content on a 120 Hz fake display, a seat session paused 209 ms in for 100 ms,
    ///    latency 1, 60 frames: the replay called a frame session-paused that the run called
    ///    render-late (causes render-late 5 + session-paused 1 vs render-late 6). The run read
    ///    the pause with the event of the vblank it paused at, and its callback came after the
    ///    resume; the replay's timestamp of that vblank, which no frame was shown at
    ///    (interpolated), was 1 ns before the recorded pause, so it fired the callback before
    ///    reading the pause. The replay now reads a pause with an event at most 2 ns before it.
    /// 2. Latency 2 at 30 Hz, frame 4 late by a refresh, paused 200 ms in for 100 ms: the replay
    ///    flushed frame 3 as session-paused that the run showed (discarded 2 vs 1,
    ///    session-paused 2 vs 1). Frame 3's completion was received after the pause's time (the
    ///    late frame was being drawn), and the run read it before the pause, queued first; the
    ///    replay delivered the pause at its time, before the receipt. A pause at or after a
    ///    shown flip's vblank is now read no earlier than that flip's completion.
    @Test(arguments: [1, 2])
    func contentAcrossASessionPauseReplaysExactly(_ n: Int) throws {
        var c = Case(display: 3, pause: (209_000_000, 100_000_000))
        c.scenario.frames = 60
        if n == 1 {
            c.scenario.mode = .content(60)
            c.scenario.refreshHz = 120
        } else {
            c.pause = (200_000_000, 100_000_000)
            c.scenario.refreshHz = 30
            c.scenario.latency = 2
            c.scenario.injectLate = [4: 1]
        }
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }

    /// Found by ``randomConfigurations()`` after the fixes above (issue 21), fixed: a rotation
    /// between the frames a seat-session pause flushes and the pause's own line (the fake
    /// display at 120 Hz, latency 2, 60 frames, a minimum duration of 33.339314 ms, paused 992 ms
    /// in for 100 ms, a file every 16 KiB). The pacer completes the flushed frames, which the log
    /// writes, before it tells the sinks of the pause: the first of 4 files ended with frame 24
    /// session-paused and no pause line, and the pause line opened the second file, right after
    /// its continuation line. That first file replayed frame 24 as committed and never confirmed
    /// (causes flip-late 1 vs session-paused 1, unconfirmed 1 vs 0), and `report` of all the
    /// files lost the gap (sessionGaps - vs 1, measuredRateHz 22.649 vs 24.000). Now the writer
    /// keeps the cut-off frames and the pause line in one file (`RunLogWriter`).
    @Test func aRotationBetweenAPauseAndItsFlushedFramesReproducesTheRun() throws {
        var c = Case(display: 3, rotateBytes: 16 << 10, pause: (992_000_000, 100_000_000))
        c.scenario.frames = 60
        c.scenario.refreshHz = 120
        c.scenario.latency = 2
        c.scenario.mode = .minimumDuration(33_339_314)
        c.scenario.range = FrameRateRange(minimum: 1.1, maximum: 120.1, preferred: 100.1)
        let wrong = try Self.check(c)
        #expect(wrong.isEmpty, "\(c): \(wrong)")
    }
}
