import ArgumentParser
import CadenceCore
import CadenceMetrics
import CadenceReport
import Foundation

/// The output options of `cadence run` and `cadence validate` besides `--log` and `--json`.
struct RunOutputOptions: ParsableArguments {
    @Option(help: "Write the frames as PresentMon-style CSV to FILE (MsBetweenPresents, MsBetweenDisplayChange, MsUntilDisplayed, Dropped, Sequence, Cause, …).")
    var csv: String?
    @Option(help: "Write the summary as one JSON object to FILE.")
    var summary: String?
    @Flag(help: "No live status line on stderr.")
    var quiet = false
    @Option(name: .customLong("log-max-size"), help: "Rotate the --log file before it grows past SIZE (10M, 512K, 1G or bytes; at least 64K): FILE is the current file, FILE.1 the one before, …; each starts with the header and reads on its own.")
    var logMaxSize: String?
    @Option(name: .customLong("log-keep"), parsing: .unconditional, help: "With --log-max-size: keep N earlier files (FILE.1 … FILE.N; default 5, 0 = only the current one); older ones are deleted.")
    var logKeep: Int?
    @Option(name: .customLong("system-root"), help: ArgumentHelp(
        "Read the log's kernel, CPU, temperature and frequency context from DIR/proc and DIR/sys (tests).",
        visibility: .hidden))
    var systemRoot: String = "/"
    @OptionGroup(title: "Prometheus metrics") var metrics: MetricsOptions
}

/// Everything a run writes besides its stdout summary: the JSON-lines log (header, one line per
/// frame the moment it completes, end line with the summary), the CSV, the summary file, and the
/// once-a-second status line on stderr.
///
/// Files are opened before anything else happens, so an unwritable path fails first with one
/// line; if the run is then refused (no device…), ``discard()`` removes what was created.
///
/// A file that fails later (full filesystem, size limit, I/O error, removed) stops being written
/// and the run goes on: one stderr line says which file stopped after how many frames and why,
/// the lines already written stay (the log reads like a killed run's: no end line), and the
/// summary's `incompleteOutputs` names it, which makes `run` and `validate` exit with
/// ``ExitStatus/outputIncomplete``.
final class RunOutputs {
    private let log: RunLogWriter?
    private let csv: CSVExport.Writer?
    private let summaryFile: LineFile?
    private let quiet: Bool
    private let probe: SystemProbe
    /// Found by ``prepare(driver:)``, before the run exists.
    private var system: SystemInfo?
    private var sampler: ContextSampler?
    /// The display's clock, for the context records' timestamps.
    private var clock: (() -> Int64)?
    private var lastStatusWall = Date()
    private var logStopped = false
    private var csvStopped = false
    /// One line per output that could not be completed (summary `incompleteOutputs`).
    private(set) var incomplete: [String] = []
    /// False on drivers without a vblank interrupt (their sequences are synthetic).
    private(set) var hardwareVBlank = true
    /// (sequence, kernel timestamp) of every shown frame, for the measured refresh (constant memory).
    private var vblankFit = RunningLinearFit()
    /// Prometheus metrics (`--metrics-port`, `--metrics-textfile`): fed from the frame hook
    /// without allocating or blocking; counted, written and served on threads of their own.
    private let metrics: MetricsFeed?
    private let metricsServer: MetricsServer?
    private let metricsTextfile: String?
    private var nominalRefreshHz = 0.0
    /// The run's intended rate (the summary's effective rate), read again at each rate switch.
    private var intendedRateHz = 0.0
    private var readIntendedRate: (() -> Double)?
    /// The output's connector in a run over several outputs: written on the log's header and
    /// every frame line, and put before each status line. Nil for one output (logs unchanged).
    var connector: String?
    /// The output's card node, when the run's outputs are on several cards: written on the log's
    /// header.
    var card: String?
    /// What the status lines call the output (`card1-DP-1` across cards; else the connector).
    var outputName: String?

    init(log logPath: String?, options: RunOutputOptions) throws {
        let rotation = try Self.rotation(log: logPath, maxSize: options.logMaxSize, keep: options.logKeep)
        var cleanup: [() -> Void] = []
        do {
            log = try logPath.map { try RunLogWriter(path: $0, rotation: rotation) }
            if let l = log { cleanup.append { l.file.discard() } }
            csv = try options.csv.map { try CSVExport.Writer(path: $0) }
            if let c = csv { cleanup.append { c.discard() } }
            summaryFile = try options.summary.map { try LineFile(path: $0) }
            if let f = summaryFile { cleanup.append { f.discard() } }
            let m = options.metrics
            try m.checkAvailable()
            metricsTextfile = m.metricsTextfile
            let feed = m.metricsPort != nil || m.metricsTextfile != nil ? MetricsFeed(textfile: m.metricsTextfile) : nil
            try feed?.writeTextfileNow()
            metrics = feed
            metricsServer = try feed.flatMap { f in try m.startServer { f.exposition() } }
        } catch {
            for c in cleanup { c() }
            throw error
        }
        quiet = options.quiet
        probe = SystemProbe(root: options.systemRoot)
    }

