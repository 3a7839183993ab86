import CadenceCore
import CadenceReport
import Foundation
import Testing

/// Regression tests for what fuzzing `cadence replay` and `cadence report` found
/// (tools/fuzz/Targets/replay, runlog): every log that parses either replays to an end or is
/// refused with one line; none traps or runs forever.
@Suite struct ReplayHardeningTests {
    func recorded(_ c: RunConfiguration, _ fake: FakeDisplayConfiguration = .init()) throws -> RunLog {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try RunLog.read(path: try recordRun(c, fake: fake, in: dir).path)
    }

    /// Found: a VRR log at a rate below the panel's range ran forever on replay (the run ended
    /// only at its frame count, which the replay never reached). Now bounded by the recording's
    /// span and equal to the recording.
    @Test(arguments: [(20_000_000 as Int64?, 0.0), (nil, 60.0), (nil, 47.0)])
    func vrrLogsReplayToTheEnd(_ minDuration: Int64?, _ preferred: Double) throws {
        var c = config(frames: 10)
        c.minimumDuration = minDuration
        c.range = FrameRateRange(minimum: 0, maximum: preferred, preferred: preferred)
        let log = try recorded(c, FakeDisplayConfiguration(refreshHz: 60, vrrRange: 48...144))
        let r = try Replay.run(log)
        #expect(r.differences == [], "\(r.differences)")
        #expect(r.replayed.frames == 10)
    }

    /// Found: two flips logged at one vblank sequence made the replayed sequence go backwards
    /// and the pacer's interval arithmetic trap (UInt64 → Int).
    @Test func aSequenceGoingBackwardsDoesNotTrap() throws {
        var log = try recorded(config(frames: 12, injectLate: [4: 1, 8: 2]))
        let i = try #require(log.records.firstIndex { $0.frame == 6 })
        log.records[i].sequence = log.records[i + 1].sequence
        let r = try Replay.run(log)
        #expect(r.replayed.frames <= 12)
    }

    /// Found (CI's 30 s fuzz run, replay target): a flip logged 10^12 refreshes after the one
    /// before it made the pacer predict a vblank time beyond Int64 (Double → Int64 trapped in
    /// `time(ofSequence:)` when checking a frame's completion timeout). Predictions now saturate;
    /// the replay ends and reports where it could not follow the recording.
    @Test func aSequenceJumpBeyondTheClockDoesNotTrap() throws {
        var log = try recorded(config(frames: 12, injectLate: [4: 1]))
        let i = try #require(log.records.firstIndex { $0.frame == 6 })
        for k in i..<log.records.count { log.records[k].sequence &+= 1_000_000_000_000 }
        let r = try Replay.run(log)
        #expect(r.replayed.frames <= 12)
        #expect(!r.differences.isEmpty)
    }

    /// Found (CI's 30 s fuzz run, replay target): this log (its header's 1.67 ms refresh against
    /// 60 Hz, latency 3, a last line cut off in a byte that is not UTF-8) spun forever. Its last
    /// flip never completes in the replay while the next frame's scripted rendering runs:
    /// rendering work waited for the flip's completion timeout, already passed, without timing
    /// the flip out. Now it ends (in milliseconds) and reports that it could not follow the
    /// recording.
    @Test func aFlipThatNeverCompletesDuringRenderingWorkTimesOut() throws {
        let bytes = try #require(Data(base64Encoded: Self.neverCompletingFlip.joined()))
        let log = try RunLog.parse(bytes, name: "fuzz", allowPartialLastLine: true)
        let r = try Replay.run(log)
        #expect(r.replayed.unconfirmed > 0 && !r.differences.isEmpty, "\(r.replayed)")
    }

    /// Found (this stop's CI, 30 s fuzz run, replay target): this log (a 6 Hz header against
    /// 60 Hz, latency 3, sequences and times garbled) never ended. During a frame's scripted
    /// rendering the replay display answered every wait at once with the same vblank, so the
    /// virtual clock never moved and rendering work waited forever. Now rendering work stops
    /// waiting after `FramePacer.stillTurnLimit` turns at one instant and takes its time.
    ///
    /// The time limit only stops a hang (the body's own time is checked against 10 s): a test
    /// waiting for a thread behind the suite's long property tests once passed 60 s before it
    /// ran (alone it takes under a second).
    @Test(.timeLimit(.minutes(10)))
    func aClockThatStopsDuringRenderingWorkDoesNotHang() throws {
        let bytes = try #require(Data(base64Encoded: Self.stoppedClock.joined()))
        let log = try RunLog.parse(bytes, name: "fuzz", allowPartialLastLine: true)
        let start = Date()
        _ = try? Replay.run(log)
        #expect(Date().timeIntervalSince(start) < 10)
    }

    /// Found (the landing CI's 30 s fuzz run, replay target, a timeout): this log (frame 2 logged
    /// twice, 1,008 vblanks apart, the third line cut off) never ended. The replay display,
    /// unable to follow it, reported vblank 2^64 − 1, and a link whose last callback presented
    /// nothing skipped the callbacks it missed one frame at a time. It skips them in one step
    /// now; the replay ends at once and says it stalled.
    /// (Its time limit only stops a hang, as above.)
    @Test(.timeLimit(.minutes(10)))
    func aTimerLinkFarBehindSkipsItsMissedCallbacksInOneStep() throws {
        let bytes = try #require(Data(base64Encoded: Self.farBehindTimerLink.joined()))
        let log = try RunLog.parse(bytes, name: "fuzz", allowPartialLastLine: true)
        let start = Date()
        let r = try Replay.run(log)
        #expect(Date().timeIntervalSince(start) < 10)
        #expect(r.stalled && r.replayed.frames == 0, "\(r.replayed)")
    }

