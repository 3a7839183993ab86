import Testing
@testable import EDID

/// A seeded SplitMix64: the same 10 000 cases on every run.
struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct FuzzTests {
    /// Realistic seeds: the builders' monitor, TV, tiled and DisplayID 2.0 EDIDs.
    static let seeds: [[UInt8]] = [EDIDBuilder.monitor().bytes(), CTATests.tv(), DisplayIDTests.tile(), DisplayIDTests.v2()]

    enum Kind: CaseIterable { case random, randomWithHeader, truncated, bitFlips, badChecksum, garbageBlocks }

    /// One generated case: what it is and its bytes.
    static func make(_ kind: Kind, _ g: inout Seeded) -> [UInt8] {
        let seed = seeds[Int.random(in: 0..<seeds.count, using: &g)]
        switch kind {
        case .random:
            return (0..<Int.random(in: 0...600, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
        case .randomWithHeader:
            var b = (0..<Int.random(in: 128...1024, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            b[0..<8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
            if Bool.random(using: &g) { b[128] = [0x02, 0x70, 0xF0][Int.random(in: 0..<3, using: &g)] }
            return b
        case .truncated:
            return Array(seed.prefix(Int.random(in: 0...seed.count, using: &g)))
        case .bitFlips:
            var b = seed
            for _ in 0..<Int.random(in: 1...24, using: &g) {
                let i = Int.random(in: 8..<b.count, using: &g)  // keep the header: decode must go deep
                b[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &g)
            }
            return b
        case .badChecksum:
            var b = seed
            let block = Int.random(in: 0..<(b.count / 128), using: &g)
            b[block * 128 + 127] &+= UInt8.random(in: 1...255, using: &g)
            return b
        case .garbageBlocks:
            // A valid base block followed by extension blocks with a known tag and random bodies.
            var b = Array(seed.prefix(128))
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                var ext = (0..<128).map { _ in UInt8.random(in: 0...255, using: &g) }
                ext[0] = [0x02, 0x70][Int.random(in: 0..<2, using: &g)]
                if ext[0] == 0x02 { ext[1] = 3 }
                b += ext
            }
            return b
        }
    }

    @Test func tenThousandDamagedInputsNeverTrap() throws {
        var g = Seeded(state: 0xCADE_0CE)
        var decoded = 0, rejected = 0, warned = 0
        var perKind: [String: Int] = [:]
        for n in 0..<10_000 {
            let kind = Kind.allCases[n % Kind.allCases.count]
            let bytes = Self.make(kind, &g)
            perKind["\(kind)", default: 0] += 1
            let hasHeader = bytes.count >= 128 && bytes[0..<8].elementsEqual([0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00])
            do {
                let e = try EDID(bytes)
                decoded += 1
                #expect(hasHeader, "decoded input without a header")
                if !e.warnings.isEmpty { warned += 1 }
                for t in e.timings {
                    #expect(t.refreshHz.isFinite && t.refreshHz >= 0)
                }
                _ = (e.vrrRanges, e.adaptiveSyncRange, e.preferredTiming, e.nativeResolution, e.diagonalInches)
                if kind == .badChecksum { #expect(e.warnings.contains { $0.contains("checksum") }) }
            } catch let error as EDIDError {
                rejected += 1
                #expect(!hasHeader, "rejected an input with a header: \(error)")
            }
        }
        #expect(decoded + rejected == 10_000)
        #expect(perKind.values.allSatisfy { $0 >= 1666 })
        // Every header-carrying case decodes; random bytes almost never carry one.
        #expect(decoded > 6_000 && rejected > 1_500)
        #expect(warned > 4_000)
    }
}
