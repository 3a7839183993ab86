// swift-tools-version: 6.1
import PackageDescription

/// The root package is a path dependency, so its identity is its directory's name (the
/// clone's name varies: main, a worktree, CI's checkout).
let root = Context.packageDirectory.split(separator: "/").dropLast(3).last.map(String.init) ?? "Cadence"

/// Checks that the HUD overlay allocates nothing per frame and what it costs at 1080p.
/// Run from this directory: `swift package --disable-sandbox benchmark`.
let package = Package(
    name: "HUDBenchmark",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../../.."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HUDBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Raster", package: root),
                .product(name: "Scenes", package: root),
            ],
            path: "Benchmarks/HUDBenchmark",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v5]
)