    /// The fuzz input, base64.
    static let farBehindTimerLink = [
        "eyJiYWNrZW5kIjoiZmFrZSIsImNvbW1pdE1hcmdpbk5zIjowLCJjcnRjIjowLCJmcmFtZXMiOjEwLCJoYXNIYXJkd2FyZVZC",
        "bGFuayI6dHJ1ZSwiaW5qZWN0TGF0ZSI6eyIyIjozfSwibGF0ZW5jeSI6MywicXVldWVDYXBhY2l0eSI6MiwicmFuZ2UiOnsi",
        "bWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwicmVjb3JkIjoicnVuIiwicmVmcmVzaEh6Ijo2MCwicmVm",
        "cmVzaEludGVydmFsTnMiOjE2NjY2NjY2LjY2NjY2NjY2Niwic3RhcnRlZEF0IjoiMjAyNi0xMS0yM1QxMzoyNDo1OFoiLCJ2",
        "ZE5zIjoxMDE2NjY3NTAwLCJyZW5kZXJTdGFydE5zIjoxMDE2NjY3NTAwLCJzY2hlZHVsZXJEZWxheU5zIjowLCJzZXF1ZW5j",
        "ZSI6MTAwNCwidmVyc2lvbiI6MSwid2FrZU5zIjoxMDE2NjY3NTAwfQp7ImJ1c3lSZXRyaWVzIjowLCJjYWxsYmFja05zIjoy",
        "MDY2MTk3ODI2LCJjYXVzZSI6InJlbmRlci1sYXRlIiwiY29tbWl0TnMiOjExMjQ3NjU1ODAsImNydGMiOjAsImRlYWRsaW5l",
        "TnMiOjEwODMwOTg5MTMsImRyb3BwZWRSZWZyZXNoZXMiOjMsImVmZmVjdGl2ZVJhdGVIeiI6NjAsImZsaXBOcyI6MTEzMzM0",
        "NTY1NywiZnJhbWUiOjIsImhpdGNoTnMiOjUwMjQyMTA4LCJpZCI6MywiaW50ZW50Ijp7ImtpbmQiOiJuZXh0IiwicmFuZ2Ui",
        "OnsibWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwidGFyZ2V0U2VxdWVuY2UiOjEwMTAsInRhcmdldFRp",
        "bWVOcyI6MTA4MzEwMzU0OX0sImludGVydmFsTnMiOjY2NTc5MDA5LCJpbnRlcnZhbFJlZnJlc2hlcyI6NCwibGF0ZVJlZnJl",
        "c2hlcyI6MywibGF0ZW5jeSI6Mywib3V0Y29tZSI6ImxhdGUiLCJyZWNlaXZlZE5zIjoxMTMzMzQwMDAwLCJyZW5kZXJFbmRO",
        "cyI6MTEyNDc2NTU4MCwicmVuZGVyU3RhcnROcyI6MTAzMzMzNTAwMCwic2NoZWR1bGVyRGVsYXlOcyI6MjM2MDg3LCJzZXF1",
        "ZW5jZSI6MTAwOCwidmVyc2lvbiI6MSwid2FrZU5zIjoxMDMzMzM1MDAwfQp7ImJ1c3lSZXRyaWVzIjowLCJjYWxsYmFja05z",
        "IjoyMjMzMjIzNzc0LCJjb21taXROcyI6MTEzMzM0MDAwMCwiY3J0YyI6MCwiZGVhZGxpbmVOcyI6MTE0OTk0NTIyMCwiZHJv",
        "cHBlZFJlZnJlc2hlcyI6MCwiZWZmZWN0aXZlUmF0ZUh6Ijo2MCwiZmxpcE5zIjoxMTQ5Nzg1MTI3LCJmcmFtZSI6MywiaGl0",
        "Y2hOcyI6LTMyMDE4NiwiaWQiOjQsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1pbmlt",
        "dW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDA5LCJ0YXJnZXRUaW1lTnMiOjExNDk5NDUyMjB9LCJp",
        "OTIyMzM3MjAzNjg1NDc3NTgwN250ZXJ2YWxOcyI6MTY0Mzk0NzAsImludEhISEhISEhISEhISEhISEhISEhISEhISEhISEhI",
        "SEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEhIZXJ2YWxSZWZy",
        "ZXNoZXMiOjEsImxhdGVSZWZyZXNoZXMiOjAsImxhdGVuY3kiOjMsIm91dGNvbWUiOiJvbi10aW1lIiwicmVjZWl2ZWROcyI6",
        "MTE1MDAwNzUwMCwicmVuZGVyRW5kTnMiOjExMjQ3NjU1ODAsInJlbmRlclN0YXJ0TnMiOjExMjQ3NjUyOTAsInNjaGVkdWxl",
        "ckRlbGF5TnMiOjAsInNlcXVlbmNlIjoxNDAxMDgzMDk4OTEzLCJkcm9wcGVkUmVmcmVzaGVzIjozLCJlZmZlY3RpdmVSYXRl",
        "SHoiOjYwLCJmbGlwTnMiOjExMzMzNDU2NTcsImZyYW1lIjoyLCJoaXRjaE5zIjo1MDI0MjEwOCwiaWQiOjMsImludGVudCI6",
        "eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1pbmltdW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNl",
        "cXVlbmNlIjoxMDA1LCJ0YXJnZXRUaW1lTnMiOjEwODMxMDM1NDl9LCJpbnRlcnZhbE5zIjo2NjU3OTAwOSwiaW50ZXJ2YWxS",
        "ZWZyZXNoZXMiOjQsImxhdGVSZWZyZXNoZXMiOjMsImxhdGVuY3kiOjMsIm91dGNvbWUiOiJsYXRlIiwicmVjZWl2ZWROcyI6",
        "MTEzMzM0MDAwMCwicmVuZGVyRW5kTnMiOjExMjQ3NjU1ODAsInJlbmRlclN0YXJ0TnMiOjEwMzMzMzUwMDAsInNjaGVkdWxl",
        "ckRlbGF5TnMiOjIzNjA4Nywic2VxdWVuY2UiOjIwMTYsInZlcnNpb24iOjEsIndha2VOcyI6MTAzMzMzNTAwMH0KeyJidXN5",
        "UmV0cmllcyI6MCwiY2FsbGJhY2tOcyI6MTExNjYxMTg4NywiY29tbWl0TnMiOjExMzMzNDAwMDAsImNydGMiOjAsImRlYWRs",
        "aW5lTnMiOjExNDk5NDUyMjAsImRyb3BwZWRSZWZyZXNoZXMiOjAsImVmZmVjdGV0cmllcyI6MCwiY2FsbGJhY2tOcyI6MTE0",
        "OTc4NTEyNywiY29tbWl0TnMiOjExNjY2NzUwMDAsImNydGMiOjAsImRlYWRsaW5lTnMiOjExODMxMSJzdGRkZXYiOjE1LjY3",
        "OTk0NDc2MDI2MjMwN30sImludGVydmFsUmVmcmVzaGVzIjp7IjEiOjgsIjQiOjF9LCJpbg=="
    ]

