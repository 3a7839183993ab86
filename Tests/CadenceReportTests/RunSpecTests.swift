import CadenceCore
import CadenceReport
import Testing

/// The command line's specs for scripted faults (`--inject-late`, `--render-cost`).
@Suite struct RunSpecTests {
    @Test func injectLateParses() throws {
        #expect(try RunSpec.injectLate("100:1,250:3") == [100: 1, 250: 3])
        #expect(try RunSpec.injectLate("7:1,7:4") == [7: 4])
        #expect(try RunSpec.injectLate("0:1") == [0: 1])
        #expect(throws: RunSpec.Invalid("--inject-late needs FRAME:K")) { try RunSpec.injectLate("") }
        #expect(throws: RunSpec.Invalid("--inject-late '100:0' must be FRAME:K with FRAME ≥ 0 and K 1 to 10000")) {
            try RunSpec.injectLate("100:0")
        }
        for bad in ["x", "-1:2", "1:2:3", "1", ":1", "1:"] {
            #expect(throws: RunSpec.Invalid.self, "\(bad)") { try RunSpec.injectLate(bad) }
        }
    }

    /// `--inject-late` repeated, or naming several outputs in one list (issue 21, finding 13):
    /// every entry lands on its output, none is dropped silently; a name applies to the entries
    /// after it; one output's frame given twice with different K is refused in one line.
    @Test func injectLateForSeveralOutputs() throws {
        let repeated = try RunSpec.injectLate(["DP-1=100:2", "eDP-1=50:1"])
        let list = try RunSpec.injectLate(["DP-1=100:2,eDP-1=50:1"])
        #expect(repeated == list)
        #expect(list.everyOutput.isEmpty && list.names == ["DP-1", "eDP-1"])
        #expect(list.outputs == ["DP-1": [100: 2], "eDP-1": [50: 1]])
        #expect(try list.frames(of: "DP-1") { $0 == "DP-1" } == [100: 2])
        #expect(try list.frames(of: "eDP-1") { $0 == "eDP-1" } == [50: 1])
        // A name applies to the entries after it; the plain entries before any name to every output.
        let mixed = try RunSpec.injectLate(["10:1,DP-1=100:2,250:3,eDP-1=50:1", "300:2"])
        #expect(mixed.everyOutput == [10: 1, 300: 2])
        #expect(try mixed.frames(of: "DP-1") { $0 == "DP-1" } == [10: 1, 100: 2, 250: 3, 300: 2])
        #expect(try mixed.frames(of: "eDP-1") { $0 == "eDP-1" } == [10: 1, 50: 1, 300: 2])
        // The plain form alone, as before; repeated plain lists add up.
        #expect(try RunSpec.injectLate(["100:1,250:3"]).everyOutput == [100: 1, 250: 3])
        #expect(try RunSpec.injectLate(["100:1", "250:3"]).everyOutput == [100: 1, 250: 3])
        #expect(try RunSpec.injectLate(["7:1,7:4"]).everyOutput == [7: 4], "one list: the last K, as before")
        // Twice for one output with different K: one line.
        #expect(throws: RunSpec.Invalid("--inject-late: DP-1=100 is given twice, with K 2 and 3")) {
            try RunSpec.injectLate(["DP-1=100:2", "DP-1=100:3"])
        }
        let both = try RunSpec.injectLate(["100:1", "DP-1=100:2"])
        #expect(throws: RunSpec.Invalid("--inject-late: frame 100 of DP-1 is given twice, as 100:1 and DP-1=100:2")) {
            try both.frames(of: "DP-1") { $0 == "DP-1" }
        }
        #expect(try both.frames(of: "eDP-1") { $0 == "eDP-1" } == [100: 1])
        #expect(throws: RunSpec.Invalid("--inject-late '=100:2': an empty output name before '='")) {
            try RunSpec.injectLate(["=100:2"])
        }
        #expect(throws: RunSpec.Invalid("--inject-late needs FRAME:K")) { try RunSpec.injectLate(["DP-1="]) }
        #expect(throws: RunSpec.Invalid("--inject-late needs FRAME:K")) { try RunSpec.injectLate([","]) }
        for bad in ["DP-1=x", "DP-1=100", "100:1,DP-1=5:0"] {
            #expect(throws: RunSpec.Invalid.self, "\(bad)") { try RunSpec.injectLate([bad]) }
        }
    }

    /// Found fuzzing: `1:9223372036854775807` trapped (the overrun in ns overflowed) and
    /// `1:100000000000` spun for hours of virtual time. K is 1…10,000.
    @Test func injectedLatenessIsBounded() throws {
        #expect(throws: RunSpec.Invalid.self) { try RunSpec.injectLate("1:9223372036854775807") }
        #expect(throws: RunSpec.Invalid.self) { try RunSpec.injectLate("1:10001") }
        #expect(try RunSpec.injectLate("1:10000") == [1: 10_000])
    }

    @Test func renderCostParses() throws {
        #expect(try RunSpec.renderCost("100-199:20,5:1.5,300-:4") == [
            RenderCost(first: 100, last: 199, costNs: 20_000_000), RenderCost(first: 5, last: 5, costNs: 1_500_000),
            RenderCost(first: 300, last: nil, costNs: 4_000_000),
        ])
        #expect(try RunSpec.renderCost("0:60000") == [RenderCost(first: 0, last: 0, costNs: 60_000_000_000)])
        for bad in ["x", "5-3:1", "1:-1", "1:2:3", "-1:4", "1-2-3:4", "1:nan", "1:60001", "1:inf"] {
            #expect(throws: RunSpec.Invalid("--render-cost '\(bad)' must be FROM-TO:MS, FROM-:MS or FRAME:MS (frames ≥ 0, MS ≥ 0)"), "\(bad)") {
                try RunSpec.renderCost(bad)
            }
        }
        #expect(throws: RunSpec.Invalid("--render-cost needs FROM-TO:MS")) { try RunSpec.renderCost("") }
    }

    /// What parses also validates: the spec bounds are inside the configuration's.
    @Test func parsedSpecsValidate() throws {
        var c = RunConfiguration()
        c.injectLate = try RunSpec.injectLate("0:10000,5:1")
        c.renderCost = try RunSpec.renderCost("0-:60000")
        try c.validate()
    }
}
