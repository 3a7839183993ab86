import CadenceReport
import CadenceSession
import Testing

/// The options of `run` and `validate` that `RunPlanning` checks: `--verify`, `--capture`,
/// `--fault`, `--mode`, and what several outputs refuse.
@Suite struct RunOptionChecksTests {
    @Test func theScanoutChecksAndTheirRefusals() throws {
        let none = try RunPlanning.scanoutChecks(verify: nil, capture: nil, fault: nil)
        #expect(!none.crc && none.writeback == nil)
        let crc = try RunPlanning.scanoutChecks(verify: "crc", capture: nil, fault: "stale-buffer:3")
        #expect(crc.crc && crc.writeback == nil)
        let both = try RunPlanning.scanoutChecks(verify: "crc,writeback", capture: "every:10", fault: nil)
        let every10 = try CaptureSchedule(parsing: "every:10")
        #expect(both.crc && both.writeback == every10)
        func refusal(_ v: String?, _ c: String?, _ f: String?) -> String? {
            do {
                _ = try RunPlanning.scanoutChecks(verify: v, capture: c, fault: f)
                return nil
            } catch { return "\(error)" }
        }
        #expect(
            refusal(nil, nil, "stale-buffer:1") == "--fault needs --verify crc (without it nothing can see the fault)")
        #expect(refusal(nil, "every:2", nil) == "--capture needs --verify writeback")
        #expect(refusal("crc,crc", nil, nil) == "--verify 'crc,crc': the checks are crc, writeback, or crc,writeback")
        #expect(refusal("writeback", nil, nil) == "--verify writeback needs --capture every:N or frames:LIST")
        #expect(
            refusal("writeback", "on-mismatch", nil)
                == "--capture on-mismatch needs --verify crc,writeback (the CRC flags the frames whose capture is read)"
        )
        #expect(try RunPlanning.staleBufferFault(nil) == nil)
        #expect(try RunPlanning.staleBufferFault("stale-buffer:7") == 7)
        #expect(throws: RunSpec.Invalid("--fault 'stale-buffer:0' must be stale-buffer:FRAME with FRAME ≥ 1")) {
            try RunPlanning.staleBufferFault("stale-buffer:0")
        }
    }

    @Test func theModesOfOneOutputOrSeveral() throws {
        let modes = try RunPlanning.modeChoice(["1920x1080", "DP-1=2560x1440@144"])
        #expect(modes.all == "1920x1080")
        #expect(modes.perOutput == ["DP-1": "2560x1440@144"])
        #expect(throws: RunSpec.Invalid("--mode DP-1=…: given twice")) {
            try RunPlanning.modeChoice(["DP-1=640x480", "DP-1=800x600"])
        }
        #expect(try RunPlanning.singleOutputMode(["DP-1=640x480"], connector: "DP-1") == "640x480")
        #expect(try RunPlanning.singleOutputMode(["640x480"], connector: nil) == "640x480")
        #expect(
            throws: RunSpec.Invalid(
                "--mode DP-1=…: this run drives the first connected connector, not several outputs; give --mode WxH[@HZ], or --connector once per output"
            )
        ) { try RunPlanning.singleOutputMode(["DP-1=640x480"], connector: nil) }
    }

    @Test func whatSeveralOutputsRefuse() {
        #expect(RunPlanning.severalOutputsRefusal(metrics: false, verify: false, fault: false, backend: "kms") == nil)
        #expect(
            RunPlanning.severalOutputsRefusal(metrics: true, verify: false, fault: true, backend: "fake")
                == "--metrics-port/--metrics-textfile, --fault are not supported with several outputs yet: run one --connector at a time"
        )
        #expect(
            RunPlanning.severalOutputsRefusal(metrics: false, verify: false, fault: false, backend: "fake")
                == RunPlanning.refusalLine(.severalOutputsNeedKMS))
    }
}
