import Foundation
import Testing

/// `CADENCE_ISA` from the command line: the path that ran is reported; a path the CPU lacks
/// (or an unknown name) is one line on stderr and exit 2 for `bench`, one line and the
/// automatic path for every other command.
@Suite struct ISACLITests {
    func run(_ args: [String], isa: String?) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cadenceBinary())
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["CADENCE_ISA"] = isa
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    let bench = ["bench", "--workload", "rects", "--size", "64x48", "--frames", "1", "--warmup", "0", "--json"]

    @Test func benchJSONNamesTheBaselinePathWhenForced() throws {
        let r = try run(bench, isa: "baseline")
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("\"isa\":\"baseline\""), "\(r.out)")
    }

    @Test func benchJSONNamesTheAutomaticPath() throws {
        let r = try run(bench, isa: nil)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("\"isa\":\"\(best())\""), "\(r.out)")
    }

    /// The path this CPU should get automatically.
    func best() -> String {
        #if arch(x86_64)
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        return cpuinfo.contains(" avx2") ? "avx2" : "baseline"
        #else
        return "baseline"
        #endif
    }

    @Test func unknownPathIsOneLineAndExitTwo() throws {
        let r = try run(bench, isa: "sse9")
        #expect(r.status == 2)
        #expect(r.out.isEmpty)
        #expect(r.err == "cadence: CADENCE_ISA=sse9 is not a kernel path: use baseline, avx2 or avx512\n")
    }

    @Test func pathTheCPULacksIsOneLineAndExitTwo() throws {
        // No AVX-512 kernels are built, so avx512 is never available. Help still works.
        let h = try run(["bench", "--help"], isa: "avx512")
        #expect(h.status == 0 && h.out.contains("CADENCE_ISA"))
        // Other commands draw anyway (same pixels on every path), after one line.
        let dir = NSTemporaryDirectory() + "cadence-isa-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let png = dir + "/f.png"
        let r = try run(["render", "--scene", "bar", "--size", "64x36", "--output", png], isa: "avx512")
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.hasPrefix("cadence: CADENCE_ISA=avx512: ") && r.err.hasSuffix("; drawing with \(best())\n"), "\(r.err)")
        #expect(FileManager.default.fileExists(atPath: png))
        let e = try run(bench, isa: "avx512")
        #expect(e.status == 2)
        #expect(e.err.hasPrefix("cadence: CADENCE_ISA=avx512: this CPU or build has no avx512 path (available: baseline"))
        #expect(e.err.split(separator: "\n").count == 1)
    }
}
