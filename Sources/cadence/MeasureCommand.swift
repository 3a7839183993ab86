import ArgumentParser
import CadenceCore
import CadenceSession
import DRM
import KMSDisplay

#if canImport(Glibc)
import Glibc
#endif

/// `cadence measure`: sets a mode, flips at every vblank for a while, and reports the
/// panel's real cadence from the kernel's flip timestamps.
struct MeasureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure", abstract: "Measure a panel's real refresh from kernel flip timestamps.",
        usage: """
            cadence measure [--backend <backend>] [--device <device>]
                   [--connector <connector> ...] [--mode <mode>]
                   [--duration <duration>]
                   [--allocator <allocator>] [--api <api>] [--json] [--trace]
                   [--session <session>] [--vrr <vrr>]
            """,
        discussion: """
            Sets the mode, page-flips at every vblank for the duration and reports the
            nominal refresh (from the mode timing), the measured refresh (least-squares
            fit of kernel timestamp against vblank sequence), flip intervals, missed
            vblanks (sequence gaps) and igt-style timestamp checks. The first 3 flips
            after the modeset are warm-up and not measured. --mode WxH@HZ with no listed
            mode at that rate builds one (the listed WxH mode with its pixel clock
            scaled, or CVT reduced blanking) and says so on stderr. When the connector
            lists a faster mode at the same size, a one-line warning says so.

            --connector A --connector B (or all: every connected connector, on every
            card unless --device names one) measures several outputs at once, each on
            its own CRTC: the outputs of a card take turns on one thread, each card has
            a thread of its own. One block (or JSON object in "outputs") per output;
            outputs on several cards are named cardN-NAME.

            --vrr on sets VRR_ENABLED and sweeps requested rates across the panel's VRR
            range (9 steps from its minimum to its maximum, plus one at 3/4 of the
            minimum, where each frame is shown for whole refreshes: LFC), reporting per
            step the requested interval against the achieved one (mean, stddev, count).
            No VRR (not vrr_capable, no range, legacy API) is one line and exit 2;
            --vrr auto sweeps when VRR is available, else measures the fixed refresh.

            Needs DRM master: run from a text VT with no compositor on the card, as a
            member of the video group or as root. With --session seat a VT switch pauses
            the measurement (nothing flipped, the seat's disable acknowledged); back on
            its VT the mode is set again and it runs as long again as the gap, which is
            a session gap, not missed vblanks.

            Exit status:
              0  measured, every timestamp check passed
              1  a timestamp check failed, or the device was lost mid-run
              2  usage, input or device error (no device, no permission, another DRM
                 master, unknown connector or mode)

            Examples:
              cadence measure                                the preferred mode, 5 s
              cadence measure --duration 30 --json           one JSON object
              cadence measure --connector HDMI-A-1 --mode 1920x1080@60
              cadence measure --mode 1024x768@144 --trace    a built mode, every flip
              cadence measure --allocator gbm --api legacy
              cadence measure --backend fake-drm:two-crtc --connector DP-1
              cadence measure --connector all --json      every connected output
              cadence measure --backend fake-drm:amdgpu-vrr --vrr on
            """)

    @Option(name: .long, help: "DRM card node (default: the first /dev/dri/card*).")
    var device: String?

    @Option(name: .long, help: "kms (the default) or fake-drm[:PROFILE]: the KMS code over a fake DRM device from a drm_info -j profile, on virtual time.")
    var backend: String = "kms"

    @Option(name: .customLong("connector"), help: "Connector name, e.g. HDMI-A-1, or card1-HDMI-A-1 for one on /dev/dri/card1 (default: the first connected); repeat it, or give all, to measure several outputs at once.")
    var connectors: [String] = []
    var connector: String? { connectors.first }

    @Option(name: .long, help: "WxH or WxH@HZ (default: the connector's preferred mode).")
    var mode: String?

    @Option(name: .long, help: "Seconds to flip for.")
    var duration: Double = 5

    @Option(name: .long, help: "Buffer allocator: dumb or gbm.")
    var allocator: String = "dumb"

    @Option(name: .long, help: "Modeset API: atomic, legacy or auto.")
    var api: String = "auto"

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    @OptionGroup var sessionOptions: SessionOptions

    @Flag(name: .long, help: "Print every flip event (sequence, kernel timestamp, receipt latency) to stderr.")
    var trace = false

    @Option(name: .long, help: "off (default): the fixed refresh; on: sweep rates across the panel's VRR range; auto: sweep when VRR is available.")
    var vrr: String = "off"

    @Option(
        name: .long,
        help: """
            crc: check every measured flip against the CRTC's CRC (debugfs; root): the picture must \
            change at exactly the vblank each flip names (docs/scanout.md).
            """)
    var verify: String?

    func run() throws {
        try exitTwoOnError("measure") { try execute() }
    }

    private func execute() throws {
        guard let alloc = BufferAllocator(rawValue: allocator) else {
            throw CLIFailure("invalid --allocator '\(allocator)': expected dumb or gbm")
        }
        guard let modesetAPI = ModesetAPI(rawValue: api) else {
            throw CLIFailure("invalid --api '\(api)': expected atomic, legacy or auto")
        }
        let source = try sessionOptions.source(command: "measure")
        guard let choice = DisplayChoice.Backend(backend) else { throw Self.refusal(.needsKMS) }
        if let v = verify, v != "crc" {
            throw CLIFailure("--verify '\(v)': measure checks crc only (writeback is for run and validate)")
        }
        let several = connectors.count > 1 || connectors == ["all"]
        var plan = MeasurePlan(
            backend: choice, device: device, source: source,
            outputs: several ? .several(connectors: connectors, mode: mode) : .one(connector: connector, mode: mode),
            durationSeconds: duration, allocator: alloc, api: modesetAPI)
        plan.crc = verify != nil
        plan.vrr = try BackendChoice.vrrPolicy(vrr)
        let session = try Self.refusingInOneLine { try MeasureSession.open(plan, notice: Self.printNotice) }
        let stop = SignalStop()
        defer { stop.remove() }
        switch try Self.refusingInOneLine({ try session.run(notice: Self.printNotice, shouldStop: { stop.isRequested }) }) {
        case .vrrSweep(let sweep): try report(sweep, stoppedBy: stop.signal)
        case .refresh(let results): try report(results, stoppedBy: stop.signal)
        }
    }

    /// Each output's block (text) or object (`--json`; `{"outputs": […]}` for several), with its
    /// trace, notes and warnings on stderr, then the exit status: 1 when a check failed.
    private func report(_ results: [MeasureResult], stoppedBy signal: Int32?) throws {
        let several = results.first?.name != nil
        var objects: [JSON] = []
        for (i, r) in results.enumerated() {
            let s = r.selection, recording = r.recording
            let prefix = r.name.map { "\($0.name): " } ?? ""
            if trace { for l in Self.traceLines(recording.flips, prefix: prefix) { printError(l) } }
            // Said once the built mode is known to work, so a rejected mode gives one line.
            if let note = s.note { printError("note: " + prefix + note) }
            if let w = fasterModeWarning(connector: s.connector, mode: s.mode, use: "is measured at") { printError("warning: " + w) }
            if recording.vblank == .none { printError("notice: \(prefix)\(r.driver): \(noHardwareVBlankNotice)") }
            if json {
                guard case .object(var fields) = Self.json(r, duration: duration) else { continue }
                if let n = r.name { fields.insert(("output", .string(n.name)), at: 0) }
                else if let sim = r.simulator { fields.insert(("backend", .string(sim)), at: 0) }
                if let v = recording.scanout { fields.append(("scanout", .encoded(v))) }
                if several { objects.append(.object(fields)) } else { print(JSON.object(fields).rendered) }
            } else {
                if i > 0 { print("") }
                print(Self.text(r, connector: r.name?.name ?? s.connector.name))
                if let v = recording.scanout { print("  scanout           " + RunCommand.scanoutLine(v)) }
            }
        }
        if json && several { print(JSON.object([("outputs", .array(objects))]).rendered) }
        if let first = results.first, first.recording.stopped, let signal {
            // Like `run`: what was measured is reported and judged as usual.
            printError(several ? "stopped by signal \(signal); displays restored"
                       : "stopped by signal \(signal) after \(first.measurement.flips) flips; display restored")
        }
        var failures: [String] = []
        for r in results {
            let prefix = r.name.map { "\($0.name): " } ?? ""
            for f in r.failures {
                switch f {
                case .tooFewFlips(let n):
                    let line = "only \(n) flip event(s) in \(duration) s: nothing to measure"
                    guard several else { throw CLIFailure(line) }
                    failures.append(prefix + line)
                case .check(let c): failures.append("check failed: \(prefix)\(c.name): \(c.detail)")
                case .scanout(let v):
                    failures.append("check failed: scanout: \(v.mismatches) mismatches (stale \(v.stale), changes without flip \(v.changesWithoutFlip))")
                }
            }
        }
        for f in failures { printError(f) }
        if !failures.isEmpty { throw ExitCode(1) }
    }

    /// The stderr line of a notice (nil: not shown).
    static func printNotice(_ notice: MeasureSession.Notice) {
        switch notice {
        case .simulator(let name): printError("notice: \(name): a fake DRM device (simulator) on virtual time, not a panel")
        case .vrrUnavailable(let why): printError("notice: \(why): measuring the fixed refresh")
        case .timestampsNotMonotonic(let output, let driver):
            // Said for one output only, as before several outputs were measured at once.
            if output == nil { printError("warning: \(driver) lacks DRM_CAP_TIMESTAMP_MONOTONIC: timestamps are not CLOCK_MONOTONIC") }
        case .seat(let line): printError(line)
        case .restoreFailed(let crtc, let error): printError("warning: could not restore \(crtc): \(error)")
        }
    }

    /// The one line of a refusal, naming the options.
    static func refusal(_ r: MeasureSession.Refusal) -> CLIFailure {
        switch r {
        case .needsKMS: return CLIFailure("--backend must be kms or fake-drm[:PROFILE]")
        case .invalidDuration(let d): return CLIFailure("invalid --duration \(d): expected seconds > 0")
        case .checksNeedOneOutput:
            return CLIFailure("--verify is not supported with several outputs yet: measure one --connector at a time")
        case .vrrNeedsOneOutput: return CLIFailure("--vrr with several outputs: sweep one --connector at a time")
        case .crcNeedsFixedRefresh: return CLIFailure("--verify crc checks the fixed refresh: leave out --vrr")
        case .vrrUnavailable(let why): return CLIFailure("--vrr on: \(why)")
        case .crcUnavailable(let e): return RunCommand.crcRefusal(e)
        }
    }

    /// Runs `body`, turning the measurement's refusals and failures into one line (exit 2), or,
    /// for a device lost or a failed sweep, one line and exit 1.
    static func refusingInOneLine<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let r as MeasureSession.Refusal {
            throw refusal(r)
        } catch let f as MeasureSession.Failure {
            func named(_ outputs: [String]?) -> String { outputs.map { $0.joined(separator: ", ") + ": " } ?? "" }
            switch f {
            case .device(let path, let e): throw CLIFailure(OutputSelection.explain(e, path: path))
            case .buffers(let path, let m, let e):
                throw CLIFailure("cannot allocate \(m.hdisplay)x\(m.vdisplay) scanout buffers on \(path): \(e)")
            case .modeRejected(let outputs, let mode, let connector, let e):
                let built = mode.type.contains(.userdef) ? " (a built timing)" : ""
                throw CLIFailure(named(outputs) + "the driver rejected \(mode.description) Hz on \(connector)\(built): \(e)")
            case .flip(let outputs, let path, let e): throw CLIFailure(named(outputs) + OutputSelection.explain(e, path: path))
            case .deviceLost(let path, let e):
                // The device went away under us: lost mid-run, not bad input.
                printError("cadence measure: \(OutputSelection.explain(e, path: path))")
                throw ExitCode(1)
            case .sweep(let f):
                printError("cadence measure: VRR sweep failed: \(f)")
                throw ExitCode(1)
            }
        } catch let e as OutputSelectionError {
            throw CLIFailure(e.description)
        }
    }

    /// `--trace`: one line per flip (sequence and its step, kernel timestamp, interval, receipt
    /// latency), each after `prefix`.
    static func traceLines(_ flips: [FlipTimestamp], prefix: String = "") -> [String] {
        var prev: FlipTimestamp?
        return flips.enumerated().map { i, f in
            defer { prev = f }
            let dseq = prev.map { Int64(bitPattern: f.sequence &- $0.sequence) } ?? 0
            let dt = prev.map { Double(f.timestamp - $0.timestamp) / 1e6 } ?? 0
            return prefix + "flip \(i) seq \(f.sequence) (+\(dseq)) t \(f.timestamp) dt \(String(format4: dt)) ms receipt +\(String(format4: Double(f.receivedAt - f.timestamp) / 1e6)) ms"
        }
    }

    /// The output's text block, headed by its card, driver, `connector` and mode.
    static func text(_ r: MeasureResult, connector: String) -> String {
        func ms(_ v: Double) -> String { String(format4: v) }
        let m = r.measurement, mode = r.selection.mode, vblank = r.recording.vblank
        var s = "\(r.device) \(r.driver) \(connector) \(mode.hdisplay)x\(mode.vdisplay) (\(r.selection.source), \(r.api.rawValue), \(r.allocator.rawValue))\n"
        s += "  nominal refresh   \(String(format4: m.nominalRefreshHz)) Hz\n"
        s += "  measured refresh  \(m.measuredRefreshHz.map { String(format4: $0) + " Hz" } ?? "n/a (no hardware vblank)")\n"
        s += "  vblank            \(vblank.rawValue)\n"
        s += "  flips             \(m.flips)\n"
        s += "  missed vblanks    \(m.missedVBlanks)"
        if m.missedVBlanks > 0 {
            s += " (flip submitted late: \(m.missedAfterLateSubmit); submitted in time but not latched: \(m.missedAfterTimelySubmit))"
        }
        s += "\n"
        if m.sessionGaps > 0 {
            s += "  session gaps      \(m.sessionGaps) (VT switched away and back: the vblanks in between are not missed)\n"
        }
        let i = m.intervalMs
        s += "  interval ms       mean \(ms(i.mean))  stddev \(ms(i.stddev))  min \(ms(i.min))  p50 \(ms(i.p50))  p99 \(ms(i.p99))  max \(ms(i.max))\n"
        for c in m.checks {
            let verdict = c.passed.map { $0 ? "pass" : "FAIL" } ?? "n/a "
            s += "  check \(verdict)  \(c.name): \(c.detail)\n"
        }
        s.removeLast()
        return s
    }

    /// The output's JSON object (`duration`: the seconds asked for, as given).
    static func json(_ r: MeasureResult, duration: Double) -> JSON {
        let m = r.measurement, mode = r.selection.mode, vblank = r.recording.vblank
        let i = m.intervalMs
        return .object([
            ("driver", .string(r.driver)), ("device", .string(r.device)), ("connector", .string(r.selection.connector.name)),
            ("mode", .string("\(mode.hdisplay)x\(mode.vdisplay)")), ("modeSource", .string(r.selection.source)),
            ("clockKHz", .int(Int(mode.clock))),
            ("nominalRefreshHz", .number(m.nominalRefreshHz, decimals: 4)),
            ("measuredRefreshHz", m.measuredRefreshHz.map { .number($0, decimals: 4) } ?? .null),
            ("vblank", .string(vblank.rawValue)),
            ("notice", vblank == .none ? .string(noHardwareVBlankNotice) : .null),
            ("api", .string(r.api.rawValue)), ("allocator", .string(r.allocator.rawValue)),
            ("durationS", .number(duration, decimals: 3)), ("warmupFlips", .int(r.warmupFlips)),
            ("flips", .int(m.flips)), ("missedVblanks", .int(m.missedVBlanks)), ("sessionGaps", .int(m.sessionGaps)),
            ("missedVblankCauses", .object([
                ("lateSubmit", .int(m.missedAfterLateSubmit)), ("notLatched", .int(m.missedAfterTimelySubmit)),
            ])),
            ("intervalMs", .object([
                ("mean", .number(i.mean, decimals: 4)), ("stddev", .number(i.stddev, decimals: 4)),
                ("min", .number(i.min, decimals: 4)), ("p50", .number(i.p50, decimals: 4)),
                ("p99", .number(i.p99, decimals: 4)), ("max", .number(i.max, decimals: 4)),
            ])),
            ("checks", .object(m.checks.map { c in
                (c.name, .object([("passed", c.passed.map(JSON.bool) ?? .null),
                                  ("value", .number(c.value, decimals: 6)), ("limit", .number(c.limit, decimals: 6))]))
            })),
            ("checksPassed", .bool(m.allChecksPassed)),
        ])
    }
}

/// Writes one line to stderr.
func printError(_ line: String) {
    StandardStreams.errorLine(line)
}

extension String {
    /// `value` with four decimals.
    init(format4 value: Double) {
        guard value.isFinite else { self = "\(value)"; return }
        let scaled = (abs(value) * 10000).rounded()
        let whole = Int(scaled / 10000)
        var frac = String(Int(scaled - Double(whole) * 10000))
        while frac.count < 4 { frac = "0" + frac }
        self = (value < 0 ? "-" : "") + "\(whole).\(frac)"
    }
}
