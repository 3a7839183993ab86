import CadenceCore
import Foundation
import Testing

/// A run's end is typed in memory and today's exact text in JSON (`endReason`).
@Suite struct RunEndTests {
    static let ends: [(RunEnd, String)] = [
        (.completed, "completed"),
        (.stopped, "stopped"),
        (.deviceLost("drmModeAtomicCommit: No such device"), "device-lost: drmModeAtomicCommit: No such device"),
        (.disconnected("DP-1 reported disconnected"), "disconnected: DP-1 reported disconnected"),
        (.rotated, "rotated (continued in the next file)"),
        (.unfinished, "unfinished (no end record)"),
        (.other("a future reason"), "a future reason")
    ]

    /// Every end renders as today's string, and reads back as itself.
    @Test func everyEndRoundTripsThroughItsReason() {
        for (end, text) in Self.ends {
            #expect(end.reason == text)
            #expect(RunEnd(reason: text) == end, "\(text)")
        }
    }

    /// In a summary's JSON the end is the `endReason` string, byte for byte; decoding gives the
    /// typed end back, and encoding the decoded summary gives the same bytes.
    @Test func everyEndRoundTripsThroughJSON() throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        for (end, text) in Self.ends {
            let s = RunSummary(
                accounting: FrameAccounting(), backend: "fake", refreshHz: 60, vrr: nil, effectiveRateHz: 60,
                latency: 1, end: end)
            let data = try enc.encode(s)
            let json = String(decoding: data, as: UTF8.self)
            let quoted = String(decoding: try enc.encode(text), as: UTF8.self)
            #expect(json.contains("\"endReason\":\(quoted)"), "\(json)")
            #expect(!json.contains("\"end\""))
            let back = try JSONDecoder().decode(RunSummary.self, from: data)
            #expect(back.end == end && back.endReason == text)
            #expect(try enc.encode(back) == data)
        }
    }

    /// Text that only looks like a known end stays as written.
    @Test func lookAlikesAreOther() {
        for text in ["device-lost", "device-lost:x", "disconnected", "Completed", ""] {
            #expect(RunEnd(reason: text) == .other(text), "\(text)")
            #expect(RunEnd(reason: text).reason == text)
        }
        #expect(RunEnd(reason: "device-lost: ") == .deviceLost(""))
    }

    /// Only a lost device and an unplugged output are the display failing (exit 1).
    @Test func displayFailures() {
        #expect(
            Self.ends.filter { $0.0.isDisplayFailure }.map(\.1)
                == ["device-lost: drmModeAtomicCommit: No such device", "disconnected: DP-1 reported disconnected"])
    }

    /// Causes and interval lengths read typed, in the printed order.
    @Test func typedCausesAndIntervals() {
        var s = RunSummary(
            accounting: FrameAccounting(), backend: "fake", refreshHz: 60, vrr: nil, effectiveRateHz: 60,
            latency: 1, end: .completed)
        s.causes = ["scheduler-late": 1, "busy": 2, "render-late": 3, "from-the-future": 4]
        s.intervalRefreshes = ["10": 1, "2": 5, "32+": 2, "1": 100]
        #expect(s.causeCounts == [.schedulerLate: 1, .busy: 2, .renderLate: 3])
        #expect(s.causesByName.map(\.cause) == [.busy, .renderLate, .schedulerLate])
        #expect(s.intervalRefreshCounts.map(\.key) == ["1", "2", "10", "32+"])
        #expect(s.intervalRefreshCounts.map(\.intervals) == [100, 5, 1, 2])
        #expect(s.intervalRefreshCounts.last?.orMore == true)
    }
}
