import Raster
import Scenes

/// What `cadence bench` prints: which workloads a name means, and one line per workload timed.
extension WorkloadTiming {
    /// The workloads `name` means: `all` is the standard ones and every scene, else the one
    /// workload named (`fill`, `scene:bar`…); nil for an unknown name.
    public static func workloads(named name: String) -> [BenchWorkload]? {
        if name == "all" { return BenchWorkload.standard + SceneCatalog.names.map { .scene($0) } }
        return BenchWorkload(name).map { [$0] }
    }

    /// The line naming the kernel path in use and the ones this CPU has.
    public static var kernelsLine: String {
        "kernels: \(RasterISA.active) (available: \(RasterISA.available.map(\.description).joined(separator: ", ")))"
    }

    /// `v` with four decimals below 10, else two.
    public static func figure(_ v: Double) -> String {
        var line = TextLine()
        line.append(v, fractionDigits: v < 10 ? 4 : 2)
        return line.string
    }

    /// The workload's line, drawn with the kernel path `isa` on `threads` threads: a JSON
    /// object (`json`), else a text line (the workload padded to 16 columns, the size, the
    /// median and fastest ms per frame, Mpix/s).
    public func line(isa: RasterISA, threads: Int, json: Bool) -> String {
        let median = Self.figure(medianSeconds * 1e3), fastest = Self.figure(minSeconds * 1e3)
        let mpix = Self.figure(megapixelsPerSecond)
        if json {
            return
                "{\"workload\":\"\(workload)\",\"isa\":\"\(isa)\",\"size\":\"\(width)x\(height)\",\"threads\":\(threads),\"frames\":\(frames),\"msPerFrame\":{\"median\":\(median),\"min\":\(fastest)},\"mpixPerSec\":\(mpix)}"
        }
        let name = "\(workload)"
        let padded = name.count >= 16 ? name : name + String(repeating: " ", count: 16 - name.count)
        return "\(padded) \(width)x\(height) threads \(threads)  median \(median) ms  min \(fastest) ms  \(mpix) Mpix/s"
    }
}
