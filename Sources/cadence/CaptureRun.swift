import CadenceCore
import Foundation
import KMSDisplay
import Raster
import Scenes

/// The frames `--capture` asks for: `every:N` (0, N, 2N, …) or `frames:LIST`.
struct CaptureSchedule: Equatable {
    var every: Int?
    var frames: Set<Int> = []

    init(parsing text: String) throws {
        if text == "on-mismatch" {
            throw CLIFailure("--capture on-mismatch is not implemented yet: use every:N or frames:LIST")
        }
        let p = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard p.count == 2 else { throw Self.usage(text) }
        switch p[0] {
        case "every":
            guard let n = Int(p[1]), n >= 1 else { throw Self.usage(text) }
            every = n
        case "frames":
            let list = p[1].split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard !list.isEmpty, list.allSatisfy({ ($0 ?? -1) >= 0 }) else { throw Self.usage(text) }
            frames = Set(list.compactMap { $0 })
        default:
            throw Self.usage(text)
        }
    }

    static func usage(_ text: String) -> CLIFailure {
        CLIFailure("--capture '\(text)' must be every:N (N ≥ 1) or frames:LIST (frame indexes ≥ 0, comma-separated)")
    }

    /// True when frame `index` is to be captured.
    func contains(_ index: Int) -> Bool {
        if let n = every { return index % n == 0 }
        return frames.contains(index)
    }
}

/// One run's captures: which frame the renderer just drew (for the display to keep), and
/// each capture checked against the render (frame identity decoded, pixels compared) and
/// written as a PNG.
final class CaptureRun {
    let schedule: CaptureSchedule?
    let pngBase: String
    /// The label of the frame rendered last, when it is to be captured.
    var next: Int?
    var summary = WritebackSummary()
    /// The first PNG that could not be written.
    var pngFailure: String?

    init(schedule: CaptureSchedule?, pngBase: String) {
        self.schedule = schedule
        self.pngBase = pngBase
    }

    /// The renderer drew frame `index`.
    func rendered(_ index: Int) { next = schedule?.contains(index) == true ? index : nil }

    /// The display finished the frame: its label when it is to be captured (once).
    func take() -> Int? {
        defer { next = nil }
        return next
    }

    /// Decodes the capture's frame identity, compares it with the render (the X byte
    /// ignored) and writes it as `BASE000050.png`.
    func check(_ c: WritebackCapture) {
        summary.captures += 1
        var captured = c.captured
        let decoded = captured.withUnsafeBytes { raw in
            FrameIdentity.decode(base: raw.baseAddress!, width: c.width, height: c.height, stride: c.width * 4)
        }
        let isDecoded = decoded.map { Int($0) } == c.label
        let isEqual = zip(captured, c.rendered).allSatisfy { ($0 ^ $1) & 0x00ff_ffff == 0 }
        if isDecoded { summary.decoded += 1 }
        if isEqual { summary.equal += 1 }
        if !(isDecoded && isEqual), summary.mismatchedFrames.count < 10 { summary.mismatchedFrames.append(c.label) }
        let digits = String(c.label)
        let path = pngBase + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".png"
        captured.withUnsafeMutableBytes { raw in
            let canvas = Canvas(base: raw.baseAddress!, width: c.width, height: c.height, stride: c.width * 4)
            do { try PNGWriter.write(canvas, to: path) } catch {
                if pngFailure == nil { pngFailure = "\(path): \(error)" }
            }
        }
    }

    /// The summary with the display's counts.
    func summary(_ stats: WritebackStatistics) -> WritebackSummary {
        var s = summary
        s.skipped = stats.skipped
        s.timedOut = stats.timedOut
        s.readMicroseconds = stats.readMicroseconds
        return s
    }
}

extension RunCommand {
    /// The writeback part of the summary's scanout line.
    static func writebackText(_ w: WritebackSummary) -> String {
        var s = "writeback: captures \(w.captures), decoded \(w.decoded), equal \(w.equal)"
        if !w.mismatchedFrames.isEmpty {
            s += " (mismatched frames " + w.mismatchedFrames.map(String.init).joined(separator: ",") + ")"
        }
        if w.skipped > 0 { s += ", skipped \(w.skipped)" }
        if w.timedOut > 0 { s += ", timed out \(w.timedOut)" }
        if w.captures > 0 { s += String(format: ", read %.1f µs/capture", w.readMicroseconds / Double(w.captures)) }
        return s
    }
}
