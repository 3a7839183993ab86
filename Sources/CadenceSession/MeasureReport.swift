import CadenceCore
import DRM
import Foundation
import KMSDisplay

/// `cadence measure`'s report of its outputs' fixed refresh (a ``MeasureSession``'s
/// ``MeasureResult``s): each output's block of text, or one JSON object (for several,
/// `{"outputs": […]}`), the line when a signal stopped it, and the failures.
///
///     let report = MeasureReport(results)
///     print(json ? report.json : report.text)
///     for line in report.failureLines { print(line) }   // on stderr; exit 1 when any
public struct MeasureReport {
    /// Each output's measurement, in the order named.
    public let results: [MeasureResult]
    /// True when several outputs were measured at once (each has a name).
    public var several: Bool { results.first?.name != nil }

    /// The report of `results`.
    public init(_ results: [MeasureResult]) { self.results = results }

    /// Each output's block, with its scanout line after a CRC check, a blank line between.
    public var text: String {
        results.map { r in
            var block = r.text
            if let v = r.recording.scanout { block += "\n  scanout           " + RunReport.scanoutLine(v) }
            return block
        }.joined(separator: "\n\n")
    }

    /// One output's object, or `{"outputs": [each output's object]}` for several.
    public var json: String {
        let objects = results.map(\.jsonValue)
        guard several else { return objects.map(\.rendered).joined(separator: "\n") }
        return JSON.object([("outputs", .array(objects))]).rendered
    }

    /// The stderr line when `signal` stopped the measurement (nil when it ran its course).
    public func stoppedLine(signal: Int32?) -> String? {
        guard let first = results.first, first.recording.stopped, let signal else { return nil }
        return several
            ? "stopped by signal \(signal); displays restored"
            : "stopped by signal \(signal) after \(first.measurement.flips) flips; display restored"
    }

    /// The line when the one output measured recorded too few flips: nothing was measured, a
    /// usage or device error (nil with several outputs, or flips enough).
    public var nothingMeasuredLine: String? {
        guard !several, let r = results.first, case .tooFewFlips(let n) = r.failures.first else { return nil }
        return Self.tooFewFlipsLine(n, durationSeconds: r.durationSeconds)
    }

    /// One stderr line per failure, each output's in order (named after it among several): too
    /// few flips, a failed timestamp check, the CRC check's mismatches.
    public var failureLines: [String] {
        var lines: [String] = []
        for r in results {
            for f in r.failures {
                switch f {
                case .tooFewFlips(let n):
                    lines.append(r.outputPrefix + Self.tooFewFlipsLine(n, durationSeconds: r.durationSeconds))
                case .check(let c): lines.append("check failed: \(r.outputPrefix)\(c.name): \(c.detail)")
                case .scanout(let v):
                    lines.append(
                        "check failed: scanout: \(v.mismatches) mismatches (stale \(v.stale), changes without flip \(v.changesWithoutFlip))"
                    )
                }
            }
        }
        return lines
    }

    static func tooFewFlipsLine(_ flips: Int, durationSeconds: Double) -> String {
        "only \(flips) flip event(s) in \(durationSeconds) s: nothing to measure"
    }
}

extension MeasureResult {
    /// "NAME: " among several outputs, "" for one: what its stderr lines start with.
    var outputPrefix: String { name.map { "\($0.name): " } ?? "" }

    /// `--trace`: one line per flip (sequence and its step, kernel timestamp, interval, receipt
    /// latency), each after `outputPrefix`.
    public var traceLines: [String] {
        var prev: FlipTimestamp?
        let prefix = outputPrefix
        return recording.flips.enumerated().map { i, f in
            defer { prev = f }
            let dseq = prev.map { Int64(bitPattern: f.sequence &- $0.sequence) } ?? 0
            let dt = prev.map { Double(f.timestamp - $0.timestamp) / 1e6 } ?? 0
            let receipt = String(format4: Double(f.receivedAt - f.timestamp) / 1e6)
            return prefix
                + "flip \(i) seq \(f.sequence) (+\(dseq)) t \(f.timestamp) dt \(String(format4: dt)) ms receipt +\(receipt) ms"
        }
    }

    /// The note on a mode built for the measurement (`note: …`), nil when the mode was listed.
    public var noteLine: String? { selection.note.map { "note: " + outputPrefix + $0 } }

    /// The notice when the card has no hardware vblank (its timestamps are commit
    /// completions), else nil.
    public var noHardwareVBlankLine: String? {
        recording.vblank == .none ? "notice: \(outputPrefix)\(driver): \(noHardwareVBlankNotice)" : nil
    }

