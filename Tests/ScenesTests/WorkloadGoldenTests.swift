import Testing
import Raster
@testable import Scenes

/// The `cadence bench` workloads' pixels, pinned: every kernel path must draw them exactly
/// (tools/test.sh runs this once per path through CADENCE_ISA). Recorded on the baseline
/// path; the same values come out of the Swift-only kernels of the commit before run-time
/// dispatch.
@Suite struct WorkloadGoldenTests {
    static let golden: [String: UInt64] = [
        "fill": 0xCE9E82458E41BB6C,
        "rects": 0x62658C248904CE77,
        "circles": 0x1E03BB794E308DC7,
        "gradient": 0x56E32DF73C647FF7,
        "blit": 0x361212D290397C6F,
    ]

    /// Frame 3 of `workload` at 641×359 (odd sizes: no row is a whole number of vectors),
    /// one thread and, to check banding, three threads.
    @Test(arguments: ["fill", "rects", "circles", "gradient", "blit"])
    func workloadMatchesGoldenChecksum(name: String) throws {
        let wl = try #require(BenchWorkload(name))
        var sums: [UInt64] = []
        for threads in [1, 3] {
            let bmp = Bitmap(width: 641, height: 359)
            bmp.canvas.clear(Color(rgb: 0x102030))
            PreparedWorkload(wl, width: 641, height: 359).run(frame: 3, into: bmp.canvas, renderer: BandedRenderer(threads: threads))
            sums.append(checksum(bmp))
        }
        #expect(sums[0] == sums[1], "\(name): banded frame differs")
        #expect(Self.golden[name] == sums[0], "\(name) (\(RasterISA.active)): 0x\(String(sums[0], radix: 16, uppercase: true))")
    }
}