    /// The fuzz input, base64.
    static let stoppedClock = [
        "eyJiYWNrZW5kIjoiZmFrZSIsImNvbW1pdE1hcmdpbk5zIjowLCJjcnRjIjowLCJmcmFtZXMiOjEwLCJoYXNIYXJkd2FyZVZC",
        "bGFuayI6dHJ1ZSwiaW5qZWN0TGF0ZSI6eyIyIjozfSwibGF0ZW5jeSI6MywicXVldWVDYXBhY2l0eSI6MiwicmFuZ2UiOnsi",
        "bWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwicmVjb3JkIjoicnVuIiwicmVmcmVzaEh6Ijo2MCwicmVm",
        "cmVzaEludGVydmFsTnMiOjE2NjY2NjY2Ni42NjY2NjY2Niwic3RhcnRlZEF0IjoiMjAyNi0xMS0yM1QxMzoyNDo1OFoiLCJ2",
        "ZE5zIjoxMDE2NjY3NTAwLCJyZW5kZXJTdGFydE5zIjoxMDE2NjY3NTAwLCJzY2hlZHVsZXJEZWxheU5zIjowLCJzZXF1ZW5j",
        "ZSI6MTAwNCwidmVyc2lvbiI6MSwid2FrZU5zIjoxMDE2NjY3NTAwfQp7ImJ1c3lSZXRyaWVzIjowLCJjYWxsYmFja05zIjox",
        "MDMzMDk4OTEzLCJjYXVzZSI6InJlbmRlci1sYXRlIiwiY29tbWl0TnMiOjExMjQ3NjU1ODAsImNydGMiOjAsImRlYWRsaW5l",
        "TnMiOjEwODMwOTg5MTMsImRyb3BwZWRSZWZyZXNoZXMiOjMsImVmZmVjdGl2ZVJhdGVIeiI6NjAsImZsaXBOcyI6MTEzMzM0",
        "NTY1NywiZnJhbWUiOjIsImhpdGNoTnMiOjUwMjQyMTA4LCJpZCI6MywiaW50ZW50Ijp7ImtpbmQiOiJuZXh0IiwicmFuZ2Ui",
        "OnsibWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwidGFyZ2V0U2VxdWVuY2UiOjEwMDUsInRhcmdldFRp",
        "bWVOcyI6MTA4MzEwMzU0OX0sImludGVydmFsTnMiOjY2NTc5MDA5LCJpbnRlcnZhbFJlZnJlc2hlcyI6NCwibGF0ZVJlZnJl",
        "c2hlcyI6MywibGF0ZW5jeSI6Mywib3V0Y29tZSI6ImxhdGUiLCJyZWNlaXZlZE5zIjoxMTMzMzQwMDAwLCJyZW5kZXJFbmRO",
        "cyI6MTEyNDc2NTU4MCwicmVuZGVyU3RhcnROcyI6MTAzMzMzNTAwMCwic2NoZWR1bGVyRGVsYXlOcyI6MjM2MDg3LCJzZXF1",
        "ZW5jZSI6MTAwOCwidmVyc2lvbiI6MSwid2FrZU5zIjoxMDMzMzM1MDAwfQp7ImJ1c3lSZXRyaWVzIjowLCJjYWxsYmFja05z",
        "IjoxMTE2NjExODg3LCJjb21taXROcyI6MTEzMzM0MDAwMCwiY3J0YyI6MCwiZGVhZGxpbmVOcyI6MTE0OTk0NTIyMCwiZHJv",
        "cHBlZFJlZnJlc2hlcyI6MCwiZWZmZWN0aXZlUmF0ZUh6Ijo2MCwiZmxpcE5zIjoxMTQ5Nzg1MTI3LCJmcmFtZSI6MywiaGl0",
        "Y2hOcyI6LTE2MDA5MywiaWQiOjQsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1pbmlt",
        "dW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDA5LCJ0YXJnZXRUaW1lTnMiOjExNDk5NDUyMjB9LCJp",
        "bnRlcnZhbE5zIjoxNjQzOTQ3MCwiaW50ZXJ2YWxSZWZyZXNoZXMiOjEsImxhdGVSZWZyZXNoZXMiOjAsImxhdGVuY3kiOjMs",
        "Im91dGNvbWUiOiJvbi10aW1lIiwicmVjZWl2ZWROcyI6MTE1MDAwNzUwMCwicmVuZGVyRW5kTnMiOjIxMTQ3NjU1ODAsInJl",
        "bmRlclN0YXJ0TnMiOjExMjQ3NjUyOTAsInNjaGVkdWxlekRlbGF5TnMiOjAsInNlcXVlbmNlIjoxMDAxMDgzMDk4OTEzLCJk",
        "cm9wcGVkUmVmcmVzaGVzIjozLCJlZmZlY3RpdmVSYXRlSHoiOjYwLCJmbGlwTnMiOjExMzMzNDU2NTcsImZyYW1lIjoyLCJo",
        "aXRjaE5zIjo1MDI0MjEwOCwiaWQiOjMsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1p",
        "bmltdW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDA1LCJ0YXJnZXRUaW1lTnMiOjEwODMxMDM1NDl9",
        "LCJpbnRlcnZhbE5zIjo2NjU3OTAwOSwiaW50ZXJ2YWxSZWZyZXNoZXMiOjQsImxhdGVSZWZyZXNoZXMiOjMsImxhdGVuY3ki",
        "OjMsIm91dGNvbWUiOiJsYXRlIiwicmVjZWl2ZWROcyI6MTEzMzM0MDAwMCwicmVuZGVyRW5kTnMiOjExMjQ3NjU1ODAsInJl",
        "bmRlclN0YXJ0TnMiOjEwMzMzMzUwMDAsInNjaGVkdWxlckRlbGF5TnMiOjIzNjA4Nywic2VxdWVuY2UiOjEwMDgsInZlcnNp",
        "b24iOjEsIndha2VOcyI6MTAzMzMzNTAwMH0KeyJidXN5UmV0cmllcyI6MCwiY2FsbGJhY2tOcyI6MTExNjYxMTg4N15eXl5e",
        "Xl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5e",
        "Xl5eXl5eXl5eXl5eXl5eXl5eXl4sImNvbW1pdE5zIjoxMTMzMzQwMDAwLCJjcnRjIjowLCJkZWFkbGluZU5zIjoxMTQ5OTQ1",
        "MjIwLCJkcm9wcGVkUmVmcmVzaGVzIjowLCJlZmZlY3RldHJpZXMiOjAsImNhbGxiYWNrTnMiOjExNDk3ODUxMjcsImNvbW1p",
        "dE5zIjoxMTY2Njc1MDAwLCJjcnRjIjowLCJkZWFkbGluZU5zIjoxMTgzMTEic3RkZGV2IjoxNS42Nzk5NDQ3NjAyNjIzMDd9",
        "LCJpbnRlcnZhbFJlZnJlc2hlcyI6eyIxIjo4LCI0IjoxfSwiaW4="
    ]

