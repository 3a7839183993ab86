import ArgumentParser
import CadenceSession
import Raster

/// `cadence bench`: times the rasterizer workloads (see `BenchWorkload` for their exact
/// definitions) and the memset/memcpy limits on the same buffer.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Benchmark the rasterizer workloads.",
        usage: """
            cadence bench [--workload <workload>] [--size <size>] [--frames <frames>]
                   [--threads <threads>] [--warmup <warmup>] [--json]
            """,
        discussion: """
            Workloads: fill, rects, circles, gradient, blit, memset, memcpy, scene:NAME,
            all (all = the first seven plus every scene). Use a release build:
              swift build -c release --scratch-path .build-release

            Exit status:
              0  measured
              2  usage or input error (unknown workload, bad size)

            Examples:
              cadence bench --workload rects --size 1920x1080 --frames 100 --json
              cadence bench --workload all --size 3840x2160 --threads 2
              CADENCE_ISA=baseline cadence bench --workload rects   force a kernel path
            The kernel path (baseline, avx2) is picked from CPUID at start-up; CADENCE_ISA
            forces one (a path this CPU lacks, or an unknown name: one line, exit 2; other
            commands print the line and draw with the automatic path). Output names the path.
            """)

    @Option(help: "Workload name, scene:NAME, or all.")
    var workload = "all"
    @Option(parsing: .unconditional, help: "Frame size, WIDTHxHEIGHT.")
    var size = "1920x1080"
    @Option(parsing: .unconditional, help: "Timed frames per workload.")
    var frames = "100"
    @Option(parsing: .unconditional, help: "Threads (horizontal bands); 0 = every core.")
    var threads = "1"
    @Option(parsing: .unconditional, help: "Untimed warm-up frames.")
    var warmup = "5"
    @Flag(help: "One JSON object per workload.")
    var json = false

    func run() throws {
        let (w, h) = try RasterCLI.checked { try SceneStill.size(size) }
        let n = try RasterCLI.checked { try SceneStill.integer(frames, "--frames", min: 1) }
        let warm = try RasterCLI.checked { try SceneStill.integer(warmup, "--warmup", min: 0) }
        var t = try RasterCLI.checked { try SceneStill.integer(threads, "--threads", min: 0) }
        if t == 0 { t = BandedRenderer.onlineProcessorCount }
        guard let list = WorkloadTiming.workloads(named: workload) else {
            throw RasterCLI.fail("unknown workload '\(workload)': choose fill, rects, circles, gradient, blit, memset, memcpy, scene:NAME or all")
        }
        let bench = WorkloadBenchmark(width: w, height: h, threads: t)
        if !json { print(WorkloadTiming.kernelsLine) }
        for wl in list {
            print(bench.time(wl, frames: n, warmup: warm).line(isa: RasterISA.active, threads: t, json: json))
            _ = StandardStreams.flushStandardOutput()
        }
    }

    /// A `CADENCE_ISA` this process cannot honour (a path the CPU lacks, or an unknown name):
    /// `cadence bench` stops with one line and exit 2, since its figures would belong to
    /// another path; every other command prints one line and draws with the automatic
    /// choice (every path draws the same pixels). Returns the exit status to stop with, if any.
    static func checkKernelRequest(for command: ParsableCommand) -> Int32? {
        guard let problem = RasterISA.request.problem else { return nil }
        if command is BenchCommand {
            StandardStreams.errorLine("cadence: \(problem)")
            return 2
        }
        StandardStreams.errorLine("cadence: \(problem); drawing with \(RasterISA.active)")
        return nil
    }
}
