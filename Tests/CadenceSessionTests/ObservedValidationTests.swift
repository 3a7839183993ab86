import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// `ObservedValidation`: the client an observation judges, or the failed `flips` criterion.
@Suite struct ObservedValidationTests {
    static let trace = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("DRMTraceTests/Fixtures/vkms-inject-late.trace").path

    static func observed(keepFrames: Bool = false) throws -> (result: ObserveResult, frames: [String: [FrameReport]]) {
        var o = Observation()
        o.fromTrace = trace
        o.duration = 4
        o.keepFrames = keepFrames
        let r = try o.run()
        return (r.result, r.frames)
    }

    @Test func aClientThatDidNotFlipIsAFailedFlipsCriterion() throws {
        let (result, _) = try Self.observed()
        guard case .noFlips(let none) = ObservedValidation.pick(result, client: "nosuch") else {
            Issue.record("picked a client")
            return
        }
        #expect(none.client == "nosuch")
        #expect(none.flipping.contains("cadence"))
        #expect(none.reason.hasPrefix("no flips observed from nosuch (flipping: "))
        #expect(none.criterion.name == "flips")
        #expect(!none.criterion.passed)
        #expect(none.criterion.detail == "\(none.reason) in \(String(format: "%.1f", result.durationSeconds)) s")
        #expect(none.summary.backend == "observed")
        #expect(none.summary.frames == 0)
        #expect(none.summary.durationSeconds == result.durationSeconds)
    }

    @Test func theBusiestClientIsJudgedAgainstItsCRTCsMode() throws {
        let (result, frames) = try Self.observed()
        guard case .picked(let p) = ObservedValidation.pick(result, client: nil) else {
            Issue.record("nothing picked")
            return
        }
        #expect(p.client.client == "cadence")
        #expect(p.summary.presented == 62)
        #expect(p.crtc?.crtc == p.client.crtc)
        var criteria = ValidationCriteria()
        criteria.maxDropped = 0
        let judged = ObservedValidation.judge(
            p, with: OutputJudge(criteria: criteria), frames: frames, device: "/dev/dri/card0")
        #expect(judged.split == nil)
        #expect(judged.results.map(\.name) == ["max-dropped"])
        #expect(judged.results.first?.passed == (p.summary.droppedRefreshes == 0))
        // Named: the same client.
        guard case .picked(let named) = ObservedValidation.pick(result, client: "cadence") else {
            Issue.record("nothing picked")
            return
        }
        #expect(named.client.key == p.client.key)
    }

    @Test func withoutTheModeAFailedRefreshToleranceSaysSo() throws {
        let (result, frames) = try Self.observed()
        guard case .picked(var p) = ObservedValidation.pick(result, client: nil) else {
            Issue.record("nothing picked")
            return
        }
        p.measuredRefreshHz = nil
        var criteria = ValidationCriteria()
        criteria.refreshTolerancePercent = 0.001
        let judged = ObservedValidation.judge(
            p, with: OutputJudge(criteria: criteria), frames: frames, device: "/dev/dri/card7")
        let r = try #require(judged.results.first { $0.name == "refresh-tolerance" })
        #expect(!r.passed)
        #expect(r.detail == "the CRTC's nominal refresh is unknown (its mode could not be read from /dev/dri/card7)")
    }
}
