import ArgumentParser
import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import Foundation

/// `cadence validate`: a `cadence run` with pass/fail thresholds, for kiosks and CI.
/// Exit 0 pass, 1 fail (one line per failed criterion on stderr) or device lost mid-run,
/// 2 usage, input or device error (and no DRM device without `--backend fake`).
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Run, then pass or fail the display against thresholds.",
        usage: """
            cadence validate <options>
            """,
        discussion: """
            Takes every option of `cadence run` plus the thresholds below; at least one
            threshold is required. Prints the run summary and one PASS/FAIL line per
            criterion on stdout, and one line per failed criterion on stderr.

            validate judges a real display: with --backend auto (the default) and no DRM
            card it exits 2; it judges the fake display (a simulator) only with
            --backend fake, and then says "fake display" in its summary, JUnit XML and
            verdict line; --backend fake-drm[:PROFILE] (the KMS code over a fake DRM
            device) likewise says "fake DRM device (simulator …)".

            How each criterion is measured:
              --max-dropped       dropped refreshes (stale refreshes while a new frame
                                  was due)
              --max-drop-events   drop events (shown frames that followed stale
                                  refreshes)
              --max-drop-event    the largest single drop event, in refreshes
              --refresh-tolerance |measured - nominal| / nominal refresh, in %; measured
                                  from the kernel timestamps and sequences of the frames
                                  (under VRR nominal is the refresh requested: the
                                  effective rate, times LFC's repeats below the range)
              --max-jitter        |p99 frame interval - 1/effective rate|, in ms
              --min-rate          shown frames per second, in Hz (in a window: 1 / mean
                                  interval)
              --max-scanout-mismatches
                                  stale frames and changes without a flip the CRTC's
                                  CRC showed (with --verify crc; whole run only)
              --expect-monitor    the monitor name in the connector's EDID
              --expect-serial     the EDID's serial string or serial number
              --expect-mode       the mode driven, WxH[@HZ] (HZ to the decimals given)
            The --expect-* criteria read the EDID of the connector the run drives; the
            fake display has none (they FAIL "no EDID on the fake display") unless
            --fake-edid FILE gives one, whose preferred timing is then the mode driven.
            --warmup S ignores frames shown in the first S seconds. --window S also
            judges every criterion in each consecutive S-second window after the
            warm-up (a last part shorter than S counts only overall, and so does a run
            that turns out shorter than one window; a --duration shorter than the
            warm-up plus S is refused) and reports the worst window; a criterion passes
            only if it holds overall and in every window.
            With several outputs (--connector A --connector B, or all) each output is
            judged on its own; every PASS/FAIL line names it, --junit writes one
            test suite per output (cadence.validate.NAME), and --json prints one
            object (each output with its criteria, and a total); no --expect-* yet.

            --observe judges what another program shows (a kiosk's own app) instead of
            running: it observes the kernel's DRM trace events for --duration S (needs
            root, as `cadence observe`), picks the client named by --client COMM or the
            one with the most flips (one line says which), and judges its flips with the
            same criteria, --warmup counting from its first flip. No flips: FAIL. Options
            about what Cadence draws (--scene, --latency, --rate, --frames, --backend, …)
            are refused with --observe; --device, --connector, --log, --csv, --json,
            --quiet, --junit and --expect-rate (`observe`'s) apply.

            Exit status:
              0  every criterion passed
              1  a criterion failed, or the device was lost or the output unplugged mid-run
              2  usage, input or device error (no DRM device, no permission, another
                 DRM master)

            Examples:
              cadence validate --duration 30 --max-dropped 0 --refresh-tolerance 0.5
              cadence validate --duration 60 --warmup 5 --window 10 --max-drop-event 1 \\
                  --min-rate 59.5 --junit validate.xml
              cadence validate --rate 30:30:30 --min-rate 29.5 --max-jitter 1
              cadence validate --backend fake --frames 600 --inject-late 100:1 \\
                  --max-dropped 0 --junit out.xml
              cadence validate --duration 10 --expect-monitor "DELL S2721DGF" \\
                  --expect-mode 2560x1440@144
              sudo cadence validate --observe --duration 60 --max-dropped 0 --junit kiosk.xml
            """)

    @OptionGroup var options: RunCommand
    @OptionGroup(title: "Panel identity") var expect: PanelExpectations

    @Option(name: .customLong("max-dropped"), parsing: .unconditional, help: "Fail when more than N refreshes were dropped.")
    var maxDropped: Int?
    @Option(name: .customLong("max-drop-events"), parsing: .unconditional, help: "Fail when there were more than N drop events.")
    var maxDropEvents: Int?
    @Option(name: .customLong("max-drop-event"), parsing: .unconditional, help: "Fail when one drop event dropped more than N refreshes.")
    var maxDropEvent: Int?
    @Option(name: .customLong("refresh-tolerance"), parsing: .unconditional, help: "Fail when the measured refresh is more than PCT % off the nominal one.")
    var refreshTolerance: Double?
    @Option(name: .customLong("max-jitter"), parsing: .unconditional, help: "Fail when the p99 frame interval is more than MS off the nominal one.")
    var maxJitter: Double?
    @Option(name: .customLong("min-rate"), parsing: .unconditional, help: "Fail when fewer than HZ frames per second were shown.")
    var minRate: Double?
    @Option(name: .customLong("max-scanout-mismatches"), parsing: .unconditional, help: "With --verify crc: fail when the CRTC's CRC showed more than N mismatches (stale frames and changes without a flip), over the whole run.")
    var maxScanoutMismatches: Int?
    @Option(
        name: .customLong("max-frozen"), parsing: .unconditional,
        help: "With --observe --verify crc: fail when flips kept coming over S seconds without changing the picture.")
    var maxFrozen: Double?
    @Option(parsing: .unconditional, help: "Ignore frames shown in the first S seconds.")
    var warmup: Double?
    @Option(parsing: .unconditional, help: "Judge every criterion in each window of S seconds too.")
    var window: Double?
    @Option(help: "Write the verdict as JUnit XML to FILE (one test case per criterion).")
    var junit: String?
    @Flag(help: "Judge another program's flips (as `cadence observe` sees them) instead of running; needs --duration.")
    var observe = false
    @Option(help: "With --observe: the client (process name) to judge; default: the one with the most flips.")
    var client: String?
    @Option(name: .customLong("expect-rate"), parsing: .unconditional, help: "With --observe: the rate the client is meant to flip at (Hz); default: its dominant interval.")
    var expectRate: Double?
    @Option(name: .customLong("from-trace"), help: ArgumentHelp("With --observe: analyse a saved trace instead of the live kernel (tests).", visibility: .hidden))
    var fromTrace: String?

    func run() throws {
        if observe || client != nil || expectRate != nil || fromTrace != nil { return try executeObserved() }
        try execute(source: nil)
    }

    /// The criteria from the options (throws a one-line error for bad values).
    func criteria() throws -> ValidationCriteria {
        let c = ValidationCriteria(
            maxDropped: maxDropped, maxDropEvents: maxDropEvents, maxDropEvent: maxDropEvent,
            refreshTolerancePercent: refreshTolerance, maxJitterMs: maxJitter, minRateHz: minRate)
        try c.check(
            maxFrozen: maxFrozen, maxScanoutMismatches: maxScanoutMismatches, observe: observe, verify: options.verify,
            durationSeconds: options.duration, warmupSeconds: warmup, windowSeconds: window)
        return c
    }

    /// Runs and judges one output or several (`--connector A --connector B`, or `all`: every
    /// output judged on its own with the same thresholds, each PASS/FAIL line naming it, the
    /// verdict failing when any output fails); `source` is where DRM devices come from (tests
    /// pass a fake), and `onRun` sees each run before it starts (tests script faults there).
    func execute(source: DeviceSource?, onRun: ((PacingRun) -> Void)? = nil) throws {
        let several = options.severalOutputs
        var runs: [ValidationOutcome.RunOutput] = []
        let report: RunReport
        let judge: OutputJudge
        let started = Date()
        let junitFile: LineFile?
        do {
            judge = OutputJudge(criteria: try self.criteria(), warmupSeconds: warmup, windowSeconds: window)
            if !several { try expect.validate() }
            try judge.criteria.requireJudging(
                severalOutputs: several, panelExpected: !expect.isEmpty, scanoutLimit: maxScanoutMismatches != nil)
            junitFile = try junit.map { try LineFile(path: $0) }
            do {
                report = RunReport(try options.paceOutputs(source: source, purpose: .validate) { o in
                    let tally = judge.makeTally()
                    runs.append(.init(tally: tally, sinks: o.sinks, panel: several ? DrivenPanel() : expect.observe(o.run.backend)))
                    o.sinks.add(tally)
                    onRun?(o.run)
                })
            } catch {
                junitFile?.discard()
                throw error
            }
        } catch let e as ExitCode {
            throw e
        } catch {
            StandardStreams.errorLine("cadence validate: \(String(describing: error))")
            throw ExitCode(2)
        }
        try show(ValidationOutcome.judging(report, runs: runs, with: judge, json: options.json,
                                           expected: expect.expected, scanoutLimit: maxScanoutMismatches,
                                           started: started), junitFile: junitFile)
    }

    /// Prints `outcome`'s lines, writes (or discards) the JUnit file between them, and exits
    /// with its status (3: passed but an output is incomplete).
    func show(_ outcome: ValidationOutcome, junitFile: LineFile?) throws {
        func show(_ lines: [ValidationOutcome.Line]) {
            for line in lines {
                switch line {
                case .output(let text): print(text)
                case .error(let text): StandardStreams.errorLine(text)
                }
            }
        }
        show(outcome.beforeJUnit)
        if let f = junitFile, let xml = outcome.junitXML { try write(f, xml) }
        if let f = junitFile, outcome.discardsJUnit { f.discard() }
        show(outcome.afterJUnit)
        if outcome.status != 0 { throw ExitCode(outcome.status) }
        if let code = StandardStreams.incompleteOutputStatus(outcome.incompleteOutputs) { throw ExitCode(code) }
    }

    /// Writes the JUnit `xml` to `file` and closes it; a write that fails is one line, exit 2.
    private func write(_ file: LineFile, _ xml: String) throws {
        do {
            try file.write(line: xml)
            file.close()
        } catch {
            StandardStreams.errorLine("cadence validate: \(String(describing: error))")
            throw ExitCode(2)
        }
    }
}