    /// The output's text block, headed by its card, driver, connector (its name among several)
    /// and mode: refresh nominal and measured, vblank, flips, missed vblanks, session gaps,
    /// intervals and the timestamp checks.
    public var text: String {
        func ms(_ v: Double) -> String { String(format4: v) }
        let m = measurement, mode = selection.mode
        let connector = name?.name ?? selection.connector.name
        var s =
            "\(device) \(driver) \(connector) \(mode.hdisplay)x\(mode.vdisplay) (\(selection.source), \(api.rawValue), \(allocator.rawValue))\n"
        s += "  nominal refresh   \(ms(m.nominalRefreshHz)) Hz\n"
        s += "  measured refresh  \(m.measuredRefreshHz.map { ms($0) + " Hz" } ?? "n/a (no hardware vblank)")\n"
        s += "  vblank            \(recording.vblank.rawValue)\n"
        s += "  flips             \(m.flips)\n"
        s += "  missed vblanks    \(m.missedVBlanks)"
        if m.missedVBlanks > 0 {
            s +=
                " (flip submitted late: \(m.missedAfterLateSubmit); submitted in time but not latched: \(m.missedAfterTimelySubmit))"
        }
        s += "\n"
        if m.sessionGaps > 0 {
            s +=
                "  session gaps      \(m.sessionGaps) (VT switched away and back: the vblanks in between are not missed)\n"
        }
        let i = m.intervalMs
        s +=
            "  interval ms       mean \(ms(i.mean))  stddev \(ms(i.stddev))  min \(ms(i.min))  p50 \(ms(i.p50))  p99 \(ms(i.p99))  max \(ms(i.max))\n"
        for c in m.checks {
            let verdict = c.passed.map { $0 ? "pass" : "FAIL" } ?? "n/a "
            s += "  check \(verdict)  \(c.name): \(c.detail)\n"
        }
        s.removeLast()
        return s
    }

    /// The output's JSON object (keys in a fixed order; `output` or `backend` first, `scanout`
    /// last when there).
    var jsonValue: JSON {
        let m = measurement, mode = selection.mode, vblank = recording.vblank
        let i = m.intervalMs
        typealias J = JSON
        var fields: [(String, J)] = [
            ("driver", .string(driver)), ("device", .string(device)), ("connector", .string(selection.connector.name)),
            ("mode", .string("\(mode.hdisplay)x\(mode.vdisplay)")), ("modeSource", .string(selection.source)),
            ("clockKHz", .int(Int(mode.clock))),
            ("nominalRefreshHz", .number(m.nominalRefreshHz, decimals: 4)),
            ("measuredRefreshHz", m.measuredRefreshHz.map { .number($0, decimals: 4) } ?? .null),
            ("vblank", .string(vblank.rawValue)),
            ("notice", vblank == .none ? .string(noHardwareVBlankNotice) : .null),
            ("api", .string(api.rawValue)), ("allocator", .string(allocator.rawValue)),
            ("durationS", .number(durationSeconds, decimals: 3)), ("warmupFlips", .int(warmupFlips)),
            ("flips", .int(m.flips)), ("missedVblanks", .int(m.missedVBlanks)), ("sessionGaps", .int(m.sessionGaps)),
            (
                "missedVblankCauses",
                .object([("lateSubmit", .int(m.missedAfterLateSubmit)), ("notLatched", .int(m.missedAfterTimelySubmit))]
                )
            ),
            (
                "intervalMs",
                .object([
                    ("mean", .number(i.mean, decimals: 4)), ("stddev", .number(i.stddev, decimals: 4)),
                    ("min", .number(i.min, decimals: 4)), ("p50", .number(i.p50, decimals: 4)),
                    ("p99", .number(i.p99, decimals: 4)), ("max", .number(i.max, decimals: 4))
                ])
            ),
            (
                "checks",
                .object(
                    m.checks.map { c in
                        (
                            c.name,
                            .object([
                                ("passed", c.passed.map(J.bool) ?? .null),
                                ("value", .number(c.value, decimals: 6)), ("limit", .number(c.limit, decimals: 6))
                            ])
                        )
                    })
            ),
            ("checksPassed", .bool(m.allChecksPassed))
        ]
        if let n = name {
            fields.insert(("output", .string(n.name)), at: 0)
        } else if let sim = simulator {
            fields.insert(("backend", .string(sim)), at: 0)
        }
        if let v = recording.scanout { fields.append(("scanout", .encoded(v))) }
        return .object(fields)
    }
}

