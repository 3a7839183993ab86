import CadenceCore
import CadenceReport
import Foundation

/// What `cadence report` writes and prints about the log it drew.
extension LogReport {
    /// The picture kinds `cadence report` writes, by file extension.
    public static let pictureExtensions = ["png", "svg", "html", "htm"]

    /// The chart as a file of the kind `pathExtension` names (lowercased: png, svg, else HTML
    /// with the summary and the list of drops).
    public func picture(_ pathExtension: String) -> [UInt8] {
        switch pathExtension {
        case "png": return PNGReport.encode(chart)
        case "svg": return Array(SVGReport.svg(chart).utf8)
        default: return Array(HTMLReport.html(chart, log: log, source: source).utf8)
        }
    }

    /// For an observe log, one line per client (its flips and drops) and one saying which was
    /// drawn and why (`named`: the client was named by the user); none for a run log.
    public func clientLines(named: Bool) -> [String] {
        guard let observed, let chosen = drawn else { return [] }
        var lines = observed.clients.map { c in
            let s = LogAnalysis.summary(of: c.log)
            return
                "client \(c.client) (pid \(c.pid), crtc \(c.crtc)): \(s.presented) flips, \(s.droppedRefreshes) dropped refreshes in \(s.dropEvents) events"
        }
        let why =
            named
            ? "named by --client"
            : observed.clients.count > 1 ? "the most flips of \(observed.clients.count) clients" : "the only client"
        lines.append("drawing client \(chosen.client) (pid \(chosen.pid), crtc \(chosen.crtc)): \(why)")
        return lines
    }

    /// The line after the files written: the frames, the drops, the frames marked, and what was
    /// read when not one whole run (a segment, several segments, a run that did not finish).
    public var framesLine: String {
        let s = chart.summary
        var note =
            log.segmentDescription.map { " (\($0))" }
            ?? (log.end == nil ? " (log has no end line: the run did not finish)" : "")
        if files.count > 1 {
            let first = log.continuation?.segment ?? 1
            let end =
                log.rotated != nil
                ? "; the run continued in a file not given"
                : log.end == nil ? "; the last has no end line: the run did not finish" : ""
            note = " (segments \(first)–\(first + files.count - 1) of a rotated log, read as one run\(end))"
        }
        return
            "\(log.frameCount) frames, \(s.droppedRefreshes) dropped refreshes in \(s.dropEvents) events, \(chart.markedFrames) frames marked\(note)"
    }

    /// A file `cadence report` could not write; its description is the one line for the user.
    public struct WriteFailure: Error, CustomStringConvertible {
        /// "cannot write PATH: why".
        public var description: String
    }

    /// Writes the picture to `output` (its kind from its extension, see ``picture(_:)``) and the
    /// frames as PresentMon-style CSV to `csv`, and returns each file written with its size in
    /// bytes, in that order. The picture (and an observe log's CSV) is rendered before anything
    /// is written, so that a failure leaves no partial output; a run log's CSV is written last,
    /// reading the logs again in frame order. Throws ``WriteFailure``, or the CSV export's error.
    public func write(output: String?, csv: String?, allowPartialLastLine: Bool) throws -> [(path: String, bytes: Int)]
    {
        var outputs: [(String, [UInt8])] = []
        if let path = output { outputs.append((path, picture((path as NSString).pathExtension.lowercased()))) }
        if let c = csv, isObserved { outputs.append((c, Array(CSVExport.csv(log.records).utf8))) }
        for (path, bytes) in outputs {
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw WriteFailure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
        var written = outputs.map { (path: $0.0, bytes: $0.1.count) }
        if let c = csv, !isObserved {
            written.append((c, try CSVExport.write(logs: files, allowPartialLastLine: allowPartialLastLine, to: c)))
        }
        return written
    }
}
