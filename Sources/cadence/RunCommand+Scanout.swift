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
    static func crcRefusal(_ e: CRCError) -> CLIFailure { CLIFailure(RunPlanning.crcRefusalLine(e)) }
}
