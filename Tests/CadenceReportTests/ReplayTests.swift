import CadenceCore
import CadenceReport
import Foundation
import Testing

@Suite struct ReplayTests {
    static let cases: [(String, RunConfiguration, FakeDisplayConfiguration)] = {
        var out: [(String, RunConfiguration, FakeDisplayConfiguration)] = []
        out.append(("inject-late latency 1", config(injectLate: [100: 1, 250: 3]), .init()))
        out.append(("inject-late latency 2", config(latency: 2, injectLate: [100: 1, 250: 3]), .init()))
        out.append(("inject-late latency 3, 144 Hz", config(latency: 3, injectLate: [50: 2]), .init(refreshHz: 144)))
        var r = config(frames: 300)
        r.range = FrameRateRange(minimum: 10, maximum: 60, preferred: 26)
        out.append(("rate 10:60:26", r, .init()))
        var c = config(frames: 240)
        c.contentRate = 24
        out.append(("content-rate 24", c, .init()))
        var m = config(frames: 200, injectLate: [20: 1])
        m.minimumDuration = 40_000_000
        out.append(("min-duration 40 ms", m, .init(refreshHz: 59.94)))
        var j = FakeDisplayConfiguration(refreshHz: 60, seed: 7)
        j.jitter = 300_000
        j.driftPPM = 50
        out.append(("jitter and drift", config(injectLate: [10: 1, 400: 2]), j))
        // Vblank and flip events that arrive before their (jittered) timestamps, as on hardware
        // that stamps a vblank with the start of scanout: six slow frames at latency 2 made the
        // replay wait for a vblank the recorded run had already seen (one late frame too many).
        var early = config(frames: 600, latency: 2)
        early.renderCost = try! RunSpec.renderCost("300-305:20")
        var ej = FakeDisplayConfiguration(refreshHz: 60, seed: 0)
        ej.jitter = 200_000
        out.append(("events before their timestamps, latency 2", early, ej))
        out.append(("late flip events", config(frames: 300), {
            var f = FakeDisplayConfiguration()
            f.faults = [.lateEvent(submission: 100, by: 12_000_000), .lateEvent(submission: 200, by: 30_000_000)]
            return f
        }()))
        out.append(("EBUSY", config(frames: 300), {
            var f = FakeDisplayConfiguration()
            f.faults = [.busy(submission: 150)]
            return f
        }()))
        for latency in [1, 2] {
            out.append(("session paused 1 s at 2 s, latency \(latency)", config(frames: 400, latency: latency), {
                var f = FakeDisplayConfiguration()
                f.faults = [.sessionPaused(after: 2_000_000_000, for: 1_000_000_000)]
                return f
            }()))
        }
        return out
    }()

