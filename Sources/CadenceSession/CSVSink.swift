import CadenceCore
import CadenceReport

/// The PresentMon-style CSV of a run (`cadence run --csv`): the header row when created, one
/// row per frame the moment it completes.
///
/// Failure rule: the first row that cannot be written stops the CSV; the rows written stay,
/// and the failure names the file and its rows ("csv run.csv: 812 frames (…)").
public final class CSVSink: FrameSink {
    private let writer: CSVExport.Writer
    private var context: SinkContext?
    private var stopped = false

    /// Creates (truncating) the CSV at `path` with its header row; throws a one-line error for
    /// an unwritable path.
    public init(path: String) throws {
        writer = try CSVExport.Writer(path: path)
    }

    /// The CSV file's path.
    public var path: String { writer.path }

    /// Keeps the context, to report a failure.
    public func open(_ context: SinkContext) { self.context = context }

    /// Writes the frame's row.
    public func frame(_ report: FrameReport) {
        guard !stopped else { return }
        var record = FrameRecord(report)
        record.connector = context?.connector
        do { try writer.write(record) } catch {
            stopped = true
            context?.fail(.stopped("csv", path: writer.path, frames: writer.rows, error: error))
        }
    }

    /// Closes the file.
    public func close(_ summary: RunSummary) { writer.close() }

    /// Removes the file (the run never started).
    public func discard() { writer.discard() }
}
