import Testing
@testable import Raster

#if canImport(Glibc)
import Glibc
#endif

/// When a copy uses streaming stores: decided once per operation in `copyStreams` from the
/// bytes it moves through the cache (a copy from a source read once counts source and
/// destination, twice the bytes written; a cache-resident source only the bytes written),
/// streaming from the threshold up.
@Suite struct StreamDecisionTests {
    static let mib = 1 << 20

    @Test func aCopyReadOnceCountsTwiceTheBytesWritten() {
        // Even threshold: 2 × written reaches it exactly at written = T / 2.
        let t = Int64(32 * Self.mib)
        #expect(copyStreams(bytes: 4096, rows: 4096, from: .readOnce, threshold: t))  // 16 MiB written, at T
        #expect(!copyStreams(bytes: 4096, rows: 4096, from: .readOnce, threshold: t + 1))
        #expect(!copyStreams(bytes: 16 * Self.mib - 1, rows: 1, from: .readOnce, threshold: t))  // T − 2 through the cache
        #expect(copyStreams(bytes: 16 * Self.mib, rows: 1, from: .readOnce, threshold: t))
        // Odd threshold: written K (2K < 2K + 1) stays cached, K + 1 streams.
        let k = 1_000_003
        #expect(!copyStreams(bytes: k, rows: 1, from: .readOnce, threshold: Int64(2 * k + 1)))
        #expect(copyStreams(bytes: k + 1, rows: 1, from: .readOnce, threshold: Int64(2 * k + 1)))
    }

    @Test func aCacheResidentSourceCountsTheBytesWrittenOnce() {
        let t = Int64(32 * Self.mib)
        #expect(copyStreams(bytes: 4096, rows: 8192, from: .cacheResident, threshold: t))  // 32 MiB, at T
        #expect(!copyStreams(bytes: 4096, rows: 8192, from: .cacheResident, threshold: t + 1))
        #expect(!copyStreams(bytes: 32 * Self.mib - 1, rows: 1, from: .cacheResident, threshold: t))
        // The same bytes from a source read once do stream.
        #expect(copyStreams(bytes: 32 * Self.mib - 1, rows: 1, from: .readOnce, threshold: t))
        #expect(!copyStreams(bytes: 16 * Self.mib, rows: 1, from: .cacheResident, threshold: t))
    }

    /// The figures dispatch.c and docs/raster-bench.md give for a 32 MiB last-level cache.
    @Test func a4KCopyStreamsAndA4KGradientOrFillDoesNot() {
        let t = Int64(32 * Self.mib)
        let row = 3840 * 4, rows = 2160  // 31.6 MiB
        #expect(copyStreams(bytes: row, rows: rows, from: .readOnce, threshold: t))
        #expect(!copyStreams(bytes: row, rows: rows, from: .cacheResident, threshold: t))
        #expect(!streamingPays(bytes: row * rows, threshold: t))
        // 8K: streams as a fill, as a gradient and as a copy.
        #expect(copyStreams(bytes: 7680 * 4, rows: 4320, from: .cacheResident, threshold: t))
        #expect(streamingPays(bytes: 7680 * 4 * 4320, threshold: t))
    }

    @Test func onlyTheProductOfRowsAndBytesCounts() {
        let t = Int64(6_000_000)
        for source in [CopySource.readOnce, .cacheResident] {
            for (bytes, rows) in [(1_500_000, 4), (6_000, 1_000), (4, 1_500_000), (6_000_000, 1)] {
                let factor = source == .readOnce ? 2 : 1
                let want = factor * bytes * rows >= t
                #expect(copyStreams(bytes: bytes, rows: rows, from: source, threshold: t) == want)
                #expect(copyStreams(bytes: rows, rows: bytes, from: source, threshold: t) == want)
            }
        }
        // Threshold 0 (CADENCE_STREAM_THRESHOLD=0): everything streams.
        #expect(copyStreams(bytes: 4, rows: 1, from: .cacheResident, threshold: 0))
        #expect(copyStreams(bytes: 4, rows: 1, from: .readOnce, threshold: 0))
    }

    /// `RowCopy` decides against the threshold the process chose at start-up (the last-level
    /// cache, or CADENCE_STREAM_THRESHOLD), the same on every path.
    @Test func rowCopyUsesTheActiveThreshold() throws {
        let active = try #require(KernelPath(RasterISA.active))
        let t = active.streamThreshold
        for isa in RasterISA.available {
            #expect(try #require(KernelPath(isa)).streamThreshold == t)
        }
        if let env = getenv("CADENCE_STREAM_THRESHOLD"), env.pointee != 0, let v = Int64(String(cString: env)), v >= 0 {
            #expect(t == v)
        } else {
            #expect(t > 0)
        }
        guard t > 0, t < Int64(Int.max / 4) else { return }
        let n = Int(t)
        #expect(RowCopy(bytes: n, rows: 1, from: .cacheResident).stream)
        #expect(!RowCopy(bytes: n - 1, rows: 1, from: .cacheResident).stream)
        let half = (n + 1) / 2  // the least written bytes whose double reaches t
        #expect(RowCopy(bytes: half, rows: 1, from: .readOnce).stream)
        #expect(!RowCopy(bytes: half - 1, rows: 1, from: .readOnce).stream)
    }
}
