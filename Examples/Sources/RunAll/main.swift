// What `cadence run --backend fake-drm:two-crtc --connector all --frames 300 --inject-late 100:2
// --log run.jsonl --csv run.csv --quiet` does, through the session library: every output of a
// fake two-output card paced at once, each with its own log and CSV (run.DP-1.jsonl, …).
import CadenceCore
import CadenceSession

var files = SessionOutputs()
files.log = "run.jsonl"
files.csv = "run.csv"
files.quiet = true
var configuration = RunConfiguration()
configuration.frames = 300
configuration.injectLate = [100: 2]
let plan = OutputGroupPlan(
    backend: .fakeDRM(profiles: "two-crtc"), outputs: .several(connectors: ["all"], mode: nil, modes: [:]),
    configuration: configuration,
    sinks: { name in try SessionSinks(files: files.forOutput(named: name?.name ?? "run"), notice: { print($0) }) })
let group = try OutputGroupRun.open(plan, notice: { print("notice: \($0)") })
for result in try group.run() {
    let s = result.summary
    let name = result.name?.name ?? "run"
    print(
        "\(name): \(s.presented) of \(s.frames) frames at \(s.refreshHz.rounded()) Hz, "
            + "\(s.droppedRefreshes) dropped refreshes, \(s.dropEvents) drop events, log run.\(name).jsonl")
}