    /// A log with a session gap keeps its `session` records (in order, with the gap), and the
    /// replay places the gap where it was (the summary's gap fields included).
    @Test func sessionRecordsAreReadAndReplayed() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var f = FakeDisplayConfiguration()
        f.faults = [.sessionPaused(after: 1_000_000_000, for: 500_000_000), .sessionPaused(after: 3_000_000_000, for: 250_000_000)]
        let (path, recorded) = try recordRun(config(frames: 300), fake: f, in: dir)
        let log = try RunLog.read(path: path)
        #expect(log.sessions.map(\.event) == [.paused, .resumed, .paused, .resumed])
        #expect(log.sessions[1].gapNs == log.sessions[1].timeNs - log.sessions[0].timeNs)
        #expect(recorded.sessionGaps == 2 && recorded.droppedRefreshes == 0)
        let result = try Replay.run(log)
        #expect(result.replayed.sessionGaps == 2)
        #expect(result.replayed.sessionGapSeconds == recorded.sessionGapSeconds)
        #expect(result.differences == [])
    }

    @Test func aSessionRecordAfterTheEndIsRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 30), in: dir)
        let extra = #"{"event":"paused","record":"session","timeNs":1,"version":1}"# + "\n"
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        h.seekToEndOfFile()
        h.write(Data(extra.utf8))
        try h.close()
        #expect(throws: (any Error).self) { _ = try RunLog.read(path: path) }
        let bad = dir + "/bad.jsonl"
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        try ([lines[0], #"{"record":"session","version":1,"event":"sideways","timeNs":1}"#] + lines.dropFirst()).joined(separator: "\n")
            .write(toFile: bad, atomically: true, encoding: .utf8)
        do {
            _ = try RunLog.read(path: bad)
            Issue.record("a malformed session record was accepted")
        } catch {
            #expect("\(error)".contains("line 2: malformed session record"), "\(error)")
        }
    }

    @Test(arguments: 0..<cases.count)
    func replayReproducesTheRecordedSummary(_ i: Int) throws {
        let (name, cfg, fake) = Self.cases[i]
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, recorded) = try recordRun(cfg, fake: fake, in: dir)
        let log = try RunLog.read(path: path)
        let result = try Replay.run(log)
        #expect(result.differences == [], "\(name)")
        #expect(result.divergences == 0, "\(name)")
        #expect(result.recorded == recorded)
        #expect(result.replayed.backend == "replay")
        // Frame by frame: same fate, sequence and kernel timestamp.
        let a = log.records.map { [$0.frame, Int($0.sequence), Int($0.flipNs), $0.droppedRefreshes] }
        let b = result.records.map { [$0.frame, Int($0.sequence), Int($0.flipNs), $0.droppedRefreshes] }
        #expect(a == b, "\(name)")
    }

    /// Content ahead of a panel running slow (issue 21, 60 fps on a 60 Hz panel at +500 ppm):
    /// the frames passed over to catch up (discarded, never drawn or submitted) are passed over
    /// in the replay of the whole log too, frame by frame. Not yet in `cases`: a rotated log's
    /// later segment, and the streaming replay at latency 3, differ around a catch-up (the
    /// segment starts without the frames before it; the passed-over frame is reported before
    /// the frames queued ahead of it).
    @Test(arguments: [1, 3])
    func replayOfContentAheadOfThePanelIsExact(latency: Int) throws {
        var cfg = config(frames: 4_200, latency: latency)
        cfg.contentRate = 60
        var fake = FakeDisplayConfiguration(refreshHz: 60)
        fake.driftPPM = 500
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, recorded) = try recordRun(cfg, fake: fake, in: dir)
        #expect(recorded.discarded >= 2 && recorded.causes.isEmpty, "\(recorded.discarded), \(recorded.causes)")
        let log = try RunLog.read(path: path)
        let result = try Replay.run(log)
        #expect(result.differences == [] && result.divergences == 0 && result.recorded == recorded)
        let a = log.records.map { [$0.frame, Int($0.sequence), Int($0.flipNs), $0.droppedRefreshes] }
        let b = result.records.map { [$0.frame, Int($0.sequence), Int($0.flipNs), $0.droppedRefreshes] }
        #expect(a == b)
    }

    /// The replay follows the kernel timestamps, not the logged verdicts: a log edited so that
    /// frame 300 and every later frame came one refresh later yields one more dropped refresh.
    @Test func replayReanalysesTheTimestamps() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, recorded) = try recordRun(config(frames: 600, injectLate: [100: 1]), in: dir)
        var log = try RunLog.read(path: path)
        let period = Int64((1e9 / 60).rounded())
        for i in log.records.indices where log.records[i].frame >= 300 {
            log.records[i].sequence += 1
            log.records[i].flipNs += period
            log.records[i].receivedNs += period
        }
        let result = try Replay.run(log)
        #expect(result.replayed.droppedRefreshes == recorded.droppedRefreshes + 1)
        #expect(result.replayed.dropEvents == recorded.dropEvents + 1)
        #expect(result.differences.contains { $0.hasPrefix("droppedRefreshes") })
        let r300 = result.records.first { $0.frame == 300 }!
        #expect(r300.droppedRefreshes == 1 && r300.outcome == .late)
    }

    @Test func logsWithoutHeaderOrShownFramesAreRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, _) = try recordRun(config(frames: 10), in: dir)
        var log = try RunLog.read(path: path)
        log.header = nil
        #expect(throws: ReplayDisplay.Unreplayable.self) { try Replay.run(log) }
    }
}

