import ArgumentParser
import CadenceCore
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
}

/// Everything a run writes besides its stdout summary: the JSON-lines log (header, one line per
/// frame the moment it completes, end line with the summary), the CSV, the summary file, and the
/// once-a-second status line on stderr.
///
/// Files are opened before anything else happens, so an unwritable path fails first with one
/// line; if the run is then refused (no device…), ``discard()`` removes what was created.
final class RunOutputs {
    private let log: RunLogWriter?
    private let csv: CSVExport.Writer?
    private let summaryFile: LineFile?
    private let quiet: Bool
    private var lastStatusWall = Date()
    /// The first error writing a file; the run stops when it is set.
    private(set) var failure: Error? = nil
    private var hardwareVBlank = true
    /// (sequence, kernel timestamp) of every shown frame, for the measured refresh (constant memory).
    private var vblankFit = RunningLinearFit()

    init(log logPath: String?, options: RunOutputOptions) throws {
        var cleanup: [() -> Void] = []
        do {
            log = try logPath.map { try RunLogWriter(path: $0) }
            if let l = log { cleanup.append { l.file.discard() } }
            csv = try options.csv.map { try CSVExport.Writer(path: $0) }
            if let c = csv { cleanup.append { c.discard() } }
            summaryFile = try options.summary.map { try LineFile(path: $0) }
        } catch {
            for c in cleanup { c() }
            throw error
        }
        quiet = options.quiet
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
    }

    /// Writes the log header and hooks the run's frame and status callbacks.
    func attach(_ run: PacingRun, configuration: RunConfiguration) throws {
        if let l = log {
            try l.begin(RunLogHeader(backend: run.backend, configuration: configuration))
        }
        lastStatusWall = Date()
        hardwareVBlank = run.backend.hasHardwareVBlank
        Self.unblockStopSignals()
        run.onFrame = { [unowned self] r in self.frame(r) }
        run.onStatus = { [unowned self] s in self.status(s) }
    }

    private func frame(_ r: FrameReport) {
        if r.wasPresented && r.sequence > 0 { vblankFit.add(x: Double(r.sequence), y: Double(r.presentedTime)) }
        guard failure == nil, log != nil || csv != nil else { return }
        let rec = FrameRecord(r)
        do {
            try log?.write(rec)
            try csv?.write(rec)
        } catch {
            failure = error
        }
    }

    /// Prints at most one status line per wall-clock second (a virtual-time run produces many
    /// display seconds per real second: the latest one is shown).
    private func status(_ s: RunStatus) {
        guard !quiet else { return }
        let now = Date()
        if now.timeIntervalSince(lastStatusWall) < 1 {
            return
        }
        lastStatusWall = now
        FileHandle.standardError.write(Data((Self.statusLine(s) + "\n").utf8))
    }

    /// A parent may start us with SIGINT/SIGTERM blocked (the mask is inherited through exec):
    /// unblock them so that the stop handlers run.
    static func unblockStopSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The live status line.
    static func statusLine(_ s: RunStatus) -> String {
        String(format: "[%7.1f s] %6.1f fps  effective %.3f Hz  dropped %d refreshes in %d events  hitch %.2f ms/s",
               s.elapsedSeconds, s.fps, s.effectiveRateHz, s.droppedRefreshes, s.dropEvents, s.hitchTimeRatio)
    }

    /// The CRTC's refresh measured from the shown frames' kernel timestamps (nil when unknown,
    /// and on drivers without a vblank interrupt, whose sequences are synthetic).
    var measuredRefreshHz: Double? {
        guard hardwareVBlank, let fit = vblankFit.fit, fit.slope > 0 else { return nil }
        return 1e9 / fit.slope
    }

    /// Completes the files: log end line, summary JSON. Throws the first write error.
    func finish(_ summary: RunSummary) throws {
        if let e = failure { throw e }
        try log?.end(summary)
        csv?.close()
        if let f = summaryFile {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            try f.write(line: [UInt8](try enc.encode(summary)))
            f.close()
        }
    }
}
