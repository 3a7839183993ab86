// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// libFuzzer targets for every parser of outside input (issue 10). Each directory under
/// `Targets/` is one target: a single `main.swift` that calls `runFuzzer { data, size in … }`
/// (FuzzSupport), built as the executable `fuzz-NAME` against Cadence's library products; its
/// seed corpus is `corpus/NAME/` (and `dict/NAME.dict`, optional). Adding a target is adding
/// that one file and a few seeds: this manifest finds it. Build and run with
/// `tools/fuzz/run.sh NAME SECONDS`.
let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
let names = ((try? FileManager.default.contentsOfDirectory(atPath: here.appendingPathComponent("Targets").path)) ?? [])
    .filter { !$0.hasPrefix(".") }
    .sorted()
// A path dependency's identity is its directory's name (the checkout's, not "Cadence").
let cadence = here.deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

// The library products a target links: the parsers' own, and the session library for `profile`
// (which reads JSON as the CLI does, through FakeDRMProfileFile).
func products(_ name: String) -> [String] {
    ["CadenceCore", "CadenceReport", "DRM", "EDID", "KMSDisplay"] + (name == "profile" ? ["CadenceSession"] : [])
}

let package = Package(
    name: "CadenceFuzz",
    // No traits: nothing here serves HTTP (MetricsHTTP would build hummingbird).
    dependencies: [.package(path: "../..", traits: [])],
    targets: [
        .target(name: "CFuzzer", path: "Support/CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"], path: "Support/FuzzSupport"),
    ] + names.map { name in
        .executableTarget(
            name: "fuzz-\(name)",
            dependencies: ["FuzzSupport"] + products(name).map { .product(name: $0, package: cadence) },
            path: "Targets/\(name)"
        )
    }
)