@Suite struct ReplayEarlyReceiptTests {
    /// A flip completion received before its (scanout-stamped) timestamp replays when it was
    /// received, also when a display-link callback had already woken for that vblank earlier
    /// still (as when the flip event comes in a later read than the vblank event); a receipt
    /// not logged (0) replays at the timestamp.
    @Test func earlyFlipReceiptsReplayWhenTheyWereReceived() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var cfg = config(frames: 600, latency: 2)
        cfg.renderCost = try RunSpec.renderCost("300-305:20")
        var fake = FakeDisplayConfiguration(refreshHz: 60, seed: 0)
        fake.jitter = 200_000
        let (path, _) = try recordRun(cfg, fake: fake, in: dir)
        var log = try RunLog.read(path: path)
        // The fake display delivers a vblank's events at once: a callback for the vblank woke
        // when its flip completion was received. Receive those completions later, still early.
        var wokeAt: [Int64: Int64] = [:]
        for c in log.records where c.callbackNs > 0 && c.wakeNs > 0 && c.wakeNs < c.callbackNs {
            wokeAt[c.callbackNs] = min(wokeAt[c.callbackNs] ?? c.wakeNs, c.wakeNs)
        }
        var moved: [Int: Int64] = [:]
        var unlogged: [Int: Int64] = [:]
        for i in log.records.indices {
            let r = log.records[i]
            guard r.outcome == .onTime || r.outcome == .late, r.receivedNs > 0, r.flipNs - r.receivedNs >= 2,
                  let w = wokeAt[r.flipNs], w <= r.receivedNs else { continue }
            if unlogged.isEmpty && r.frame > 100 {
                log.records[i].receivedNs = 0
                unlogged[r.frame] = r.flipNs
                continue
            }
            log.records[i].receivedNs = r.receivedNs + (r.flipNs - r.receivedNs) / 2
            moved[r.frame] = log.records[i].receivedNs
        }
        #expect(moved.count > 50, "\(moved.count) early receipts moved")
        #expect(unlogged.count == 1)
        let result = try Replay.run(log)
        #expect(result.divergences == 0)
        let replayed = Dictionary(result.records.map { ($0.frame, $0) }, uniquingKeysWith: { a, _ in a })
        var wrong: [String] = []
        for (frame, received) in moved.merging(unlogged, uniquingKeysWith: { a, _ in a }).sorted(by: { $0.key < $1.key }) {
            let got = replayed[frame]?.receivedNs
            if got != received { wrong.append("frame \(frame): replayed \(got.map(String.init) ?? "none"), want \(received)") }
        }
        #expect(wrong.count == 0, "\(wrong.count) of \(moved.count + unlogged.count) receipts: \(wrong.prefix(5))")
        // Every other frame's receipt replays unchanged too.
        for r in log.records where r.receivedNs > 0 && moved[r.frame] == nil {
            #expect(replayed[r.frame]?.receivedNs == r.receivedNs, "frame \(r.frame)")
        }
    }
}