    /// The rotation `--log-max-size` and `--log-keep` ask for (nil: none); a one-line error for
    /// a bad size or count, or either without `--log`.
    static func rotation(log: String?, maxSize: String?, keep: Int?) throws -> LogRotation? {
        guard let text = maxSize else {
            if keep != nil { throw CLIFailure("--log-keep needs --log-max-size (the size at which the log rotates)") }
            return nil
        }
        guard log != nil else { throw CLIFailure("--log-max-size needs --log FILE") }
        let bytes: Int64
        do { bytes = try LogRotation.parseSize(text) } catch { throw CLIFailure("--log-max-size \(error)") }
        guard bytes >= LogRotation.minimumBytes else {
            throw CLIFailure("--log-max-size \(text) is below the minimum of 64K (a log file must hold its header and many frames)")
        }
        let n = keep ?? LogRotation.defaultKeep
        guard (0...LogRotation.maximumKeep).contains(n) else {
            throw CLIFailure("--log-keep must be 0 to \(LogRotation.maximumKeep) (earlier files kept)")
        }
        return LogRotation(maxBytes: bytes, keep: n)
    }

    /// Runs `body`; when it throws, removes the files opened so far and rethrows.
    func discardOnError<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            discard()
            throw error
        }
    }

    /// Removes every file this run created (the run never started).
    func discard() {
        log?.file.discard()
        csv?.discard()
        summaryFile?.discard()
        metricsServer?.stop()
        metrics?.finish()
    }

    /// Starts counting frames for the metrics series `labels` (a no-op without metrics options).
    func startMetrics(labels: FrameMetrics.Labels) throws {
        try metrics?.start(labels: labels)
    }

    /// Reads the machine's context for the log (kernel, `driver`, CPU model and governor; which
    /// thermal zones and CPUs to sample). Call it before the run is created: under emulation
    /// listing /proc and /sys takes milliseconds, which must not delay the first frames.
    func prepare(driver: String) {
        guard log != nil else { return }
        system = probe.info(driver: driver)
        sampler = probe.sampler()
    }

    /// Writes the log header and the first context record, and hooks the run's frame, status
    /// and rate-switch callbacks.
    func attach(_ run: PacingRun, configuration: RunConfiguration) {
        if let l = log {
            let backend = run.backend
            clock = { backend.now() }
            do {
                var header = RunLogHeader(backend: backend, configuration: configuration, system: system)
                header.connector = connector
                header.card = card
                try l.begin(header)
                if let s = sampler { try l.write(s.sample(timeNs: backend.now())) }
            } catch { logFailed(error) }
        }
        lastStatusWall = Date()
        hardwareVBlank = run.backend.hasHardwareVBlank
        nominalRefreshHz = run.backend.refreshInterval > 0 ? 1e9 / run.backend.refreshInterval : 0
        readIntendedRate = { [unowned run] in run.intendedRateHz }
        intendedRateHz = run.intendedRateHz
        Self.unblockStopSignals()
        run.onFrame = { [unowned self] r in self.frame(r) }
        run.onStatus = { [unowned self] s in self.status(s) }
        run.onRateSwitch = { [unowned self] s in self.rateSwitch(s) }
        run.onSessionChange = { [unowned self] c in self.sessionChange(c) }
    }

    /// A seat session paused or resumed: one stderr line (also with --quiet: an event, not the
    /// live status line) and a log record.
    private func sessionChange(_ c: SessionChange) {
        StandardStreams.errorLine(c.event == .paused
            ? "session paused (VT switched away): no frames until it comes back"
            : String(format: "session resumed after %.3f s: mode restored, pacing again", Double(c.gapNs ?? 0) / 1e9))
        guard let l = log, !logStopped else { return }
        do { try l.write(c) } catch { logFailed(error) }
    }

    private func rateSwitch(_ s: RateSwitch) {
        if let r = readIntendedRate { intendedRateHz = r() }
        guard let l = log, !logStopped else { return }
        do { try l.write(s) } catch { logFailed(error) }
    }

    private func frame(_ r: FrameReport) {
        if r.wasPresented && r.sequence > 0 { vblankFit.add(x: Double(r.sequence), y: Double(r.presentedTime)) }
        if let m = metrics { m.push(FrameSample(r, refreshHz: measuredRefreshHz ?? nominalRefreshHz, effectiveRateHz: intendedRateHz)) }
        let logging = log != nil && !logStopped, exporting = csv != nil && !csvStopped
        guard logging || exporting else { return }
        var rec = FrameRecord(r)
        rec.connector = connector
        if logging {
            do { try log!.write(rec) } catch { logFailed(error) }
        }
        if exporting {
            do { try csv!.write(rec) } catch {
                csvStopped = true
                stopped("csv", csv!.path, frames: csv!.rows, error)
            }
        }
    }

    private func logFailed(_ error: Error) {
        logStopped = true
        guard let l = log else { return }
        stopped("log", l.file.path, frames: l.frames, error, noEndLine: true)
    }

    /// Notes an output that stopped: one stderr line now, one summary entry at the end.
    /// `frames` is nil for the summary file (written once, at the end).
    private func stopped(_ what: String, _ path: String, frames: Int?, _ error: Error, noEndLine: Bool = false) {
        let why = String(describing: error)
        guard let n = frames else {
            incomplete.append("\(what) \(path): not written (\(why))")
            StandardStreams.errorLine("cadence: the \(what) file was not written: \(why)")
            return
        }
        incomplete.append("\(what) \(path): \(n) frames\(noEndLine ? ", no end line" : "") (\(why))")
        let name = what == "log" ? "logging" : "the \(what)"
        StandardStreams.errorLine("cadence: \(name) stopped after \(n) frames: \(why); the run goes on and the \(n) frames written stay")
    }

    /// Called about once a second of display time: writes a context record to the log, and
    /// prints at most one status line per wall-clock second (a virtual-time run produces many
    /// display seconds per real second: the latest one is shown).
    private func status(_ s: RunStatus) {
        if let l = log, !logStopped, let now = clock, let sampler {
            do { try l.write(sampler.sample(timeNs: now())) } catch { logFailed(error) }
        }
        guard !quiet else { return }
        let now = Date()
        if now.timeIntervalSince(lastStatusWall) < 1 {
            return
        }
        lastStatusWall = now
        StandardStreams.errorLine(((outputName ?? connector).map { "\($0): " } ?? "") + Self.statusLine(s))
    }

    /// A parent may start us with SIGINT/SIGTERM/SIGHUP blocked (the mask is inherited through
    /// exec): unblock them so that the stop handlers run.
    static func unblockStopSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The live status line.
    static func statusLine(_ s: RunStatus) -> String {
        if s.sessionPaused {
            return String(format: "[%7.1f s] session paused (VT switched away)  dropped %d refreshes in %d events before it",
                          s.elapsedSeconds, s.droppedRefreshes, s.dropEvents)
        }
        return String(format: "[%7.1f s] %6.1f fps  effective %.3f Hz  dropped %d refreshes in %d events  hitch %.2f ms/s",
               s.elapsedSeconds, s.fps, s.effectiveRateHz, s.droppedRefreshes, s.dropEvents, s.hitchTimeRatio)
    }

    /// The CRTC's refresh measured from the shown frames' kernel timestamps (nil when unknown,
    /// and on drivers without a vblank interrupt, whose sequences are synthetic).
    var measuredRefreshHz: Double? {
        guard hardwareVBlank, let fit = vblankFit.fit, fit.slope > 0 else { return nil }
        return 1e9 / fit.slope
    }

    /// Completes the files (log end line, CSV, summary JSON) and returns `summary` with
    /// `incompleteOutputs` naming every output that stopped early. Never throws: a file that
    /// cannot be completed is reported (stderr line, summary entry), the run's result stands.
    func finish(_ summary: RunSummary) -> RunSummary {
        if let l = log, !logStopped {
            // The end line is the run's summary; a log with an end line is complete.
            do { try l.end(summary) } catch { logFailed(error) }
        }
        csv?.close()
        if let m = metrics {
            if let e = m.finish() { incomplete.append("metrics textfile \(metricsTextfile ?? ""): \(e)") }
            if m.lostSamples > 0 { incomplete.append("metrics: \(m.lostSamples) frames not counted (the metrics thread fell behind)") }
        }
        metricsServer?.stop()
        var s = summary
        s.incompleteOutputs = incomplete.isEmpty ? nil : incomplete
        if let f = summaryFile {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            do {
                try f.write(line: [UInt8](try enc.encode(s)))
            } catch {
                stopped("summary", f.path, frames: nil, error)
                s.incompleteOutputs = incomplete
            }
            f.close()
        }
        return s
    }
}
