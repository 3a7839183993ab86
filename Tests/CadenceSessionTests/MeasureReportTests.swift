import CadenceCore
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Testing

/// `MeasureReport`: what `cadence measure` prints of its results.
@Suite(.serialized) struct MeasureReportTests {
    @Test func oneOutputsBlockAndObject() throws {
        let plan = MeasurePlan(backend: .fakeDRM(profiles: nil), durationSeconds: 0.5)
        let session = try MeasureSession.open(plan, notice: { _ in })
        guard case .refresh(let results) = try session.run(notice: { _ in }) else {
            Issue.record("expected the fixed refresh measured")
            return
        }
        let report = MeasureReport(results)
        let r = try #require(results.first)
        let m = r.selection.mode
        let lines = report.text.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "/dev/dri/card0 \(r.driver) \(r.selection.connector.name) \(m.hdisplay)x\(m.vdisplay) (\(r.selection.source), \(r.api.rawValue), \(r.allocator.rawValue))"
        )
        #expect(lines.contains("  flips             \(r.measurement.flips)"))
        #expect(lines.contains("  missed vblanks    0") && lines.contains("  vblank            hardware"))
        #expect(lines.filter { $0.hasPrefix("  check pass  ") }.count == r.measurement.checks.count)
        #expect(!report.several && report.failureLines.isEmpty && report.nothingMeasuredLine == nil)
        #expect(report.stoppedLine(signal: 2) == nil)
        // The object's keys in their order, the backend first for a simulator.
        #expect(
            report.json.hasPrefix(
                "{\"backend\":\"\(r.simulator ?? "")\",\"driver\":\"\(r.driver)\",\"device\":\"/dev/dri/card0\""))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        #expect(object["flips"] as? Int == r.measurement.flips && object["durationS"] as? Double == 0.5)
        #expect(object["checksPassed"] as? Bool == true && object["warmupFlips"] as? Int == 3)
    }

    @Test func aSweepsTableAndObject() throws {
        var plan = MeasurePlan(backend: .fakeDRM(profiles: "amdgpu-vrr"), durationSeconds: 2)
        plan.vrr = .on
        let session = try MeasureSession.open(plan, notice: { _ in })
        guard case .vrrSweep(let sweep) = try session.run(notice: { _ in }) else {
            Issue.record("expected a VRR sweep")
            return
        }
        let lines = sweep.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 + sweep.steps.count)
        #expect(lines[0].hasSuffix(" DP-1 1920x1080@144.0014 VRR 48.0000–144.0000 Hz"))
        #expect(lines[1] == "  requested Hz  interval ms  achieved ms  stddev ms  count  refr/frame  refresh ms")
        // 36 Hz, below the 48 Hz minimum: LFC.
        #expect(lines[2].hasPrefix("       36.0000      27.7778") && lines[2].hasSuffix("  below range: LFC"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(sweep.json.utf8)) as? [String: Any])
        #expect(object["vrrRangeHz"] as? [Double] == [48, 144] && object["connector"] as? String == "DP-1")
        let steps = try #require(object["vrrSweep"] as? [[String: Any]])
        #expect(
            steps.count == 10 && steps.first?["requestedHz"] as? Double == 36
                && steps.first?["belowRange"] as? Bool == true)
        #expect(sweep.failureLines.isEmpty && sweep.stoppedLine(signal: 15) == nil)
    }

    @Test func refusalsAndFailuresAreOneLine() {
        #expect(MeasureSession.Refusal.invalidDuration(-1).line == "invalid --duration -1.0: expected seconds > 0")
        #expect(
            MeasureSession.Refusal.crcNeedsFixedRefresh.line == "--verify crc checks the fixed refresh: leave out --vrr"
        )
        #expect(
            MeasureSession.Notice.simulator("vkms").line
                == "notice: vkms: a fake DRM device (simulator) on virtual time, not a panel")
        #expect(
            MeasureSession.Notice.timestampsNotMonotonic(
                output: OutputName(connector: "DP-1", name: "DP-1"), driver: "x"
            ).line == nil)
    }
}
