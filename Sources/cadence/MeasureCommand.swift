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
        guard let choice = DisplayChoice.Backend(backend) else { throw CLIFailure(MeasureSession.Refusal.needsKMS.line) }
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
        case .vrrSweep(let sweep):
            print(json ? sweep.json : sweep.text)
            if let line = sweep.stoppedLine(signal: stop.signal) { printError(line) }
            try fail(sweep.failureLines)
        case .refresh(let results):
            for r in results {
                if trace { r.traceLines.forEach(printError) }
                // Said once the built mode is known to work, so a rejected mode gives one line.
                if let line = r.noteLine { printError(line) }
                let s = r.selection
                if let w = fasterModeWarning(connector: s.connector, mode: s.mode, use: "is measured at") { printError("warning: " + w) }
                if let line = r.noHardwareVBlankLine { printError(line) }
            }
            let report = MeasureReport(results)
            if !results.isEmpty { print(json ? report.json : report.text) }
            // Like `run`: what was measured is reported and judged as usual.
            if let line = report.stoppedLine(signal: stop.signal) { printError(line) }
            if let line = report.nothingMeasuredLine { throw CLIFailure(line) }
            try fail(report.failureLines)
        }
    }

    /// Prints each failure on stderr; exit status 1 when there is one.
    private func fail(_ failures: [String]) throws {
        failures.forEach(printError)
        if !failures.isEmpty { throw ExitCode(1) }
    }

    /// Prints the notice's stderr line (when it has one).
    static func printNotice(_ notice: MeasureSession.Notice) {
        if let line = notice.line { printError(line) }
    }

    /// Runs `body`, turning the measurement's refusals and failures into one line (exit 2), or,
    /// for a device lost or a failed sweep, one line and exit 1.
    static func refusingInOneLine<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let r as MeasureSession.Refusal {
            throw CLIFailure(r.line)
        } catch let f as MeasureSession.Failure {
            guard f.lostMidRun else { throw CLIFailure(f.line) }
            printError("cadence measure: " + f.line)
            throw ExitCode(1)
        } catch let e as OutputSelectionError {
            throw CLIFailure(e.description)
        }
    }
}

/// Writes one line to stderr.
func printError(_ line: String) {
    StandardStreams.errorLine(line)
}
