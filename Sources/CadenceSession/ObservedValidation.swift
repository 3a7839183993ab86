import CadenceCore
import CadenceReport
import Foundation

/// How `cadence validate --observe` judges another program's flips (an `ObserveResult`):
/// which client, its summary against the CRTC's nominal refresh, and the criteria, or, when
/// nothing flipped, the failed `flips` criterion.
///
///     switch ObservedValidation.pick(result, client: "kiosk") {
///     case .noFlips(let none): verdict([none.criterion], summary: none.summary)
///     case .picked(let p): verdict(ObservedValidation.judge(p, with: judge, frames: frames, device: card).results, …)
///     }
public enum ObservedValidation {
    /// Nothing to judge: no client flipped (or not the one asked for).
    public struct NoFlips {
        /// The client asked for (nil: any).
        public var client: String?
        /// The clients that did flip (when one was asked for and another flipped).
        public var flipping: [String]
        /// How long the observation lasted.
        public var durationSeconds: Double
        /// An empty summary of the observation (its duration, the CRTC's refresh, the incomplete
        /// outputs).
        public var summary: RunSummary

        /// Why nothing is judged: "no flips observed", from the client when one was asked for,
        /// with the clients that did flip.
        public var reason: String {
            guard let client else { return "no flips observed" }
            return "no flips observed from \(client)"
                + (flipping.isEmpty ? "" : " (flipping: \(flipping.joined(separator: ", ")))")
        }

        /// The failed criterion `flips`: ``reason`` in the observation's seconds.
        public var criterion: CriterionResult {
            CriterionResult(
                name: "flips", passed: false, detail: "\(reason) in \(String(format: "%.1f", durationSeconds)) s",
                value: .infinity)
        }
    }

    /// The client judged.
    public struct Picked {
        /// The client.
        public var client: ObserveResult.Client
        /// Its CRTC (nil when the card could not be read).
        public var crtc: ObserveResult.CRTC?
        /// Its summary, with the CRTC's mode as the nominal refresh (when known) and the
        /// observation's incomplete outputs.
        public var summary: RunSummary
        /// The refresh fitted to every vblank on the CRTC (nil when its mode is unknown).
        public var measuredRefreshHz: Double?
    }

    /// What an observation gives to judge.
    public enum Pick {
        /// Nothing flipped.
        case noFlips(NoFlips)
        /// The client to judge.
        case picked(Picked)
    }

    /// Picks the client of `result` to judge: `client` (its name), else the process with the
    /// most flips (`ObserveResult.pick(command:)`).
    public static func pick(_ result: ObserveResult, client: String?) -> Pick {
        let incomplete = result.incompleteOutputs.isEmpty ? nil : result.incompleteOutputs
        guard let picked = result.pick(command: client) else {
            let crtcHz = result.crtcs.first?.refreshHz ?? 0
            var empty = RunSummary(
                accounting: FrameAccounting(), backend: "observed", refreshHz: crtcHz, vrr: nil,
                effectiveRateHz: crtcHz, latency: 0, end: .completed)
            empty.durationSeconds = result.durationSeconds
            empty.incompleteOutputs = incomplete
            let flipping = result.clients.filter { $0.summary.presented > 0 }.map(\.client)
            return .noFlips(
                NoFlips(client: client, flipping: flipping, durationSeconds: result.durationSeconds, summary: empty))
        }
        // Nominal refresh: the CRTC's mode (when the card could be read); measured: the fit of
        // every vblank on the CRTC (refresh-tolerance compares the two; without the mode it
        // fails as not measured).
        let crtc = result.crtcs.first { $0.crtc == picked.crtc }
        var summary = picked.summary
        var measured: Double?
        if let mode = crtc?.modeRefreshHz, mode > 0, let c = crtc, c.refreshHz > 0 {
            summary.refreshHz = mode
            measured = c.refreshHz
        }
        summary.incompleteOutputs = incomplete
        return .picked(Picked(client: picked, crtc: crtc, summary: summary, measuredRefreshHz: measured))
    }

    /// Judges `picked` with `judge`, over its `frames` by client key (used only with a warm-up
    /// or windows); without a nominal refresh a failed refresh-tolerance says its mode could not
    /// be read from `device`.
    public static func judge(
        _ picked: Picked, with judge: OutputJudge, frames: [String: [FrameReport]], device: String
    ) -> OutputJudge.Judged {
        let kept = judge.keepsFrames ? frames[picked.client.key] ?? [] : []
        var judged = judge.judge(
            picked.summary, frames: kept, hardwareVBlank: picked.measuredRefreshHz != nil,
            measuredRefreshHz: picked.measuredRefreshHz, largestDropEvent: picked.client.largestDropEvent)
        if picked.measuredRefreshHz == nil {
            for i in judged.results.indices
            where judged.results[i].name == "refresh-tolerance" && !judged.results[i].passed {
                judged.results[i].detail =
                    "the CRTC's nominal refresh is unknown (its mode could not be read from \(device))"
            }
        }
        return judged
    }
}
