import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit statuses besides 0 (ok/pass), 1 (a check or criterion failed, device lost) and 2
/// (usage, input or device error).
enum ExitStatus {
    /// 3: the run completed (and `validate` passed) but an output is incomplete: a `--log`,
    /// `--csv` or `--summary` file stopped being written (full filesystem, size limit, I/O
    /// error, removed), or stdout was closed before the summary was printed. Not 1, which says
    /// the display failed a check, nor 2, which says the run could not be done: the display's
    /// result is valid, an artifact of it is missing. A failed check (1) or device error (2)
    /// wins over it.
    static let outputIncomplete: Int32 = 3
}

/// stdout and stderr when the other end may be gone (`cadence run --json | head -c1`).
enum StandardStreams {
    /// Ignores SIGPIPE and SIGXFSZ, so that writing to a pipe whose reader left, or past the
    /// file-size limit (`ulimit -f`), fails with EPIPE or EFBIG, which the writers report,
    /// instead of killing the process. Call once at start.
    static func ignoreWriteSignals() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Writes `text` and a newline to stderr with write(2). Errors are ignored (stderr closed:
    /// there is nowhere left to report them); never traps, unlike `FileHandle.write(_:)`.
    static func errorLine(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(2, raw.baseAddress! + off, raw.count - off)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                off += n
            }
        }
    }

    /// Flushes what `print` buffered; nil when it reached stdout, else why not ("Broken pipe").
    static func flushStandardOutput() -> String? {
        // fflush(NULL) flushes every output stream; the CLI's only buffered one is stdout.
        guard fflush(nil) != 0 else { return nil }
        return String(cString: strerror(errno))
    }

    /// For `run` and `validate` after the summary: the exit status for an incomplete output
    /// (stdout closed, or a file in `incompleteOutputs`), after one stderr line for stdout;
    /// nil when everything was written.
    static func incompleteOutputStatus(_ incompleteOutputs: [String]?) -> Int32? {
        var incomplete = !(incompleteOutputs ?? []).isEmpty
        if let why = flushStandardOutput() {
            errorLine("cadence: stdout closed before the summary was printed (\(why))")
            incomplete = true
        }
        return incomplete ? ExitStatus.outputIncomplete : nil
    }
}
