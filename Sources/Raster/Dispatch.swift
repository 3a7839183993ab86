import CRasterSIMD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The span-kernel path the rasterizer runs, chosen once when the process starts.
///
/// The package is built for baseline x86-64 (or aarch64). Before `main`, the `CRasterSIMD`
/// target reads CPUID/XGETBV and picks the best path the CPU has; the environment variable
/// `CADENCE_ISA=baseline|avx2|avx512` asks for another. Every path draws exactly the same
/// pixels: the Swift kernels (`Kernels.swift`) define the arithmetic, and the C loops of the
/// wider paths are tested against them. Drawing code fetches the chosen table with one load
/// per span or per rectangle (never per pixel, never CPUID again).
public enum RasterISA: Int32, CaseIterable, Sendable, CustomStringConvertible {
    /// Portable Swift SIMD kernels (SSE2 on x86-64, NEON on aarch64), plus SSE2 streaming
    /// stores for large fills and copies on x86-64.
    case baseline = 0
    /// 256-bit AVX2 span loops (x86-64 CPUs reporting AVX2 with OS support for YMM state).
    case avx2 = 1
    /// AVX-512BW/VL. No kernels are built for it (there was no AVX-512 CPU to measure a win
    /// on), so it is never available and an AVX-512 CPU runs ``avx2``.
    case avx512 = 2

    /// The name `CADENCE_ISA` uses.
    public var description: String {
        switch self {
        case .baseline: return "baseline"
        case .avx2: return "avx2"
        case .avx512: return "avx512"
        }
    }

    /// The path from its `CADENCE_ISA` name.
    public init?(name: String) {
        guard let isa = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = isa
    }

    /// The path every drawing call in this process uses.
    public static var active: RasterISA { RasterISA(rawValue: cadence_raster_active().pointee.isa) ?? .baseline }

    /// The paths this CPU and build can run, baseline first.
    public static var available: [RasterISA] { allCases.filter(\.isAvailable) }

    /// True when this CPU and build can run the path.
    public var isAvailable: Bool { cadence_raster_table(rawValue) != nil }

    /// What became of `CADENCE_ISA` at start-up.
    public static var request: Request {
        let value = getenv("CADENCE_ISA").map { String(cString: $0) } ?? ""
        switch cadence_raster_request_status() {
        case Int32(CADENCE_ISA_REQUEST_HONOURED):
            return .honoured(RasterISA(rawValue: cadence_raster_requested_isa()) ?? .baseline)
        case Int32(CADENCE_ISA_REQUEST_UNSUPPORTED):
            return .unsupported(RasterISA(rawValue: cadence_raster_requested_isa()) ?? .baseline)
        case Int32(CADENCE_ISA_REQUEST_UNKNOWN):
            return .unknown(value)
        default:
            return .none
        }
    }

    /// The outcome of a `CADENCE_ISA` request.
    public enum Request: Equatable, Sendable {
        /// Not set (or empty): the best available path runs.
        case none
        /// The requested path runs.
        case honoured(RasterISA)
        /// A known path this CPU or build cannot run; the best available path runs instead.
        case unsupported(RasterISA)
        /// A value that names no path; the best available path runs instead.
        case unknown(String)

        /// One line explaining a request that was not honoured (nil when there is nothing to say).
        public var problem: String? {
            switch self {
            case .none, .honoured:
                return nil
            case .unsupported(let isa):
                return "CADENCE_ISA=\(isa): this CPU or build has no \(isa) path (available: \(RasterISA.available.map(\.description).joined(separator: ", ")))"
            case .unknown(let value):
                return "CADENCE_ISA=\(value) is not a kernel path: use baseline, avx2 or avx512"
            }
        }
    }
}