@Suite struct ReplayHeldUpEventTests {
    /// Seen in the VM under a loaded host (10 Hz link on vkms): a frame waiting for the vblank
    /// before its target got that vblank's event 17 ms late (the process was held up), committed
    /// after its deadline, and its own flip event came late too. The run judged it
    /// scheduler-late (vblank events were late as well); the replay delivered the vblank event
    /// on time and called it flip-late. The stall below holds a vblank's events as the host did;
    /// the late completion event makes the flip-event rule look at both. Swept over the vblank
    /// the stall starts at, so that one of them is the vblank before frame 50's target.
    @Test(arguments: 296..<308)
    func aVBlankEventHeldUpReplaysAsHeldUp(stallAt: Int) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var cfg = config(frames: 100)
        cfg.range = FrameRateRange(minimum: 10, maximum: 10, preferred: 10)
        cfg.commitMargin = 1_000_000
        var fake = FakeDisplayConfiguration()
        fake.faults = [.stall(atVBlank: stallAt, by: 18_000_000), .lateEvent(submission: 50, by: 8_000_000)]
        let (path, recorded) = try recordRun(cfg, fake: fake, in: dir)
        let log = try RunLog.read(path: path)
        let result = try Replay.run(log)
        #expect(result.differences == [], "stall at vblank \(stallAt)")
        let replayed = Dictionary(result.records.map { ($0.frame, $0) }, uniquingKeysWith: { a, _ in a })
        for r in log.records {
            let got = replayed[r.frame]?.cause
            #expect(got == r.cause, "frame \(r.frame): \(r.cause?.rawValue ?? "none") replayed as \(got?.rawValue ?? "none")")
        }
        #expect(result.recorded == recorded)
    }

    /// A stall of every event (the process held up for 30–100 ms) while a flip completion is
    /// also late: the run tells a late flip event (flip-late) from a process held up (scheduler-late)
    /// by whether its vblank events came late too. The log keeps the late vblank receipts, so the
    /// replay judges each frame alike (before, the replay delivered every vblank event on time
    /// and called the held-up frames flip-late).
    /// (A 2 s `SIGSTOP` does not replay exactly yet: the replay's busy retries and the frame
    /// committed before the stop differ; the stalls below do.)
    @Test(arguments: [
        (1, FakeFault.stall(atVBlank: 120, by: 45_000_000)),
        (2, FakeFault.stall(atVBlank: 120, by: 45_000_000)),
        (3, FakeFault.stall(atVBlank: 120, by: 45_000_000)),
        (1, FakeFault.stall(atVBlank: 121, by: 100_000_000)),
        (2, FakeFault.stall(atVBlank: 122, by: 30_000_000))
    ])
    func heldUpProcessReplaysAsHeldUp(latency: Int, fault: FakeFault) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var fake = FakeDisplayConfiguration()
        fake.faults = [fault]
        let (path, recorded) = try recordRun(config(frames: 400, latency: latency), fake: fake, in: dir)
        #expect(recorded.causes["scheduler-late"] != nil, "\(recorded.causes)")
        let log = try RunLog.read(path: path)
        #expect(log.records.contains { !($0.lateVBlankEvents ?? []).isEmpty })
        let result = try Replay.run(log)
        #expect(result.differences == [])
        let replayed = Dictionary(result.records.map { ($0.frame, $0) }, uniquingKeysWith: { a, _ in a })
        for r in log.records where r.cause != nil || replayed[r.frame]?.cause != nil {
            #expect(replayed[r.frame]?.cause == r.cause, "frame \(r.frame)")
        }
    }

    /// A stall over the last frame's completion (84 ms from vblank 66 of a 60-frame run whose
    /// frame 2 is 6 refreshes late): the run reads that completion, 5 refreshes late, together
    /// with the stalled vblank event it asked for, and waits for it because that vblank event
    /// is late too. The last record keeps the vblank event's receipt (it went into no record:
    /// the replay delivered the event on time and timed the flip out as unconfirmed, flip-late).
    @Test func aStallOverTheLastCompletionReplaysExactly() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var fake = FakeDisplayConfiguration()
        fake.faults = [.stall(atVBlank: 66, by: 84_000_000)]
        let (path, recorded) = try recordRun(config(frames: 60, injectLate: [2: 6]), fake: fake, in: dir)
        #expect(recorded.unconfirmed == 0 && recorded.causes == ["render-late": 1], "\(recorded.causes)")
        let log = try RunLog.read(path: path)
        let last = try #require(log.records.max { $0.frame < $1.frame })
        #expect(last.outcome == .onTime && last.receivedNs - last.flipNs == 84_000_000)
        #expect(last.lateVBlankEvents?.map { $0[0] } == [Int64(last.sequence)])
        #expect(try Replay.run(log).differences == [])
    }
}

@Suite struct LogVersionTests {
    /// Version 2 changed what some verdicts mean (VRR lateness, the late-commit cause): a version 1
    /// log still reads, reports and replays, and the replay says which rules judged it; a version
    /// the build does not know is refused in one line naming it.
    @Test func versionOneStillReplaysAndUnknownVersionsAreRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (path, recorded) = try recordRun(config(frames: 200, injectLate: [50: 2]), in: dir)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("{") && text.split(separator: "\n").first!.contains(#""version":2"#))
        let current = try Replay.run(try RunLog.read(path: path))
        #expect(current.note == nil && current.differences == [])
        for (version, refused) in [(1, false), (4, true)] {
            let lines = text.split(separator: "\n").map { line in
                guard line.contains(#""record":"#) else { return String(line) }
                return line.replacingOccurrences(of: #""version":2"#, with: #""version":\#(version)"#)
            }
            let other = dir + "/v\(version).jsonl"
            try (lines.joined(separator: "\n") + "\n").write(toFile: other, atomically: true, encoding: .utf8)
            if refused {
                #expect(throws: RunLog.Invalid(other + ": line 1: unknown log version 4 (this build reads 1 to 3)")) {
                    _ = try RunLog.read(path: other)
                }
            } else {
                let log = try RunLog.read(path: other)
                #expect(log.header?.version == 1)
                #expect(LogAnalysis.summary(of: log).droppedRefreshes == recorded.droppedRefreshes)
                let r = try Replay.run(log)
                #expect(r.differences == [])
                let note = r.note ?? ""
                #expect(note.hasPrefix("log version 1: judged by version 2's rules"), "\(note)")
            }
        }
    }
}
