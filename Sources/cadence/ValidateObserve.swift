import ArgumentParser
import CadenceCore
import CadenceReport
import CadenceSession
import DRM
import Foundation

/// `cadence validate --observe`: validate's criteria applied to another program's flips, as
/// `cadence observe` accounts them (a kiosk gated on what its own app shows).
extension ValidateCommand {
    /// The options given that only make sense when Cadence draws (or judge a panel identity
    /// read by driving it); `--observe` refuses them.
    func drawingOptionsGiven() -> [String] {
        let o = options
        var used: [String] = []
        if o.backend != "auto" { used.append("--backend") }
        if !o.modeSpecs.isEmpty { used.append("--mode") }
        used += o.fakeOptions.timingOptionsGiven
        if o.fakeClock != "virtual" { used.append("--fake-clock") }
        if o.rate != nil { used.append("--rate") }
        if o.minDuration != nil { used.append("--min-duration") }
        if o.contentRate != nil { used.append("--content-rate") }
        if o.latency != 1 { used.append("--latency") }
        if o.frames != nil { used.append("--frames") }
        if o.seed != 0 { used.append("--seed") }
        if !o.injectLate.isEmpty { used.append("--inject-late") }
        if o.renderCost != nil { used.append("--render-cost") }
        if o.adapt { used.append("--adapt") }
        if o.scene != "bar" { used.append("--scene") }
        if o.hud { used.append("--hud") }
        if o.outputs.summary != nil { used.append("--summary") }
        if expect.monitor != nil { used.append("--expect-monitor") }
        if expect.serial != nil { used.append("--expect-serial") }
        if expect.mode != nil { used.append("--expect-mode") }
        return used
    }

    /// Observes for --duration, picks the client, judges it; exit 0 pass, 1 fail (no flips
    /// included), 2 usage or tracefs/permission error (one line).
    func executeObserved() throws {
        let started = Date()
        let criteria: ValidationCriteria
        var settings = Observation.onStandardError()
        do {
            guard observe else {
                throw CLIFailure("\(client != nil ? "--client" : expectRate != nil ? "--expect-rate" : "--from-trace") needs --observe")
            }
            let refused = drawingOptionsGiven()
            if !refused.isEmpty {
                throw CLIFailure("\(refused.joined(separator: ", ")) cannot be used with --observe (it judges another program's flips; Cadence draws nothing)")
            }
            guard let d = options.duration else { throw CLIFailure("--observe needs --duration S (seconds > 0)") }
            guard d.isFinite, d > 0, d <= 86_400 else { throw CLIFailure("--duration must be seconds > 0") }
            if let r = expectRate, !(r.isFinite && r > 0 && r <= 1000) { throw CLIFailure("--expect-rate must be a rate in Hz > 0") }
            if let c = client, c.isEmpty { throw CLIFailure("--client must name a process") }
            if let v = options.verify, v != "crc" {
                throw CLIFailure(
                    "--verify '\(v)' with --observe: only crc (writeback would take over the other program's CRTC)")
            }
            if options.capture != nil || options.fault != nil {
                let flag = options.capture != nil ? "--capture" : "--fault"
                throw CLIFailure("\(flag) cannot be used with --observe (Cadence draws nothing)")
            }
            criteria = try self.criteria()
            if criteria.isEmpty && maxFrozen == nil {
                throw ValidationCriteria.Invalid(
                    "give at least one threshold (--max-dropped, --max-drop-events, --max-drop-event, --refresh-tolerance, "
                        + "--max-jitter, --min-rate, --max-frozen)")
            }
            settings.duration = d
            settings.logRotation = try RunPlanning.logRotation(log: options.log, maxSize: options.outputs.logMaxSize, keep: options.outputs.logKeep)
        } catch {
            StandardStreams.errorLine("cadence validate: \(String(describing: error))")
            throw ExitCode(2)
        }
        settings.device = options.device ?? settings.device
        settings.connector = options.connector
        settings.expectRate = expectRate
        settings.log = options.log
        settings.csv = options.outputs.csv
        settings.metrics = options.outputs.metrics
        settings.statusLine = !options.outputs.quiet
        settings.statusClient = client
        settings.fromTrace = fromTrace
        settings.keepFrames = warmup != nil || window != nil
        settings.verifyCRC = options.verify == "crc"
        var junitFile: LineFile?
        let outcome: (result: ObserveResult, source: String, frames: [String: [FrameReport]])
        do {
            junitFile = try junit.map { try LineFile(path: $0) }
            do {
                outcome = try settings.run()
            } catch let e as CRCError {
                throw CLIFailure(RunPlanning.crcRefusalLine(e))
            }
        } catch {
            junitFile?.discard()
            StandardStreams.errorLine("cadence validate: \(String(describing: error))")
            throw ExitCode(2)
        }
        let judge = OutputJudge(criteria: criteria, warmupSeconds: warmup, windowSeconds: window)
        try show(ObservedValidation.outcome(outcome.result, client: client, judge: judge, frames: outcome.frames,
                                            device: settings.device, maxFrozen: maxFrozen, json: options.json,
                                            started: started), junitFile: junitFile)
    }
}
