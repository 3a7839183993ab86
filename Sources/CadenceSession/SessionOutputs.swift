import CadenceReport

/// What a run writes besides its printed summary: the run log (rotated or not), the CSV and
/// the summary file by path, and whether the live status line is shown. ``SessionSinks``
/// creates the files and the sinks from it.
public struct SessionOutputs: Equatable, Sendable {
    /// The JSON-lines run log (``LogSink``).
    public var log: String?
    /// When the log rotates (nil: never).
    public var logRotation: LogRotation?
    /// The PresentMon-style CSV (``CSVSink``).
    public var csv: String?
    /// The summary as one JSON line, written at the end.
    public var summary: String?
    /// No live status line (session events are still shown).
    public var quiet: Bool
    /// Where /proc and /sys are read for the log's machine context ("/" but in tests).
    public var systemRoot: String

    /// The files and status line of a run, each as its property describes; nothing given is
    /// no files and the status line shown, with the machine context read from "/".
    public init(
        log: String? = nil, logRotation: LogRotation? = nil, csv: String? = nil, summary: String? = nil,
        quiet: Bool = false, systemRoot: String = "/"
    ) {
        self.log = log
        self.logRotation = logRotation
        self.csv = csv
        self.summary = summary
        self.quiet = quiet
        self.systemRoot = systemRoot
    }

    /// The files of one output of a run over several: each path with the output's name in it
    /// (``path(_:for:)``: `run.jsonl` → `run.DP-1.jsonl`).
    public func forOutput(named name: String) -> SessionOutputs {
        var o = self
        o.log = log.map { Self.path($0, for: name) }
        o.csv = csv.map { Self.path($0, for: name) }
        o.summary = summary.map { Self.path($0, for: name) }
        return o
    }

    /// `path` for one output: `.NAME` before the extension (`run.jsonl` → `run.DP-1.jsonl`), or
    /// at the end when the file name has none.
    public static func path(_ path: String, for name: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[slash...].lastIndex(of: "."), dot > slash {
            return String(path[..<dot]) + "." + name + String(path[dot...])
        }
        return path + "." + name
    }
}

extension SessionSinks {
    /// Creates the files `outputs` names, in order (log, CSV, summary), and the sinks that
    /// write them, then the status line's: a log, a CSV, a ``StatusSink``. Throws a one-line
    /// error for an unwritable path, after removing the files created before it.
    public convenience init(files outputs: SessionOutputs, notice: @escaping (String) -> Void) throws {
        var created: [any FrameSink] = []
        var summaryFile: LineFile? = nil
        do {
            if let path = outputs.log {
                created.append(try LogSink(path: path, rotation: outputs.logRotation, systemRoot: outputs.systemRoot))
            }
            if let path = outputs.csv { created.append(try CSVSink(path: path)) }
            summaryFile = try outputs.summary.map { try LineFile(path: $0) }
        } catch {
            for sink in created { sink.discard() }
            throw error
        }
        self.init(created + [StatusSink(quiet: outputs.quiet)], summaryFile: summaryFile, notice: notice)
    }
}