    /// The fuzz input, base64.
    static let neverCompletingFlip = [
        "eyJiYWNrZW5kIjoiZmFrZSIsImNvbW1pdE1hcmdpbk5zIjowLCJjcnRjIjowLCJmcmFtZXMiOjEwLCJoYXNIYXJkd2FyZVZC",
        "bGFuayI6dHJ1ZSwiaW5qZWN0TGF0ZSI6eyIyIjozfSwibGF0ZW5jeSI6MywicXVldWVDYXBhY2l0eSI6MiwicmFuZ2UiOnsi",
        "bWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwicmVjb3JkIjoicnVuIiwicmVmcmVzaEh6Ijo2MCwicmVm",
        "cmVzaEludGVydmFsTnMiOjE2NjY2NjYuNjY2NjY2NjY2Niwic3RhcnRlZEF0IjoiMjAyNi0xMS0yM1QxMzoyNDo1OFoiLCJ2",
        "ZXJzaW9uIjoxfQp7ImJ1c3lSZXRyaWVzIjowLCJjYWxsYmFja05zIjoxMDAwMDAwMDAwLCJjb21taXROcyI6MTAzMzMzNTAw",
        "MCwiY3J0YyI6MCwiZGVhZGxpbmVOcyI6MTA1MDAwMDAwMCwiZHJvcHBlZFJlZnJlc2hlcyI6MCwiZWZmZWN0aXZlUmF0ZUh6",
        "Ijo2MCwiZmxpcE5zIjoxMDQwNzcwMjE2LCJmcmFtZSI6MCwiaGl0Y2hOcyI6LTIyOTc4NCwiaWQiOjEsImludGVudCI6eyJr",
        "aW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1pbmltdW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVl",
        "bmNlIjoxMDAzLCJ0YXJnZXRUaW1lTnMiOjEwNTAwMDAwMDB9LCJpbnRlcnZhbE5zIjowLCJpbnRlcnZhbFJlZnJlc2hlcyI6",
        "MCwibGF0ZVJlZnJlc2hlcyI6MCwibGF0ZW5jeSI6Mywib3V0Y29tZSI6Im9uLXRpbWUiLCJyZWNlaXZlZE5zIjoxMDUwMDAy",
        "NTAwLCJyZW5kZXJFbmROcyI6MTAwMDAwMDAwMCwicmVuZGVyU3RhcnROcyI6MTAwMDAwMDAwMCwic2NoZWR1bGVyRGVsYXlO",
        "cyI6MCwic2VxdWVuY2UiOjEwMDMsInZlcnNpb24iOjEsIndha2VOcyI6MTAwMDAwMDAwMH0KeyJidXN5UmV0cmllcyI6MCwi",
        "Y2FsbGJhY2tOcyI6MTAxNjgwODg4NiwiY29tbWl0TnMiOjEwNTAwMDI1MDAsImNydGMiOjAsImRlYWRsaW5lTnMiOjEwNjY4",
        "MDg4ODYsImRyb3BwZWRSZWZyZXNoZXMiOjAsImVmZmVjdGl2ZVJhdGVIeiI6NjAsImZsaXBOcyI6MTA2Njc2NjY0OCwiZnJh",
        "bWUiOjEsImhpdGNoTnMiOi00MjIzOCwiaWQiOjIsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0i",
        "OjAsIm1pbmltdW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDA0LCJ0YXJnZXRUaW1lTnMiOjEwNjY4",
        "MDg4ODZ9LCJpbnRlcnZhbE5zIjoxNjk5NjQzMiwiaW50ZXJ2YWxSZWZyZXNoZXMiOjEsImxhdGVSZWZyZXNoZXMiOjAsImxh",
        "dGVuY3kiOjMsIm91dGNvbWUiOiJvbi10aW1lIiwicmVjZWl2ZWROcyI6MTEyNDc2NTU4MCwicmVuZGVyRW5kTnMiOjEwMTY2",
        "Njc1MDAsInJlbmRlclN0YXJ0TnMiOjEwMTY2Njc1MDAsInNjaGVkdWxlckRlbGF5TnMiOjAsInNlcXVlbmNlIjoxMDA0LCJ2",
        "ZXJzaW9uIjoxLCJ3YWtlTnMiOjEwMTY2Njc1MDB9CnsiYnVzeVJldHJpZXMiOjAsImNhbGxiYWNrTnMiOjEwMzMwOTg5MTMs",
        "ImNhdXNlIjoicmVuZGVyLWxhdGUiLCJjb21taXROcyI6MTEyNDc2NTU4MCwiY3J0YyI6MCwiZGVhZGxpbmVOcyI6MTA4MzA5",
        "ODkxMywiZHJvcHBlZFJlZnJlc2hlcyI6MywiZWZmZWN0aXZlUmF0ZUh6Ijo2MCwiZmxpcE5zIjoxMTMzMzQ1NjU3LCJmcmFt",
        "ZSI6MiwiaGl0Y2hOcyI6NTAyNDIxMDgsImlkIjozLCJpbnRlbnQiOnsia2luZCI6Im5leHQiLCJyYW5nZSI6eyJtYXhpbXVt",
        "IjowLCJtaW5pbXVtIjowLCJwcmVmZXJyZWQiOjB9LCJ0YXJnZXRTZXF1ZW5jZSI6MTAwNSwidGFyZ2V0VGltZU5zIjoxMDgz",
        "MTAzNTQ5fSwiaW50ZXJ2YWxOcyI6NjY1NzkwMDksImludGVydmFsUmVmcmVzaGVzIjo0LCJsYXRlUmVmcmVzaGVzIjozLCJs",
        "YXRlbmN5IjozLCJvdXRjb21lIjoibGF0ZSIsInJlY2VpdmVkTnMiOjExMzMzNDAwMDAsInJlbmRlckVuZE5zIjoxMTI0NzY1",
        "NTgwLCJyZW5kZXJTdGFydE5zIjoxMDMzMzM1MDAwLCJzY2hlZHVsZXJEZWxheU5zIjoyMzYwODcsInNlcXVlbmNlIjoxMDA4",
        "LCJ2ZXJzaW9uIjoxLCJ3YWtlTnMiOjEwMzMzMzUwMDB9CnsiYnVzeVJldHJpZXMiOjAsImNhbGxiYWNrTnMiOjExMTY2MTE4",
        "ODcsImNvbW1pdE5zIjoxMTMzMzQwMDAwLCJjcnRjIjowLCJkZWFkbGluZU5zIjoxMTQ5OTQ1MjIwLCJkcm9wcGVkUmVmcmVz",
        "aGVzIjowLCJlZmZlY3RpdmVSYXRlSHoiOjYwLCJmbGlwTnMiOjExNDk3ODUxMjcsImZyYW1lIjozLCJoaXRjaE5zIjotMTYw",
        "MTkzLCJpZCI6NCwiaW50ZW50Ijp7ImtpbmQiOiJuZXh0IiwicmFuZ2UiOnsibWF4aW11bSI6MCwibWluaW11bSI6MCwicHJl",
        "ZmVycmVkIjowfSwidGFyZ2V0U2VxdWVuY2UiOjEwMDksInRhcmdldFRpbWVOcyI6MTE0OTk0NTIyMH0sImludGVydmFsTnMi",
        "OjE2NDM5NDcwLCJpbnRlcnZhbFJlZnJlc2hlcyI6MSwibGF0ZVJlZnJlc2hlcyI6MCwibGF0ZW5jeSI6Mywib3V0Y29tZSI6",
        "Im9uLXRpbWUiLCJyZWNlaXZlZE5zIjoxMTUwMDA3NTAwLCJyZW5kZXJFbmROcyI6MTEyNDc2NTU4MCwicmVuZGVyU3RhcnRO",
        "cyI6MTEyNDc2NTU4MCwic2NoZWR1bGVyRGVsYXlOcyI6MCwic2VxdWVuY2UiOjEwMDksInZlcnNpb24iOjEsIndha2VOcyI6",
        "MTEyNDc2NTU4MH0KeyJidXN5UmV0cmllcyI6MCwiY2FsbGJhY2tOcyI6MTEzMzM0NTY1NywiY29tbWl0TnMiOjExNTAwMDc1",
        "MDAsImNydGMiOjAsImRlYWRsaW5lTnMiOjExNjY2Nzg5OTAsImRyb3BwZWRSZWZyZXNoZXMiOjAsImVmZmVjdGl2ZVJhdGVI",
        "eiI6NjAsImZsaXBOcyI6MTE2NjQ5NDk3MywiZnJhbWUiOjQsImhpdGNoTnMiOi0xODQwMTcsImlkIjo1LCJpbnRlbnQiOnsi",
        "a2luZCI6Im5leHQiLCJyYW5nZSI6eyJtYXhpbXVtIjowLCJtaW5pbXVtIjowLCJwcmVmZXJyZWQiOjB9LCJ0YXJnZXRTZXF1",
        "ZW5jZSI6MTAxMCwidGFyZ2V0VGltZU5zIjoxMTY2Njc4OTkwfSwiaW50ZXJ2YWxOcyI6MTY3MDk4NDYsImludGVydmFsUmVm",
        "cmVzaGVzIjowLCJsYXRlUmVmcmVzaGVzIjowLCJsYXRlbmN5IjozLCJvdXRjb21lIjoib24tdGltZSIsInJlY2VpdmVkTnMi",
        "OjExNjY2NzUwMDAsInJlbmRlckVuZE5zIjoxMTMzMzQwMDAwLCJyZW5kZXJTdGFydE5zIjoxMTMzMzQwMDAwLCJzY2hlZHVs",
        "ZXJEZWxheU5zIjowLCJzZXF1ZW5jZSI6MTAxMCwidmVyc2lvbiI6MSwid2FrZU5zIjoxMTMzMzQwMDAwfQp7ImJ1c3lSZXRy",
        "aWVzIjowLCJjYWxsYmFja05zIjoxMTQ5Nzg1MTI3LCJjb21taXROcyI6MTE2NjY3NTAwMCwiY3J0YyI6MCwiZGVhZGxpbmVO",
        "cyI6MTE4MzExODQ2MCwiZHJvcHBlZFJlZnJlc2hlcyI6MCwiZWZmZWN0aXZlUmF0ZUh6Ijo2MCwiZmxpcE5zIjoxMTgzNTk4",
        "MzIyLCJmcmFtZSI6NSwiaGl0Y2hOcyI6NDc5ODYyLCJpZCI6NiwiaW50ZW50Ijp7ImtpbmQiOiJuZXh0IiwicmFuZ2UiOnsi",
        "bWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwidGFyZ2V0U2VxdWVuY2UiOjEwMTEsInRhcmdldFRpbWVO",
        "cyI6MTE4MzExODQ2MH0sImludGVydmFsTnMiOjE3MTAzMzQ5LCJpbnRlcnZhbFJlZnJlc2hlcyI6MSwibGF0ZVJlZnJlc2hl",
        "cyI6MCwibGF0ZW5jeSI6Mywib3V0Y29tZSI6Im9uLXRpbWUiLCJyZWNlaXZlZE5zIjoxMTgzMzQyNTAwLCJyZW5kZXJFbmRO",
        "cyI6MTE1MDAwNzUwMCwicmVuZGVyU3RhcnROcyI6MTE1MDAwNzUwMCwic2NoZWR1bGVyRGVsYXlOcyI6MCwic2VxdWVuY2Ui",
        "OjEwMTEsInZlcnNpb24iOjEsIndha2VOcyI6MTE1MDAwNzUwMH0KeyJidXN5UmV0cmllcyI6MCwiY2FsbGJhY2tOcyI6MTE2",
        "NjQ5NDk3MywiY29tbWl0TnMiOjExODMzNDI1MDAsImNydGMiOjAsImRlYWRsaW5lTnMiOjExOTk4MjgzMDYsImRyb3BwZWRS",
        "ZWZyZXNoZXMiOjAsImVmZmVjdGl2ZVJhdGVIeiI6NjAsImZsaXBOcyI6MTIwMDIzMjM3OSwiZnJhbWUiOjYsImhpdGNoTnMi",
        "OjQwNDA3MywiaWQiOjcsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1heGltdW0iOjAsIm1pbmltdW0iOjAs",
        "InByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDEyLCJ0YXJnZXRUaW1lTnMiOjExOTk4MjgzMDZ9LCJpbnRlcnZh",
        "bE5zIjoxNjYzNDA1NywiaW50ZXJ2YWxSZWZyZXNoZXMiOjEsImxhdGVSZWZyZXNoZXMiOjAsImxhdGVuY3kiOjMsIm91dGNv",
        "bWUiOiJvbi10aW1lIiwicmVjZWl2ZWROcyI6MTIwMDAxMDAwMCwicmVuZGVyRW5kTnMiOjExNjY2NzUwMDAsInJlbmRlclN0",
        "YXJ0TnMiOjExNjY2NzUwMDAsInNjaGVkdWxlckRlbGF5TnMiOjAsInNlcXVlbmNlIjoxMDEyLCJ2ZXJzaW9uIjoxLCJ3YWtl",
        "TnMiOjExNjY2NzUwMDB9CnsiYnVzeVJldHJpZXMiOjAsImNhbGxiYWNrTnMiOjExODM1OTgzMjIsImNvbW1pdE5zIjoxMjAw",
        "MDEwMDAwLCJjcnRjIjowLCJkZWFkbGluZU5zIjoxMjE2OTMxNjU1LCJkcm9wcGVkUmVmcmVzaGVzIjowLCJlZmZlY3RpdmVS",
        "YXRlSHoiOjYwLCJmbGlwTnMiOjEyMTY3NTkzMjIsImZyYW1lIjo3LCJoaXRjaE5zIjotMTcyMzMzLCJpZCI6OCwiaW50ZW50",
        "Ijp7ImtpbmQiOiJuZXh0IiwicmFuZ2UiOnsibWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwidGFyZ2V0",
        "U2VxdWVuY2UiOjEwMTMsInRhcmdldFRpbWVOcyI6MTIxNjkzMTY1NX0sImludGVydmFsTnMiOjE2NTI2OTQzLCJpbnRlcnZh",
        "bFJlZnJlc2hlcyI6MSwibGF0ZVJlZnJlc2hlcyI6MCwibGF0ZW5jeSI6Mywib3V0Y29tZSI6Im9uLXRpbWUiLCJyZWNlaXZl",
        "ZE5zIjoxMjE2Njc3NTAwLCJyZW5kZXJFbmROcyI6MTE4MzM0MjUwMCwicmVuZGVyU3RhcnROcyI6MTE4MzM0MjUwMCwic2No",
        "ZWR1bGVyRGVsYXlOcyI6MTY0MTA4NDUsInNlcXVlbmNlIjoxMDEzLCJ2ZXJzaW9uIjoxLCJ3YWtlTnMiOjExODMzNDI1MDB9",
        "CnsiYnVzeVJldHJpZXMiOjAsImNhbGxiYWNrTnMiOjEyMDAyMzIzNzksImNvbW1pdE5zIjoxMjE2Njc3NTAwLCJjcnRjIjow",
        "LCJkZWFkbGluZU5zIjoxMjMzNTY1NzEyLCJkcm9wcGVkUmVmcmVzaGVzIjowLCJlZmZlY3RpdmVSYXRlSHoiOjYwLCJmbGlw",
        "TnMiOjEyMzMwNjA0NDcsImZyYW1lIjo4LCJoaXRjaE5zIjotNTA1MjY1LCJpZCI6OSwiaW50ZW50Ijp7ImtpbmQiOiJuZXh0",
        "IiwicmFuZ2UiOnsibWF4aW11bSI6MCwibWluaW11bSI6MCwicHJlZmVycmVkIjowfSwidGFyZ2V0U2VxdWVuY2UiOjEwMTQs",
        "InRhcmdldFRpbWVOcyI6MTIzMzU2NTcxMn0sImludGVydmFsTnMiOjE2MzAxMTI1LCJpbnRlcnZhbFJlZnJlc2hlcyI6MSwi",
        "bGF0ZVJlZnJlc2hlcyI6MCwibGF0ZW5jeSI6Mywib3V0Y29tZSI6Im9uLXRpbWUiLCJyZWNlaXZlZE5zIjoxMjMzMzQ1MDAw",
        "LCJyZW5kZXJFbmROcyI6MTIwMDAxMDAwMCwicmVuZGVyU3RhcnROcyI6MTIwMDAxMDAwMCwic2NoZWR1bGVyRGVsYXlOcyI6",
        "MTY0NDQyODgsInNlcXVlbmNlIjoxMDE0LCJ2ZXJzaW9uIjoxLCJ3YWtlTnMiOjEyMDAwMTAwMDB9CnsiYnVzeVJldHJpZXMi",
        "OjAsImNhbGxiYWNrTnMiOjEyMTY3NTkzMjIsImNvbW1pdE5zIjoxMjMzMzQ1MDAwLCJjcnRjIjowLCJkZWFkbGluZU5zIjox",
        "MjUwMDkyNjU1LCJkcm9wcGVkUmVmcmVzaGVzIjowLCJlZmZlY3RpdmVSYXRlSHoiOjYwLCJmbGlwTnMiOjEyNDk4ODI1Mzcs",
        "ImZyYW1lIjo5LCJoaXRjaE5zIjotMjEwMTE4LCJpZCI6MTAsImludGVudCI6eyJraW5kIjoibmV4dCIsInJhbmdlIjp7Im1h",
        "eGltdW0iOjAsIm1pbmltdW0iOjAsInByZWZlcnJlZCI6MH0sInRhcmdldFNlcXVlbmNlIjoxMDE1LCJ0YXJnZXRUaW1lTnMi",
        "OjEyNTAwOTI2NTV9LCJpbnRlcnZhbE5zIjoxNjgyMjA5MCwiaW50ZXJ2YWxSZWZyZXNoZXMiOjEsImxhdGVSZWZyZXNoZXMi",
        "OjAsImxhdGVuY3kiOjMsIm91dGNvbWUiOiJvbi10aW1lIiwicmVjZWl2ZWROcyI6MTI1MDAxMjUwMCwicmVuZGVyRW5kTnMi",
        "OjEyMTY2Nzc1MDAsInJlbmRlclN0YXJ0TnMiOjEyMTY2Nzc1MDAsInNjaGVkdWxlckRlbGF5TnMiOjE2NTg0ODQ1LCJzZXF1",
        "ZW5jZSI6MTAxNSwidmVyc2lvbiI6MSwid2FrZU5zIjoxMjE2Njc3NTAwfQp7InJlY29yZCI6ImVuZCIsInN1bW1hcnkiOnsi",
        "YmFja2VuZCI6ImZha2UiLCJjYXVzZXMiOnsicmVuZGVyLWxhdGUiOjF9LCJkaXNjYXJkZWQiOjAsImRyb3BFdmVudHMiOjEs",
        "ImRyb3BwZWRSZWZyZXNoZXMiOjMsImR1cmF0aW9uU2Vjb25kcyI6MC4yMDAxMTIzMjEsImVmZmVjdGl2ZVJhdGVIeiI6NjAs",
        "ImVuZFJlYXNvbiI6ImNvbXBsZXRlZCIsImZhaWxlZCI6MCwiZnJhbWVzIjoxMCwiaGl0Y2hUaW1lUmF0aW8iOjI1MS4wNjk1",
        "MzgwOTIwNTk4MiwiaW50ZXJ2YWxNcyI6eyJjb3VudCI6OSwibWF4Ijo2Ni41NzkwMDksIm1lYW4iOjIyLjIzNDcwMjMzMzMz",
        "MzMzNSwibWluIjoxNi4zMDExMjUsInA1MCI6MTYuNzA5ODQ2LCJwOTkiOjYyLjYyMDk1NjE5OTk5OTk5tSwic3RkZGV2Ijox",
        "NS42Nzk5NDQ3NjAyNjIzMDd9LCJpbnRlcnZhbFJlZnJlc2hlcyI6eyIxIjo4LCI0IjoxfSwiaW4=",
    ]

