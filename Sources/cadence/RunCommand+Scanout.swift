import CadenceCore
import CadenceSession
import Foundation
import KMSDisplay

/// `--verify crc` and `--fault stale-buffer:FRAME`: the options, starting the CRC check on the
/// display, and the summary's scanout line.
extension RunCommand {
    /// True for `--verify crc`; throws for any other value.
    func verifyOption() throws -> Bool {
        guard let v = verify else {
            if fault != nil { throw CLIFailure("--fault needs --verify crc (without it nothing can see the fault)") }
            return false
        }
        guard v == "crc" else { throw CLIFailure("--verify '\(v)': the only check is crc") }
        return true
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

    /// The summary's scanout line: frames verified, mismatches, inexact frames, the refreshes
    /// the CRCs show repeated, and the cost of reading the lines.
    static func scanoutLine(_ v: ScanoutSummary) -> String {
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
        return line
    }
}
