// swift-tools-version: 6.1
import PackageDescription

/// A package that uses Cadence the way any other package would: by path (or URL), public API
/// only. `swift run moving-bar` paces a moving bar; `swift test` checks the pacing on virtual time.
let package = Package(
    name: "CadenceExamples",
    // No traits: the examples need no HTTP server (MetricsHTTP would build hummingbird).
    dependencies: [.package(name: "Cadence", path: "..", traits: [])],
    targets: [
        .executableTarget(
            name: "moving-bar",
            dependencies: [
                .product(name: "CadenceCore", package: "Cadence"),
                .product(name: "KMSDisplay", package: "Cadence"),
            ],
            path: "Sources/MovingBar"),
        // `cadence run --connector all --log --csv` in under 40 lines (issue 22).
        .executableTarget(
            name: "run-all",
            dependencies: [
                .product(name: "CadenceCore", package: "Cadence"),
                .product(name: "CadenceSession", package: "Cadence")
            ],
            path: "Sources/RunAll"),
        .testTarget(
            name: "MovingBarTests",
            dependencies: [.product(name: "CadenceCore", package: "Cadence")]),
    ],
    swiftLanguageModes: [.v6]
)
