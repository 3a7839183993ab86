// swift-tools-version: 6.1
import PackageDescription

/// Cadence: drive a Linux DRM/KMS display, pace frames against the real vblank,
/// and report exactly which frames reached the panel.
///
/// Layers (each target imports only the ones above it):
///   CDRM, CGBM, CCadenceShim   C interop (libdrm, libgbm, fourcc + dumb-buffer ioctls)
///   CSeat                       C interop (libseat: seat sessions through seatd or logind)
///   CUdev                       C interop (libudev: the kernel's uevents, for hotplug)
///   CZstd                       C interop (libzstd: compressed run logs; CadenceReport only)
///   DRM                         Swift wrapper over the kernel API, with a fake device seam
///   CadenceCore                 pacing core, statistics, fake display (imports no libdrm)
///   KMSDisplay                  the KMS implementation of CadenceCore's DisplayBackend
///   CRasterSIMD                 ISA-specific span loops (AVX2), picked at start-up
///   Raster, Scenes              CPU rasterizer and the test scenes (shaders-cpu/)
///   EDID                        EDID / CTA-861 / DisplayID decoder (pure Swift, no libdrm)
///   DRMTrace                    the kernel's DRM trace events (tracefs) as flips per client
///   CadenceMetrics              Prometheus exposition (swift-prometheus), textfile and /metrics
///                               (hummingbird, only with the MetricsHTTP trait)
///   CadenceSession              a run with its outputs: frame sinks (log, CSV, metrics, HUD,
///                               status line) in order, typed results; observing another program's
///                               flips (DRMTrace), measuring flips, device profiles, seat sessions
///
/// Trait MetricsHTTP (on by default): `--metrics-port` serves /metrics with hummingbird. Builds
/// that do not need it (`--disable-default-traits`: the sanitizer and fuzz builds in
/// tools/test.sh) skip hummingbird and swift-nio, minutes of every CI build; `--metrics-textfile`
/// works either way.
///   cadence                     the command-line tool
let package = Package(
    name: "Cadence",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "cadence", targets: ["cadence"]),
        .library(name: "CadenceCore", targets: ["CadenceCore"]),
        .library(name: "DRM", targets: ["DRM"]),
        .library(name: "KMSDisplay", targets: ["KMSDisplay"]),
        .library(name: "Raster", targets: ["Raster"]),
        .library(name: "Scenes", targets: ["Scenes"]),
        .library(name: "EDID", targets: ["EDID"]),
        .library(name: "CadenceReport", targets: ["CadenceReport"]),
        .library(name: "DRMTrace", targets: ["DRMTrace"]),
        .library(name: "CadenceMetrics", targets: ["CadenceMetrics"]),
        .library(name: "CadenceSession", targets: ["CadenceSession"]),
    ],
    traits: [
        .trait(name: "MetricsHTTP", description: "Serve Prometheus metrics over HTTP (--metrics-port) with hummingbird."),
        .default(enabledTraits: ["MetricsHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Only with the MetricsHTTP trait (hummingbird's own default traits are not needed).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Tests only: property-based tests of the pacing contracts against a reference model.
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CGBM", pkgConfig: "gbm", providers: [.apt(["libgbm-dev"])]),
        .systemLibrary(name: "CSeat", pkgConfig: "libseat", providers: [.apt(["libseat-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .target(name: "CCadenceShim", dependencies: ["CDRM"]),
        .target(
            name: "DRM",
            dependencies: [
                "CDRM", "CGBM", "CSeat", "CUdev", "CCadenceShim",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "CadenceCore",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")]
        ),
        .target(name: "KMSDisplay", dependencies: ["DRM", "CadenceCore", "CCadenceShim", "EDID"]),
        .target(name: "CRasterSIMD"),
        .target(name: "Raster", dependencies: ["CRasterSIMD"]),
        .target(name: "EDID"),
        .target(name: "Scenes", dependencies: ["Raster"], path: "shaders-cpu"),
        .target(name: "CadenceReport", dependencies: ["CadenceCore", "Raster", "CZstd"]),
        .target(name: "DRMTrace"),
        .target(
            name: "CadenceMetrics",
            dependencies: [
                "CadenceCore", .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["MetricsHTTP"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["MetricsHTTP"])),
            ]
        ),
        .target(
            name: "CadenceSession",
            dependencies: [
                "DRM", "CadenceCore", "KMSDisplay", "CadenceReport", "CadenceMetrics", "Raster", "Scenes", "EDID",
                "DRMTrace",
            ]
        ),
        .executableTarget(
            name: "cadence",
            dependencies: [
                "DRM", "CadenceCore", "KMSDisplay", "Raster", "Scenes", "CadenceReport", "EDID",
                "DRMTrace", "CadenceMetrics", "CadenceSession",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "DRMTests", dependencies: ["DRM"]),
        .testTarget(name: "CadenceCoreTests", dependencies: ["CadenceCore", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(
            name: "KMSDisplayTests",
            dependencies: ["KMSDisplay", "DRM", "CadenceCore", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "RasterTests", dependencies: ["Raster", "CadenceCore"]),
        .testTarget(name: "EDIDTests", dependencies: ["EDID"]),
        .testTarget(name: "ScenesTests", dependencies: ["Scenes", "Raster"]),
        .testTarget(name: "CLITests", dependencies: ["cadence", "CadenceReport", "CadenceCore", "DRM", "KMSDisplay", "CadenceSession"]),
        .testTarget(
            name: "CadenceSessionTests",
            dependencies: ["CadenceSession", "CadenceCore", "CadenceReport", "DRM", "KMSDisplay", "Raster", "Scenes"]),
        .testTarget(
            name: "CadenceReportTests",
            dependencies: ["CadenceReport", "CadenceCore", "Raster", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "CadenceMetricsTests", dependencies: ["CadenceMetrics", "CadenceCore"]),
        .testTarget(name: "DRMTraceTests", dependencies: ["DRMTrace", "CadenceCore", "CadenceMetrics"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
