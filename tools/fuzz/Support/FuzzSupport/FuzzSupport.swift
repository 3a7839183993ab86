import CFuzzer

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's per-input callback: the input's bytes; return 0 (other values are reserved).
public typealias FuzzTestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands the process to libFuzzer (`LLVMFuzzerRunDriver`), which calls `testOneInput` on every
/// input and exits. A fuzz target's `main.swift` is one call:
///
///     runFuzzer { data, size in
///         let text = fuzzText(data, size)
///         _ = try? FrameRateRange(parsing: text)
///         return 0
///     }
///
/// (SwiftPM gives every executable its own `main`, so libFuzzer's `main` cannot be used.)
public func runFuzzer(_ testOneInput: FuzzTestOneInput) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// The input as bytes.
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
}

/// The input as text, as the CLI would see an argument (invalid UTF-8 repaired).
public func fuzzText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
    String(decoding: fuzzBytes(data, size), as: UTF8.self)
}
