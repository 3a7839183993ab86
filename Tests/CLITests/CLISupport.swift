import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `cadence` binary: next to the test bundle, else in .build/debug.
func cadenceBinary() -> String {
    let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidates = [bundleDir.appendingPathComponent("cadence").path]
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/cadence").path)
    for c in candidates where FileManager.default.isExecutableFile(atPath: c) { return c }
    return candidates[0]
}

/// A running `cadence` process with its stdout and stderr captured to files.
final class CadenceProcess {
    let process = Process()
    let dir: String
    let stdoutPath: String
    let stderrPath: String

    init(_ args: [String], in dir: String, environment: [String: String] = [:]) throws {
        self.dir = dir
        stdoutPath = dir + "/.stdout-\(UUID().uuidString)"
        stderrPath = dir + "/.stderr-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: cadenceBinary())
        process.arguments = args
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits for the exit (killing it after `timeout` seconds, four times that under a
    /// sanitizer: ``hangLimitScale``) and returns (status, stdout, stderr).
    func finish(timeout: Double = 120) -> (status: Int32, out: String, err: String) {
        let end = Date().addingTimeInterval(timeout * hangLimitScale)
        while process.isRunning && Date() < end { usleep(20_000) }
        if process.isRunning { signal(SIGKILL); process.waitUntilExit() }
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: stdoutPath)
        try? FileManager.default.removeItem(atPath: stderrPath)
        return (process.terminationStatus, out, err)
    }
}

/// Runs `cadence ARGS` to completion in `dir`.
func cadence(_ args: [String], in dir: String, environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
    try CadenceProcess(args, in: dir, environment: environment).finish()
}

func scratchDirectory() -> String {
    let p = NSTemporaryDirectory() + "cadence-cli-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
    return p
}

/// Visible files in `dir` (the capture files start with a dot).
func files(in dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
}

func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

/// True when this test process (and so the `cadence` it runs, built alike) is built with
/// `--sanitize=thread`: the TSan runtime's entry point is linked in.
let underThreadSanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

/// True when this test process (and so the `cadence` it runs) is built with a sanitizer
/// (`--sanitize=address` or `thread`).
let underSanitizer: Bool =
    underThreadSanitizer || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

/// How much longer a wall-time limit that only guards against a hang (a process that never
/// exits, a file that never fills) waits under a sanitizer: its build runs several times slower,
/// and in CI the real-kernel checks (tools/vm/all.sh) run beside the sanitizer steps on the same
/// cores. A TSan-built `cadence run` of 600 frames with writeback captures once passed 120 s there.
let hangLimitScale: Double = underSanitizer ? 4 : 1

/// Waits up to 30 s (``hangLimitScale`` times that under a sanitizer) for the file at `path` to hold `n` complete lines (a run's log filling up);
/// records an issue if it never does.
func waitForLines(_ path: String, _ n: Int) throws {
    let end = Date().addingTimeInterval(30 * hangLimitScale)
    while Date() < end {
        if let d = FileManager.default.contents(atPath: path), d.filter({ $0 == 10 }).count >= n { return }
        usleep(20_000)
    }
    Issue.record("\(path) never reached \(n) lines")
}
