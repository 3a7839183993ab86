import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Scenes
import Testing

/// ``OutputGroupRun``: one output and several run through the same plan, each output's frames
/// reaching its own sinks, and the refusals typed.
@Suite(.serialized) struct OutputGroupRunTests {
    /// A plan for `frames` frames whose sinks are counted in `made` (nil: the one output).
    func plan(
        _ backend: DisplayChoice.Backend, outputs: OutputGroupPlan.Outputs, frames: Int, made: NamesMade
    ) -> OutputGroupPlan {
        var config = RunConfiguration()
        config.frames = frames
        config.duration = nil
        return OutputGroupPlan(
            backend: backend, outputs: outputs, configuration: config,
            sinks: { name in
                made.names.append(name?.name ?? "(one)")
                return SessionSinks(notice: { _ in })
            })
    }

    @Test func oneOutputIsAGroupOfOne() throws {
        let made = NamesMade()
        var p = plan(.fake, outputs: .one(connector: nil, mode: nil), frames: 60, made: made)
        p.injectLate = try RunSpec.injectLate(["20:2"])
        let group = try OutputGroupRun.open(p, notice: { _ in })
        let tally = FrameTally(keepFrames: true)
        group.outputs[0].sinks.add(tally)
        let results = try group.run()
        #expect(made.names == ["(one)"])
        #expect(results.count == 1 && results[0].name == nil)
        let s = results[0].summary
        #expect(s.frames == 60 && s.presented == 60)
        // Frame 20 ends its rendering 1.5 refreshes late: shown late once, two refreshes dropped.
        #expect(s.late == 1 && s.droppedRefreshes == 2, "\(s)")
        #expect(tally.frames.count == 60)
    }

    @Test func severalOutputsEachGetTheirOwnSinksAndLateness() throws {
        let made = NamesMade()
        var p = plan(
            .fakeDRM(profiles: "two-crtc"), outputs: .several(connectors: ["all"], mode: nil, modes: [:]), frames: 90,
            made: made)
        p.injectLate = try RunSpec.injectLate(["DP-1=30:2"])
        p.hud = true
        p.scene = try #require(SceneCatalog.scene(named: "flash"))
        let group = try OutputGroupRun.open(p, notice: { _ in })
        let results = try group.run()
        #expect(made.names == ["eDP-1", "DP-1"])
        #expect(results.map { $0.name?.name } == ["eDP-1", "DP-1"])
        for r in results { #expect(r.summary.frames == 90 && r.summary.presented == 90, "\(r.summary)") }
        // Only DP-1's frame 30 is late; eDP-1 drops nothing.
        #expect(results[0].summary.droppedRefreshes == 0)
        #expect(results[1].summary.late == 1 && results[1].summary.droppedRefreshes == 2, "\(results[1].summary)")
        // Each output's HUD is fed by its own frames.
        for o in group.outputs {
            let hud = try #require(o.sinks.sinks.compactMap { $0 as? HUDSink }.first)
            #expect(hud.stats != nil)
        }
    }

    @Test func refusalsAreTyped() throws {
        let made = NamesMade()
        #expect {
            _ = try OutputGroupRun.open(
                plan(.fake, outputs: .several(connectors: ["all"], mode: nil, modes: [:]), frames: 10, made: made),
                notice: { _ in })
        } throws: { e in
            if case .severalOutputsNeedKMS = e as? OutputGroupRun.Refusal { return true }
            return false
        }
        var p = plan(.fake, outputs: .one(connector: nil, mode: nil), frames: 10, made: made)
        p.injectLate = try RunSpec.injectLate(["DP-1=5:1"])
        #expect {
            _ = try OutputGroupRun.open(p, notice: { _ in })
        } throws: { e in
            if case .injectLateTargetNotDriven(let target, let driven) = e as? OutputGroupRun.Refusal {
                return target == "DP-1" && driven == "fake"
            }
            return false
        }
        var q = plan(
            .fakeDRM(profiles: "two-crtc"), outputs: .several(connectors: ["all"], mode: nil, modes: [:]), frames: 10,
            made: made)
        q.injectLate = try RunSpec.injectLate(["HDMI-A-9=5:1"])
        #expect {
            _ = try OutputGroupRun.open(q, notice: { _ in })
        } throws: { e in
            if case .injectLateTargetNotRun(let target, let outputs) = e as? OutputGroupRun.Refusal {
                return target == "HDMI-A-9" && outputs == ["eDP-1", "DP-1"]
            }
            return false
        }
    }
}

/// The names the sinks factory was called with, in order.
final class NamesMade {
    var names: [String] = []
}
