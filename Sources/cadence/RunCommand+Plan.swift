import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import KMSDisplay
import Scenes

/// `cadence run`'s options as CadenceSession's `OutputGroupPlan`, for one output or several:
/// the library opens, runs and completes the outputs; this turns its typed refusals and notices
/// into the CLI's lines.
extension RunCommand {
    /// The run the options ask for. `source` is where DRM devices come from (tests pass a fake;
    /// nil: `--session`'s).
    func makePlan(source given: DeviceSource?, purpose: BackendChoice.Purpose) throws -> OutputGroupPlan {
        let several = severalOutputs
        let config = try makeConfiguration()
        let source = try given ?? sessionOptions.source(command: purpose == .validate ? "validate" : "run")
        let scene: (any Scene)?
        do {
            scene = try RunPlanning.scene(named: self.scene, hud: hud)
        } catch let e as RunSpec.Invalid {
            throw CLIFailure(e.description)
        }
        let checks = try RunPlanning.scanoutChecks(verify: verify, capture: capture, fault: fault)
        let staleFrame = try RunPlanning.staleBufferFault(fault)
        let fake = try fakeOptions.configuration(backend: backend, surface: scene != nil)
        let selection: OutputGroupPlan.Outputs
        if several {
            let modes = try RunPlanning.modeChoice(modeSpecs)
            selection = .several(connectors: connectors, mode: modes.all, modes: modes.perOutput)
        } else {
            let mode = try RunPlanning.singleOutputMode(modeSpecs, connector: connector)
            selection = .one(connector: connector, mode: mode)
        }
        let policy = try BackendChoice.vrrPolicy(vrr)
        guard let backend = DisplayChoice.Backend(self.backend) else {
            throw CLIFailure(
                several
                    ? "--backend must be auto, kms, fake or fake-drm[:PROFILE[,PROFILE…]]"
                    : "--backend must be auto, kms, fake or fake-drm[:PROFILE]")
        }
        let files = try outputs.files(log: log)
        var plan = OutputGroupPlan(
            backend: backend, device: device, source: source, outputs: selection, fake: fake,
            vrr: vrr == nil ? nil : policy, purpose: purpose, configuration: config, scene: scene,
            sinks: { [self] output in
                guard let output else { return try self.outputs.sinks(files) }
                return try self.outputs.sinks(files.forOutput(named: output.name))
            })
        plan.injectLate = try timing.injectLatePlan()
        plan.hud = hud
        plan.crc = checks.crc
        plan.writeback = checks.writeback
        plan.capturePNGBase = WritebackCaptures.pngBase(log: log)
        plan.staleFrame = staleFrame
        return plan
    }

    /// Opens the outputs the options name (one, or several at once, refusing first what several
    /// cannot do), runs them until the end
    /// (or SIGINT/SIGTERM/SIGHUP) and returns each one's result; every output is complete and
    /// every display closed (CRTC restored) when it returns. `onOutput` sees each output's run
    /// and sinks before the runs start.
    func paceOutputs(
        source: DeviceSource?, purpose: BackendChoice.Purpose,
        onOutput: (OutputGroupRun.Output) -> Void
    ) throws -> [OutputGroupRun.Result] {
        if severalOutputs { try refuseForSeveral() }
        let plan = try makePlan(source: source, purpose: purpose)
        let command = purpose == .validate ? "validate" : "run"
        let group = try Self.refusingInOneLine {
            try OutputGroupRun.open(plan) { StandardStreams.errorLine(RunPlanning.noticeLine($0, command: command)) }
        }
        for o in group.outputs { onOutput(o) }
        return try group.runUntilSignalled()
    }

    /// Runs `body`, turning the run's and the display's refusals into one line naming the
    /// options (exit 2).
    static func refusingInOneLine<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let refusal as OutputGroupRun.Refusal {
            throw CLIFailure(RunPlanning.refusalLine(refusal))
        } catch let refusal as DisplayChoice.Refusal {
            throw BackendChoice.failure(refusal)
        } catch let e as OutputSelectionError {
            throw CLIFailure(e.description)
        }
    }
}