    /// Numbers no real run writes are refused with one line, before the pacer sees them.
    @Test func hostileNumbersAreRefused() throws {
        let good = try recorded(config(frames: 20))
        var edits: [(String, (inout RunLog) -> Void)] = []
        edits.append(("refresh 0", { $0.header!.refreshIntervalNs = 0 }))
        edits.append(("refresh NaN", { $0.header!.refreshIntervalNs = .nan }))
        edits.append(("refresh 1e300", { $0.header!.refreshIntervalNs = 1e300 }))
        edits.append(("VRR inverted", { $0.header!.vrrRangeHz = [144, 48] }))
        edits.append(("latency 9", { $0.header!.latency = 9 }))
        edits.append(("inject-late huge K", { $0.header!.injectLate = ["3": Int.max] }))
        edits.append(("min duration 1e18", { $0.header!.minDurationNs = 1_000_000_000_000_000_000 }))
        edits.append(("commit margin negative", { $0.header!.commitMarginNs = -5 }))
        edits.append(("queue capacity huge", { $0.header!.queueCapacity = 1 << 40 }))
        edits.append(("frame 10^12", { $0.records[3].frame = 1_000_000_000_000 }))
        edits.append(("negative time", { $0.records[3].flipNs = -1 }))
        edits.append(("time Int64.max", { $0.records[3].receivedNs = .max }))
        edits.append(("sequence 2^63", { $0.records[3].sequence = 1 << 63 }))
        edits.append(("busy retries huge", { $0.records[3].busyRetries = 1 << 40 }))
        edits.append(("flip time backwards", { $0.records[5].flipNs = $0.records[2].flipNs }))
        edits.append(("receipt an hour after every flip", { $0.records[4].receivedNs += 3_600_000_000_000 }))
        edits.append(("flips a year apart", {
            for i in $0.records.indices where i > 10 { $0.records[i].flipNs += 31_536_000_000_000_000 }
        }))
        for (name, edit) in edits {
            var log = good
            edit(&log)
            #expect(throws: ReplayDisplay.Unreplayable.self, "\(name)") { try Replay.run(log) }
        }
        #expect(try Replay.run(good).differences == [])
    }

