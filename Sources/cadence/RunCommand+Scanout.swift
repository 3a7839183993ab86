import CadenceCore
import CadenceSession
import DRM
import Foundation
import KMSDisplay

/// `--verify crc` and `--fault stale-buffer:FRAME`: the options, starting the CRC check on the
/// display, and the summary's scanout line.
extension RunCommand {
    /// `--verify crc`, `writeback` or `crc,writeback`, with `--capture`'s frames; throws for
    /// anything else.
    func verifyChecks() throws -> (crc: Bool, writeback: Bool, schedule: CaptureSchedule?) {
        let onMismatch = capture == "on-mismatch"
        let onMismatchRefusal = CLIFailure(
            "--capture on-mismatch needs --verify crc,writeback (the CRC flags the frames whose capture is read)")
        guard let v = verify else {
            if onMismatch { throw onMismatchRefusal }
            if fault != nil { throw CLIFailure("--fault needs --verify crc (without it nothing can see the fault)") }
            if capture != nil { throw CLIFailure("--capture needs --verify writeback") }
            return (false, false, nil)
        }
        let parts = v.split(separator: ",").map(String.init)
        let known = parts.allSatisfy { $0 == "crc" || $0 == "writeback" }
        guard !parts.isEmpty, known, Set(parts).count == parts.count else {
            throw CLIFailure("--verify '\(v)': the checks are crc, writeback, or crc,writeback")
        }
        let crc = parts.contains("crc"), writeback = parts.contains("writeback")
        if fault != nil && !crc {
            throw CLIFailure("--fault needs --verify crc (without it nothing can see the fault)")
        }
        if onMismatch && !(crc && writeback) { throw onMismatchRefusal }
        guard writeback else {
            if capture != nil { throw CLIFailure("--capture needs --verify writeback") }
            return (crc, false, nil)
        }
        guard let c = capture else { throw CLIFailure("--verify writeback needs --capture every:N or frames:LIST") }
        do {
            return (crc, true, try CaptureSchedule(parsing: c))
        } catch {
            throw CLIFailure(
                "--capture '\(c)' must be every:N (N ≥ 1), frames:LIST (frame indexes ≥ 0, comma-separated) or on-mismatch"
            )
        }
    }

    /// The frame of `--fault stale-buffer:FRAME`, or nil.
    func staleBufferFault() throws -> Int? {
        guard let f = fault else { return nil }
        let p = f.split(separator: ":", omittingEmptySubsequences: false)
        guard p.count == 2, p[0] == "stale-buffer", let n = Int(p[1]), n >= 1 else {
            throw CLIFailure("--fault '\(f)' must be stale-buffer:FRAME with FRAME ≥ 1")
        }
        return n
    }

    /// The one line for a CRC capture that cannot start.
    static func crcRefusal(_ e: CRCError) -> CLIFailure {
        switch e {
        case .unsupported(let driver, _): return CLIFailure("--verify crc: not supported by \(driver)")
        default: return CLIFailure("--verify crc: \(e)")
        }
    }

    /// The writeback part of the summary's scanout line.
    static func writebackText(_ w: WritebackSummary) -> String {
        if let m = w.onMismatch { return onMismatchText(w, m) }
        var s = "writeback: captures \(w.captures), decoded \(w.decoded), equal \(w.equal)"
        if !w.mismatchedFrames.isEmpty {
            s += " (mismatched frames " + w.mismatchedFrames.map(String.init).joined(separator: ",") + ")"
        }
        if w.skipped > 0 { s += ", skipped \(w.skipped)" }
        if w.timedOut > 0 { s += ", timed out \(w.timedOut)" }
        if w.captures > 0 { s += String(format: ", read %.1f µs/capture", w.readMicroseconds / Double(w.captures)) }
        return s
    }

    /// The writeback part when capturing on a mismatch: jobs attached, captures read (each
    /// flagged frame with the frame its capture shows), buffers recycled unread.
    static func onMismatchText(_ w: WritebackSummary, _ m: OnMismatchCaptures) -> String {
        var s = "writeback on-mismatch: jobs \(m.jobs), captures \(w.captures)"
        if !m.flagged.isEmpty { s += " (" + m.flagged.map(\.description).joined(separator: "; ") + ")" }
        s += ", recycled unread \(m.recycledUnread)"
        if m.recycledUnjudged > 0 { s += " (\(m.recycledUnjudged) before their verdict)" }
        if m.withoutJob > 0 { s += ", flips without a job \(m.withoutJob)" }
        if w.skipped > 0 { s += ", flagged too late \(w.skipped)" }
        if w.timedOut > 0 { s += ", timed out \(w.timedOut)" }
        if w.captures > 0 { s += String(format: ", read %.1f µs/capture", w.readMicroseconds / Double(w.captures)) }
        return s
    }

    /// The summary's scanout line: frames verified, mismatches, inexact frames, the refreshes
    /// the CRCs show repeated, and the cost of reading the lines.
    static func scanoutLine(_ v: ScanoutSummary) -> String {
        guard v.crcRan || v.writeback == nil else { return writebackText(v.writeback!) }
        var line = v.crcVerdict
        if (v.reads ?? 0) > 0, let us = v.readMicroseconds {
            line += String(format: "  read %.1f µs/vblank", v.lines > 0 ? us / Double(v.lines) : 0)
        }
        if let f = v.failure { line += "  (reading stopped: \(f))" }
        if let w = v.writeback { line += "  " + writebackText(w) }
        return line
    }
}