extension VRRSweepResult {
    /// The sweep as text: a header (card, driver, connector, mode, VRR range), then a row per
    /// step (requested rate and interval, the achieved mean and stddev, count, refreshes per
    /// frame, refresh), steps below the range marked LFC.
    public var text: String {
        let m = selection.mode
        let f4 = { (v: Double) in String(format4: v) }
        func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: Swift.max(0, n - s.count)) + s }
        var lines = [
            "\(device) \(driver) \(selection.connector.name) \(m.hdisplay)x\(m.vdisplay)@\(f4(m.refreshHz)) VRR \(f4(range.lowerBound))–\(f4(range.upperBound)) Hz",
            "  requested Hz  interval ms  achieved ms  stddev ms  count  refr/frame  refresh ms"
        ]
        for s in steps {
            let row = [
                pad(f4(s.requestedHz), 12), pad(f4(s.requestedIntervalMs), 11), pad(f4(s.achievedMeanMs), 11),
                pad(f4(s.achievedStddevMs), 9), pad("\(s.count)", 5), pad(f4(s.refreshesPerFrame), 10),
                pad(f4(s.refreshMs), 10)
            ]
            lines.append("  " + row.joined(separator: "  ") + (s.belowRange ? "  below range: LFC" : ""))
        }
        return lines.joined(separator: "\n")
    }

    /// The sweep as one JSON object: card, connector, mode, range and each step.
    public var json: String {
        let m = selection.mode
        typealias J = JSON
        var fields: [(String, J)] = [
            ("driver", .string(driver)), ("device", .string(device)), ("connector", .string(selection.connector.name)),
            ("mode", .string("\(m.hdisplay)x\(m.vdisplay)")), ("nominalRefreshHz", .number(m.refreshHz, decimals: 4)),
            ("vrrRangeHz", .array([.number(range.lowerBound, decimals: 4), .number(range.upperBound, decimals: 4)])),
            (
                "vrrSweep",
                .array(
                    steps.map { s in
                        .object([
                            ("requestedHz", .number(s.requestedHz, decimals: 4)),
                            ("requestedIntervalMs", .number(s.requestedIntervalMs, decimals: 4)),
                            ("achievedMeanMs", .number(s.achievedMeanMs, decimals: 4)),
                            ("achievedStddevMs", .number(s.achievedStddevMs, decimals: 4)),
                            ("count", .int(s.count)), ("refreshesPerFrame", .number(s.refreshesPerFrame, decimals: 3)),
                            ("refreshMs", .number(s.refreshMs, decimals: 4)), ("belowRange", .bool(s.belowRange)),
                            ("held", .bool(s.held))
                        ])
                    })
            )
        ]
        if let sim = simulator { fields.insert(("backend", .string(sim)), at: 0) }
        return J.object(fields).rendered
    }

    /// The stderr line when `signal` stopped the sweep (nil when it ran every step).
    public func stoppedLine(signal: Int32?) -> String? {
        guard stopped, let signal else { return nil }
        return "stopped by signal \(signal) after \(steps.count) steps; display restored"
    }

    /// One stderr line per step in the range whose mean interval missed the requested one.
    public var failureLines: [String] {
        missed.map { s in
            "check failed: \(String(format4: s.requestedHz)) Hz: mean interval \(String(format4: s.achievedMeanMs)) ms for \(String(format4: s.requestedIntervalMs)) ms requested"
        }
    }
}

extension MeasureSession.Notice {
    /// The stderr line of the notice (nil: not shown, a driver without monotonic timestamps
    /// among several outputs).
    public var line: String? {
        switch self {
        case .simulator(let name): return "notice: \(name): a fake DRM device (simulator) on virtual time, not a panel"
        case .vrrUnavailable(let why): return "notice: \(why): measuring the fixed refresh"
        case .timestampsNotMonotonic(let output, let driver):
            // Said for one output only, as before several outputs were measured at once.
            guard output == nil else { return nil }
            return "warning: \(driver) lacks DRM_CAP_TIMESTAMP_MONOTONIC: timestamps are not CLOCK_MONOTONIC"
        case .seat(let line): return line
        case .restoreFailed(let crtc, let error): return "warning: could not restore \(crtc): \(error)"
        }
    }
}

extension MeasureSession.Refusal {
    /// The one line of the refusal, naming the options.
    public var line: String {
        switch self {
        case .needsKMS: return "--backend must be kms or fake-drm[:PROFILE]"
        case .invalidDuration(let d): return "invalid --duration \(d): expected seconds > 0"
        case .checksNeedOneOutput:
            return "--verify is not supported with several outputs yet: measure one --connector at a time"
        case .vrrNeedsOneOutput: return "--vrr with several outputs: sweep one --connector at a time"
        case .crcNeedsFixedRefresh: return "--verify crc checks the fixed refresh: leave out --vrr"
        case .vrrUnavailable(let why): return "--vrr on: \(why)"
        case .crcUnavailable(let e): return RunPlanning.crcRefusalLine(e)
        }
    }
}

extension MeasureSession.Failure {
    /// The one line of the failure (after `cadence measure: `).
    public var line: String {
        func named(_ outputs: [String]?) -> String { outputs.map { $0.joined(separator: ", ") + ": " } ?? "" }
        switch self {
        case .device(let path, let e): return OutputSelection.explain(e, path: path)
        case .buffers(let path, let m, let e):
            return "cannot allocate \(m.hdisplay)x\(m.vdisplay) scanout buffers on \(path): \(e)"
        case .modeRejected(let outputs, let mode, let connector, let e):
            let built = mode.type.contains(.userdef) ? " (a built timing)" : ""
            return named(outputs) + "the driver rejected \(mode.description) Hz on \(connector)\(built): \(e)"
        case .flip(let outputs, let path, let e): return named(outputs) + OutputSelection.explain(e, path: path)
        case .deviceLost(let path, let e): return OutputSelection.explain(e, path: path)
        case .sweep(let f): return "VRR sweep failed: \(f)"
        }
    }

    /// True when the measurement was lost mid-run (the device went away, the sweep failed):
    /// exit status 1, not a usage or device error.
    public var lostMidRun: Bool {
        switch self {
        case .deviceLost, .sweep: return true
        default: return false
        }
    }
}