    /// The reader refuses numbers no run writes, naming the line and the field.
    @Test func readerRefusesOutOfRangeFields() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: try recordRun(config(frames: 5), in: dir).path, encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        for (field, value, line) in [("\"flipNs\":", "-1", 3), ("\"intervalRefreshes\":", "99999999999", 4), ("\"frame\":", "-7", 2),
                                     ("\"refreshIntervalNs\":", "0", 1)] {
            var edited = lines
            let l = edited[line - 1]
            let r = try #require(l.range(of: field))
            let end = l[r.upperBound...].firstIndex { $0 == "," || $0 == "}" }!
            edited[line - 1] = String(l[..<r.upperBound]) + value + String(l[end...])
            let data = Data((edited.joined(separator: "\n") + "\n").utf8)
            #expect(throws: RunLog.Invalid.self, "\(field)") { try RunLog.parse(data, name: "x.jsonl") }
            do { _ = try RunLog.parse(data, name: "x.jsonl") } catch {
                #expect("\(error)".hasPrefix("x.jsonl: line \(line): ") && "\(error)".contains("out of range"), "\(error)")
            }
        }
        lines.removeLast()
        #expect(try RunLog.parse(Data((lines.joined(separator: "\n") + "\n").utf8), name: "x").records.count == 5)
    }

    /// Found by the runlog target: the accounting of frame lines with absurd values (report's
    /// analysis) trapped on overflow. It wraps now, and the picture is still drawn.
    @Test func reportOfAbsurdValuesDoesNotTrap() throws {
        var log = try recorded(config(frames: 20))
        for i in log.records.indices {
            log.records[i].intervalNs = .max
            log.records[i].hitchNs = .max
            log.records[i].lateRefreshes = 1
            log.records[i].droppedRefreshes = .max
            log.records[i].flipNs = i % 2 == 0 ? .min : .max
        }
        let s = LogAnalysis.summary(of: log)
        #expect(s.frames == 20)
        let chart = ReportChart(log: log, width: 480, height: 320)
        #expect(!SVGReport.svg(chart).isEmpty)
        #expect(!PNGReport.encode(chart).isEmpty)
    }
}
