import ArgumentParser
import CadenceCore
import DRM
import KMSDisplay

/// `cadence measure --vrr on|auto`: the VRR sweep (``VRRSweep``) on the selected output.
extension MeasureCommand {
    /// Runs the sweep and prints it; false when `policy` is auto and VRR is unavailable (the
    /// fixed-refresh measurement runs instead, after one notice line). `--vrr on` without VRR
    /// is one line and exit 2; an in-range step missing its interval by more than 1% exits 1.
    func measureVRR(_ dev: DRMDevice, path: String, driver: String, selection: OutputSelection,
                    allocator: BufferAllocator, api: ModesetAPI, policy: VRRPolicy) throws -> Bool {
        let display: KMSDisplay
        do {
            display = try KMSDisplay.open(on: dev, connector: selection.connector.name, mode: mode,
                                          allocator: allocator, api: api, vrr: .on)
        } catch let e as OutputSelectionError where e.kind == .vrrUnavailable {
            if policy == .auto {
                printError("notice: \(e.description): measuring the fixed refresh")
                return false
            }
            throw CLIFailure("--vrr on: \(e.description)")
        } catch let e as OutputSelectionError {
            throw CLIFailure(e.description)
        }
        let range = display.vrrRange ?? 0...0
        let stop = SignalStop()
        defer { stop.remove() }
        let steps: [VRRSweepStep]
        do {
            steps = try VRRSweep.run(on: display, secondsPerStep: duration / 10, shouldStop: { stop.isRequested })
        } catch let f as BackendFailure {
            try? display.close()
            printError("cadence measure: VRR sweep failed: \(f)")
            throw ExitCode(1)
        }
        do { try display.close() } catch { printError("warning: could not restore \(display.output.crtc): \(error)") }
        let m = selection.mode
        if json {
            var fields: [(String, JSON)] = [
                ("driver", .string(driver)), ("device", .string(path)), ("connector", .string(selection.connector.name)),
                ("mode", .string("\(m.hdisplay)x\(m.vdisplay)")), ("nominalRefreshHz", .number(m.refreshHz, decimals: 4)),
                ("vrrRangeHz", .array([.number(range.lowerBound, decimals: 4), .number(range.upperBound, decimals: 4)])),
                ("vrrSweep", .array(steps.map(Self.json))),
            ]
            if let sim = dev.simulatorName { fields.insert(("backend", .string(sim)), at: 0) }
            print(JSON.object(fields).rendered)
        } else {
            print(Self.sweepText(steps, header: "\(path) \(driver) \(selection.connector.name) \(m.hdisplay)x\(m.vdisplay)@\(String(format4: m.refreshHz)) VRR \(String(format4: range.lowerBound))–\(String(format4: range.upperBound)) Hz"))
        }
        if stop.isRequested, let s = stop.signal { printError("stopped by signal \(s) after \(steps.count) steps; display restored") }
        let missed = steps.filter { !$0.belowRange && !$0.held }
        if !missed.isEmpty {
            for s in missed {
                printError("check failed: \(String(format4: s.requestedHz)) Hz: mean interval \(String(format4: s.achievedMeanMs)) ms for \(String(format4: s.requestedIntervalMs)) ms requested")
            }
            throw ExitCode(1)
        }
        return true
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
