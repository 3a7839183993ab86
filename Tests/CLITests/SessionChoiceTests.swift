import CadenceSession
import DRM
import Foundation
import Testing
@testable import cadence

/// `--session auto|seat|direct` through the CLI binary. libseat's backend is picked with
/// `LIBSEAT_BACKEND` in the child's environment: `noop` is a seat that always answers (it opens
/// nodes with open(2)), an unknown name is a seat that does not. No seat daemon is needed.
@Suite(.serialized) struct SessionChoiceTests {
    let noSeat = ["LIBSEAT_BACKEND": "no-such-backend"]
    let noopSeat = ["LIBSEAT_BACKEND": "noop"]

    func lines(_ s: String) -> [String] { s.split(separator: "\n").map(String.init) }

    @Test func aBadSessionIsOneLineExitTwo() throws {
        let dir = NSTemporaryDirectory()
        for cmd in [["run", "--backend", "fake"], ["list"], ["measure"], ["validate", "--backend", "fake", "--max-dropped", "0"]] {
            let r = try cadence(cmd + ["--session", "bogus"], in: dir)
            #expect(r.status == 2, "\(cmd)")
            #expect(lines(r.err) == ["cadence \(cmd[0]): --session must be auto, seat or direct"], "\(cmd): \(r.err)")
            #expect(r.out.isEmpty)
        }
    }

    @Test func seatWithoutASeatIsOneLineExitTwo() throws {
        let dir = NSTemporaryDirectory()
        for cmd in [["run", "--backend", "kms", "--device", "/dev/null"], ["list", "--device", "/dev/null"],
                    ["measure", "--device", "/dev/null"],
                    ["validate", "--backend", "kms", "--device", "/dev/null", "--max-dropped", "0"]] {
            let r = try cadence(cmd + ["--session", "seat"], in: dir, environment: noSeat)
            #expect(r.status == 2, "\(cmd)")
            let err = lines(r.err)
            #expect(err.count == 1 && err[0].hasPrefix("cadence \(cmd[0]): --session seat: no seat answered (no-such-backend: "),
                    "\(cmd): \(r.err)")
            #expect(r.out.isEmpty)
        }
    }

    /// `auto` without a seat says so in one line and opens directly: the same error as
    /// `direct` follows (here /dev/null is no DRM node).
    @Test func autoWithoutASeatFallsBackToDirectAndSaysSo() throws {
        let dir = NSTemporaryDirectory()
        let direct = try cadence(["run", "--backend", "kms", "--device", "/dev/null", "--session", "direct"], in: dir, environment: noSeat)
        let auto = try cadence(["run", "--backend", "kms", "--device", "/dev/null", "--session", "auto"], in: dir, environment: noSeat)
        #expect(direct.status == 2 && auto.status == 2)
        let d = lines(direct.err), a = lines(auto.err)
        #expect(d.count == 1)
        #expect(a.count == 2 && a[0].hasPrefix("cadence run: session: direct access (open(2)): no seat answered"), "\(auto.err)")
        #expect(a.last == d.first)
    }

    /// Through a seat that answers, the node is opened by the seat: /dev/null gets as far as the
    /// DRM check, exactly as with direct access; `auto` names the seat it took.
    @Test func seatThatAnswersOpensTheNode() throws {
        let dir = NSTemporaryDirectory()
        let direct = try cadence(["list", "--device", "/dev/null"], in: dir)
        let seat = try cadence(["list", "--device", "/dev/null", "--session", "seat"], in: dir, environment: noopSeat)
        #expect(direct.status == 2 && seat.status == 2)
        #expect(lines(seat.err) == lines(direct.err), "\(seat.err) vs \(direct.err)")
        let auto = try cadence(["run", "--backend", "kms", "--device", "/dev/null", "--session", "auto"], in: dir, environment: noopSeat)
        let a = lines(auto.err)
        #expect(auto.status == 2 && a.count == 2 && a[0].hasSuffix("through noop (libseat)"), "\(auto.err)")
    }

    /// The seat is asked only when a card is opened: the fake display never probes it.
    @Test func theFakeDisplayNeverProbesTheSeat() throws {
        let dir = NSTemporaryDirectory()
        let r = try cadence(["run", "--backend", "fake", "--frames", "10", "--session", "seat", "--quiet"], in: dir, environment: noSeat)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "\(r.err)")
    }

    /// The fake display's scripted session pause through the CLI: a stderr line at the pause and
    /// at the resume, the gap in the JSON summary and in the log, no drops, and `replay` of the
    /// log reproduces the summary.
    @Test func aScriptedPauseOnTheFakeDisplay() throws {
        let dir = NSTemporaryDirectory() + "cadence-session-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--scene", "solid", "--duration", "5", "--fake-session-pause", "1:2,3.5:0.5",
                             "--json", "--quiet", "--log", "run.jsonl"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let err = lines(r.err)
        #expect(err.count == 4 && err[0].hasPrefix("session paused") && err[1].hasPrefix("session resumed after 2.0")
                && err[3].hasPrefix("session resumed after 0.5"), "\(r.err)")
        let s = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        #expect(s?["sessionGaps"] as? Int == 2)
        #expect(abs((s?["sessionGapSeconds"] as? Double ?? 0) - 2.5) <= 2.0 / 60, "\(String(describing: s?["sessionGapSeconds"]))")
        #expect(s?["droppedRefreshes"] as? Int == 0)
        let log = try String(contentsOfFile: dir + "/run.jsonl", encoding: .utf8)
        let events = lines(log).filter { $0.contains(#""record":"session""#) }
        #expect(events.count == 4 && events[0].contains(#""event":"paused""#) && events[1].contains(#""gapNs":"#), "\(events)")
        let replay = try cadence(["replay", "run.jsonl"], in: dir)
        #expect(replay.status == 0 && replay.out.contains("equals the recorded one"), "\(replay.out)\(replay.err)")
        let text = try cadence(["run", "--backend", "fake", "--scene", "solid", "--duration", "3", "--fake-session-pause", "1:1", "--quiet"], in: dir)
        #expect(lines(text.out).contains { $0.hasPrefix("session gaps      1  (1.000 s away") }, "\(text.out)")
        let bad = try cadence(["run", "--backend", "fake", "--fake-session-pause", "1"], in: dir)
        #expect(bad.status == 2 && lines(bad.err) == ["cadence run: --fake-session-pause '1' must be AT:FOR[,…] in seconds (AT ≥ 0, FOR > 0)"], "\(bad.err)")
    }

    /// In-process: the opener probes once and keeps the answer.
    @Test func theOpenerProbesOnce() throws {
        var probes = 0
        let source = SessionMode.seat.source(command: "run", probe: {
            probes += 1
            return try SeatSession.open(backends: ["noop"], timeoutMilliseconds: 1000)
        })
        let a = try source.open("/dev/null"), b = try source.open("/dev/null")
        #expect(probes == 1)
        #expect(a.seat != nil && a.seat === b.seat)
        let direct = try SessionMode.direct.source(command: "run").open("/dev/null")
        #expect(direct.seat == nil)
    }
}
