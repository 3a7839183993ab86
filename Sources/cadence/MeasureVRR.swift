import ArgumentParser
import CadenceCore
import CadenceSession
import KMSDisplay

/// `cadence measure --vrr on|auto`: the VRR sweep's report (CadenceSession's `MeasureSession`
/// runs it).
extension MeasureCommand {
    /// Prints the sweep (text or `--json`); an in-range step missing its interval by more than
    /// 1% exits 1.
    func report(_ sweep: VRRSweepResult, stoppedBy signal: Int32?) throws {
        let m = sweep.selection.mode, range = sweep.range, conn = sweep.selection.connector.name
        if json {
            var fields: [(String, JSON)] = [
                ("driver", .string(sweep.driver)), ("device", .string(sweep.device)), ("connector", .string(conn)),
                ("mode", .string("\(m.hdisplay)x\(m.vdisplay)")), ("nominalRefreshHz", .number(m.refreshHz, decimals: 4)),
                ("vrrRangeHz", .array([.number(range.lowerBound, decimals: 4), .number(range.upperBound, decimals: 4)])),
                ("vrrSweep", .array(sweep.steps.map(Self.json))),
            ]
            if let sim = sweep.simulator { fields.insert(("backend", .string(sim)), at: 0) }
            print(JSON.object(fields).rendered)
        } else {
            print(Self.sweepText(sweep.steps, header: "\(sweep.device) \(sweep.driver) \(conn) \(m.hdisplay)x\(m.vdisplay)@\(String(format4: m.refreshHz)) VRR \(String(format4: range.lowerBound))–\(String(format4: range.upperBound)) Hz"))
        }
        if sweep.stopped, let s = signal { printError("stopped by signal \(s) after \(sweep.steps.count) steps; display restored") }
        for s in sweep.missed {
            printError("check failed: \(String(format4: s.requestedHz)) Hz: mean interval \(String(format4: s.achievedMeanMs)) ms for \(String(format4: s.requestedIntervalMs)) ms requested")
        }
        if !sweep.missed.isEmpty { throw ExitCode(1) }
    }

    static func json(_ s: VRRSweepStep) -> JSON {
        .object([
            ("requestedHz", .number(s.requestedHz, decimals: 4)), ("requestedIntervalMs", .number(s.requestedIntervalMs, decimals: 4)),
            ("achievedMeanMs", .number(s.achievedMeanMs, decimals: 4)), ("achievedStddevMs", .number(s.achievedStddevMs, decimals: 4)),
            ("count", .int(s.count)), ("refreshesPerFrame", .number(s.refreshesPerFrame, decimals: 3)),
            ("refreshMs", .number(s.refreshMs, decimals: 4)), ("belowRange", .bool(s.belowRange)), ("held", .bool(s.held)),
        ])
    }

    static func sweepText(_ steps: [VRRSweepStep], header: String) -> String {
        func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: Swift.max(0, n - s.count)) + s }
        var lines = [header, "  requested Hz  interval ms  achieved ms  stddev ms  count  refr/frame  refresh ms"]
        for s in steps {
            lines.append("  " + [pad(String(format4: s.requestedHz), 12), pad(String(format4: s.requestedIntervalMs), 11),
                                 pad(String(format4: s.achievedMeanMs), 11), pad(String(format4: s.achievedStddevMs), 9),
                                 pad("\(s.count)", 5), pad(String(format4: s.refreshesPerFrame), 10),
                                 pad(String(format4: s.refreshMs), 10)].joined(separator: "  ")
                         + (s.belowRange ? "  below range: LFC" : ""))
        }
        return lines.joined(separator: "\n")
    }
}
