import CadenceCore
import CadenceReport
import KMSDisplay

/// The JSON-lines run log (`cadence run --log`): the header with the machine's context, one
/// line per frame the moment it completes, rate switches, seat-session changes, a context
/// record about once a second, and the end line with the summary; rotated when asked.
///
/// Failure rule: the first write that fails stops the log for good; the lines written stay
/// (the file reads like a killed run's: no end line), and the failure names the file and its
/// frames ("log run.jsonl: 812 frames, no end line (…)").
public final class LogSink: FrameSink {
    private let writer: RunLogWriter
    private let probe: SystemProbe
    private var system: SystemInfo?
    private var sampler: ContextSampler?
    private var context: SinkContext?
    private var stopped = false

    /// Creates (truncating) the log at `path`, rotated as `rotation` says; `systemRoot` is
    /// where /proc and /sys are read for the machine's context ("/" but in tests). Throws a
    /// one-line error for an unwritable path.
    public init(path: String, rotation: LogRotation? = nil, systemRoot: String = "/") throws {
        writer = try RunLogWriter(path: path, rotation: rotation)
        probe = SystemProbe(root: systemRoot)
    }

    /// The log file's path.
    public var path: String { writer.file.path }

    /// Reads the machine's context for the header (kernel, `driver`, CPU model and governor;
    /// which thermal zones and CPUs to sample). Call it before the run is created: under
    /// emulation listing /proc and /sys takes milliseconds, which must not delay the first frames.
    public func prepare(driver: String) {
        system = probe.info(driver: driver)
        sampler = probe.sampler()
    }

    /// Writes the header and the first context record. On a display that verifies its scanout
    /// with the CRTC's CRC (started before the run), the log carries every CRC line from here
    /// on (version 3: `RunLogHeader.carryCRCs(source:)`), those read before the run first.
    public func open(_ context: SinkContext) {
        self.context = context
        // A rotated log starts each file with the pacer's state (LogContinuation.pacer).
        if writer.file.rotation != nil { context.run.pacer.recordsPacerState = true }
        let backend = context.run.backend
        do {
            var header = RunLogHeader(backend: backend, configuration: context.run.configuration, system: system)
            header.connector = context.connector
            header.card = context.card
            let kms = backend as? KMSDisplay
            if let source = kms?.scanoutSource { header.carryCRCs(source: source) }
            try writer.begin(header)
            if let s = sampler { try writer.write(s.sample(timeNs: backend.now())) }
            kms?.observeScanoutSamples { [weak self] in self?.crc($0) }
        } catch { failed(error) }
    }

    /// Writes one CRC line.
    private func crc(_ sample: ScanoutVerifier.Sample) {
        guard !stopped else { return }
        do { try writer.write(CRCRecord(sample)) } catch { failed(error) }
    }

    /// Writes the frame's line (with the output's connector in a run over several).
    public func frame(_ report: FrameReport) {
        guard !stopped else { return }
        var record = FrameRecord(report)
        record.connector = context?.connector
        do {
            try writer.write(
                record, pacerState: report.pacerState, completedPacerState: report.pacerStateAtCompletion,
                statusTime: report.statusTime)
        } catch { failed(error) }
    }

    /// Writes a context record (temperatures, frequencies).
    public func status(_ status: RunStatus) {
        guard !stopped, let context, let sampler else { return }
        do { try writer.write(sampler.sample(timeNs: context.run.backend.now())) } catch { failed(error) }
    }

    /// Writes the rate switch.
    public func rateSwitch(_ change: RateSwitch) {
        guard !stopped else { return }
        do { try writer.write(change) } catch { failed(error) }
    }

    /// Writes the session record.
    public func sessionChange(_ change: SessionChange) {
        guard !stopped else { return }
        do { try writer.write(change) } catch { failed(error) }
    }

    /// Writes the end line (the run's summary): a log with an end line is complete.
    public func close(_ summary: RunSummary) {
        guard !stopped else { return }
        do { try writer.end(summary) } catch { failed(error) }
    }

    /// Removes the file (the run never started).
    public func discard() { writer.file.discard() }

    private func failed(_ error: any Error) {
        stopped = true
        context?.fail(.stopped("log", path: writer.file.path, frames: writer.frames, error: error, noEndLine: true))
    }
}
