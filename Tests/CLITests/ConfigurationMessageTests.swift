import Foundation
import Testing

/// The library describes a bad run setting in words ("latency must be 1, 2 or 3"); the CLI
/// names the option instead. These are the exact lines (and exit status 2) for every setting
/// the pacing core checks.
@Suite struct ConfigurationMessageTests {
    @Test(arguments: [
        (["--latency", "4"], "--latency must be 1, 2 or 3"),
        (["--frames", "0"], "--frames must be positive"),
        (["--min-duration", "5", "--content-rate", "24"], "--min-duration and --content-rate cannot be combined"),
        (["--content-rate", "0.01"], "--content-rate must be a rate from 0.1 to 10000 Hz"),
        (["--rate", "60:30:0"], "rate range 60.0:30.0:0.0: minimum is above maximum"),
        (["--inject-late", "3:0"], "--inject-late '3:0' must be FRAME:K with FRAME ≥ 0 and K 1 to 10000"),
        (["--inject-late", ","], "--inject-late needs FRAME:K"),
        (["--render-cost", "5-3:1"], "--render-cost '5-3:1' must be FROM-TO:MS, FROM-:MS or FRAME:MS (frames ≥ 0, MS ≥ 0)"),
        (["--render-cost", ","], "--render-cost needs FROM-TO:MS"),
    ])
    func badSettingIsOneLineNamingTheOption(args: [String], message: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--quiet"] + args, in: dir)
        #expect(r.status == 2)
        #expect(r.err == "cadence run: \(message)\n")
        #expect(r.out.isEmpty)
    }
}
