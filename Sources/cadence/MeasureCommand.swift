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
        guard duration.isFinite, duration > 0, duration <= 86_400 else {
            throw CLIFailure("invalid --duration \(duration): expected seconds > 0")
        }
        guard let alloc = BufferAllocator(rawValue: allocator) else {
            throw CLIFailure("invalid --allocator '\(allocator)': expected dumb or gbm")
        }
        guard let modesetAPI = ModesetAPI(rawValue: api) else {
            throw CLIFailure("invalid --api '\(api)': expected atomic, legacy or auto")
        }
        var devices = try sessionOptions.source(command: "measure")
        if BackendChoice.isFakeDRM(backend) {
            devices = .fake(try BackendChoice.fakeDRMDevices(backend))
        } else if backend != "kms" && backend != "auto" {
            throw CLIFailure("--backend must be kms or fake-drm[:PROFILE]")
        }
        if let v = verify, v != "crc" {
            throw CLIFailure("--verify '\(v)': measure checks crc only (writeback is for run and validate)")
        }
        if connectors.count > 1 || connectors == ["all"] {
            if verify != nil {
                throw CLIFailure("--verify is not supported with several outputs yet: measure one --connector at a time")
            }
            return try measureSeveral(source: devices, allocator: alloc, api: modesetAPI)
        }
        // `cardN-NAME` names its card.
        let address = connector.map(OutputAddress.init)
        if let a = address, let own = a.devicePath, let device, own != device {
            throw CLIFailure("connector \(a) is on \(own), not on the device given (\(device))")
        }
        let path = try selecting { try OutputSelection.devicePath(device ?? address?.devicePath, discovered: devices.discover()) }
        let dev = try selecting { try OutputSelection.open(path, source: devices) }
        if let sim = dev.simulatorName { printError("notice: \(sim): a fake DRM device (simulator) on virtual time, not a panel") }
        let driver = try describing(path) { try dev.version() }
        let selection = try selecting { try OutputSelection.select(device: dev, connector: address?.connector, mode: mode) }
        let conn = selection.connector
        let chosen = selection.mode
        let policy = try BackendChoice.vrrPolicy(vrr)
        if policy != .off && verify != nil {
            throw CLIFailure("--verify crc checks the fixed refresh: leave out --vrr")
        }
        if policy != .off, try measureVRR(dev, path: path, driver: driver.name, selection: selection,
                                          allocator: alloc, api: modesetAPI, policy: policy) {
            return
        }

        let output = try describing(path) { try KMSOutput(device: dev, connector: conn, mode: chosen, api: modesetAPI) }
        if !output.timestampsMonotonic {
            printError("warning: \(driver.name) lacks DRM_CAP_TIMESTAMP_MONOTONIC: timestamps are not CLOCK_MONOTONIC")
        }
        let recording: FlipRecording
        var stoppedBy: Int32?
        do {
            let chain = try describing(path, mode: chosen) {
                try Swapchain(device: dev, width: Int(chosen.hdisplay), height: Int(chosen.vdisplay), count: 3, allocator: alloc)
            }
            let shadow = ShadowBuffer(width: Int(chosen.hdisplay), height: Int(chosen.vdisplay))
            let stop = SignalStop()
            defer { stop.remove() }
            do {
                recording = try output.recordFlips(
                    swapchain: chain, shadow: shadow, durationNs: Int64(duration * 1e9), warmupFlips: Self.warmupFlips,
                    crcSource: verify.map { _ in "auto" }, notice: printError, shouldStop: { stop.isRequested })
                stoppedBy = stop.signal
            } catch let e as CRCError {
                try? output.restore()
                throw RunCommand.crcRefusal(e)
            } catch let e as DRMError {
                try? output.restore()
                if e.errno == .enodev {
                    // The device went away under us: lost mid-run, not bad input.
                    printError("cadence measure: \(OutputSelection.explain(e, path: path))")
                    throw ExitCode(1)
                }
                throw CLIFailure(modesetFailure(e, path: path, mode: chosen, connector: conn.name))
            }
            do { try output.restore() } catch let e as DRMError {
                printError("warning: could not restore \(output.crtc): \(e)")
            }
        }

        if trace { for l in Self.traceLines(recording.flips) { printError(l) } }
        // Said once the built mode is known to work, so a rejected mode gives one line.
        if let note = selection.note { printError("note: " + note) }
        if let w = fasterModeWarning(connector: conn, mode: chosen, use: "is measured at") { printError("warning: " + w) }
        if recording.vblank == .none { printError("notice: \(driver.name): \(noHardwareVBlankNotice)") }
        let m = RefreshMeasurement(flips: recording.flips, nominalRefreshHz: chosen.refreshHz, hardwareVBlank: recording.vblank == .hardware,
                                      breaks: recording.breaks)
        let source = selection.source
        if json {
            var j = Self.json(m, driver: driver.name, path: path, connector: conn.name, mode: chosen, source: source,
                              api: output.api, allocator: alloc, duration: duration, vblank: recording.vblank)
            if let sim = dev.simulatorName, case .object(let fields) = j { j = .object([("backend", .string(sim))] + fields) }
            if let v = recording.scanout, case .object(let fields) = j {
                j = .object(fields + [("scanout", .encoded(v))])
            }
            print(j.rendered)
        } else {
            print(Self.text(m, driver: driver.name, path: path, connector: conn.name, mode: chosen, source: source,
                            api: output.api, allocator: alloc, vblank: recording.vblank))
            if let v = recording.scanout { print("  scanout           " + RunCommand.scanoutLine(v)) }
        }
        if recording.stopped, let signal = stoppedBy {
            // Like `run`: what was measured is reported and judged as usual.
            printError("stopped by signal \(signal) after \(m.flips) flips; display restored")
        }
        if m.flips < 2 { throw CLIFailure("only \(m.flips) flip event(s) in \(duration) s: nothing to measure") }
        var failed = m.checks.filter { $0.passed == false }.map { "\($0.name): \($0.detail)" }
        if let v = recording.scanout, v.mismatches > 0 {
            failed.append(
                "scanout: \(v.mismatches) mismatches (stale \(v.stale), changes without flip \(v.changesWithoutFlip))")
        }
        if !failed.isEmpty {
            for c in failed { printError("check failed: \(c)") }
            throw ExitCode(1)
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

    /// Flips after the modeset that settle the pipeline and are not measured.
    static let warmupFlips = 3

    /// One line for a failure while setting the mode or flipping.
    func modesetFailure(_ e: DRMError, path: String, mode: ModeInfo, connector: String) -> String {
        if e.errno.rawValue == 22, e.call.hasPrefix("drmModeAtomicCommit") || e.call == "drmModeSetCrtc" {
            return "the driver rejected \(mode.description) Hz on \(connector)\(mode.type.contains(.userdef) ? " (a built timing)" : ""): \(e)"
        }
        return OutputSelection.explain(e, path: path)
    }

    static func text(_ m: RefreshMeasurement, driver: String, path: String, connector: String, mode: ModeInfo,
                     source: String, api: ModesetAPI, allocator: BufferAllocator, vblank: VBlankSupport) -> String {
        func ms(_ v: Double) -> String { String(format4: v) }
        var s = "\(path) \(driver) \(connector) \(mode.hdisplay)x\(mode.vdisplay) (\(source), \(api.rawValue), \(allocator.rawValue))\n"
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

    static func json(_ m: RefreshMeasurement, driver: String, path: String, connector: String, mode: ModeInfo,
                     source: String, api: ModesetAPI, allocator: BufferAllocator, duration: Double,
                     vblank: VBlankSupport) -> JSON {
        let i = m.intervalMs
        return .object([
            ("driver", .string(driver)), ("device", .string(path)), ("connector", .string(connector)),
            ("mode", .string("\(mode.hdisplay)x\(mode.vdisplay)")), ("modeSource", .string(source)),
            ("clockKHz", .int(Int(mode.clock))),
            ("nominalRefreshHz", .number(m.nominalRefreshHz, decimals: 4)),
            ("measuredRefreshHz", m.measuredRefreshHz.map { .number($0, decimals: 4) } ?? .null),
            ("vblank", .string(vblank.rawValue)),
            ("notice", vblank == .none ? .string(noHardwareVBlankNotice) : .null),
            ("api", .string(api.rawValue)), ("allocator", .string(allocator.rawValue)),
            ("durationS", .number(duration, decimals: 3)), ("warmupFlips", .int(Self.warmupFlips)),
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
