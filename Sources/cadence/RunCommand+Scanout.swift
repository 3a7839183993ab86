import CadenceCore
import CadenceSession
import Foundation
import KMSDisplay

/// `--verify crc` and `--fault stale-buffer:FRAME`: the options, starting the CRC check on the
/// display, and the summary's scanout line.
extension RunCommand {
    /// `--verify crc`, `writeback` or `crc,writeback`, with `--capture`'s frames; throws for
    /// anything else.
    func verifyChecks() throws -> (crc: Bool, writeback: Bool, schedule: CaptureSchedule?) {
        guard let v = verify else {
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
        guard writeback else {
            if capture != nil { throw CLIFailure("--capture needs --verify writeback") }
            return (crc, false, nil)
        }
        guard let c = capture else { throw CLIFailure("--verify writeback needs --capture every:N or frames:LIST") }
        return (crc, true, try CaptureSchedule(parsing: c))
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

    /// Starts `--verify crc` on the display: one line and exit 2 when it cannot.
    func startVerification(_ display: any DisplayBackend, out: SessionSinks) throws {
        guard let k = display as? KMSDisplay else {
            try? display.close()
            out.discard()
            throw CLIFailure("--verify crc needs a KMS display (the \(display.name) display has no CRTC)")
        }
        do {
            try k.verifyScanout()
        } catch let e {
            try? display.close()
            out.discard()
            switch e {
            case .unsupported(let driver, _): throw CLIFailure("--verify crc: not supported by \(driver)")
            default: throw CLIFailure("--verify crc: \(e)")
            }
        }
    }

    /// Starts `--verify writeback` on the display: one line and exit 2 when it cannot.
    func startWriteback(_ display: any DisplayBackend, captures: CaptureRun, out: SessionSinks) throws {
        guard let k = display as? KMSDisplay else {
            try? display.close()
            out.discard()
            throw CLIFailure("--verify writeback needs a KMS display (the \(display.name) display has no CRTC)")
        }
        do {
            try k.startWriteback(request: { captures.take() }, deliver: { captures.check($0) })
        } catch let e {
            try? display.close()
            out.discard()
            throw CLIFailure("--verify writeback: \(e)")
        }
    }

    /// `LOG-capture-` beside `--log` (its extension dropped), else `capture-` here.
    static func capturePNGBase(log: String?) -> String {
        guard var base = log else { return "capture-" }
        for ext in [".zst", ".jsonl", ".json", ".log"] where base.hasSuffix(ext) { base.removeLast(ext.count) }
        return base + "-capture-"
    }

    /// The summary's scanout line: frames verified, mismatches, inexact frames, the refreshes
    /// the CRCs show repeated, and the cost of reading the lines.
    static func scanoutLine(_ v: ScanoutSummary) -> String {
        guard v.source != nil || v.writeback == nil else { return writebackText(v.writeback!) }
        var line =
            "crc \(v.source ?? "auto"): \(v.verified) of \(v.frames) frames verified  mismatches \(v.mismatches) (stale \(v.stale)"
        if !v.staleFrames.isEmpty { line += " at frame " + v.staleFrames.map(String.init).joined(separator: ",") }
        line +=
            ", changes without flip \(v.changesWithoutFlip))  inexact \(v.inexact) (missing lines \(v.missingLines), repeated \(v.repeatedLines), catch-up \(v.catchUpLines))"
        line += "  repeated refreshes \(v.repeatedRefreshes)  lines \(v.lines)"
        if (v.reads ?? 0) > 0, let us = v.readMicroseconds {
            line += String(format: "  read %.1f µs/vblank", v.lines > 0 ? us / Double(v.lines) : 0)
        }
        if let f = v.failure { line += "  (reading stopped: \(f))" }
        if let w = v.writeback { line += "  " + writebackText(w) }
        return line
    }
}
