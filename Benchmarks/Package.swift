// swift-tools-version: 6.1
import PackageDescription

/// The root package is a path dependency, so its identity is its directory's name (the clone's
/// name varies: main, a worktree, CI's checkout).
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "Cadence"

/// Benchmarks for the pacing core and the rasterizer, kept out of the main package so that its
/// build stays light. Run from this directory: `swift package benchmark` (wall/CPU time and
/// malloc counts per frame).
let package = Package(
    name: "CadenceBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "PacingBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CadenceCore", package: root),
            ],
            path: "Benchmarks/PacingBenchmark",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RasterBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Raster", package: root),
                .product(name: "Scenes", package: root),
            ],
            path: "Benchmarks/RasterBenchmark",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
