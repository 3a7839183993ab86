import CadenceCore
import CadenceReport

/// How `cadence validate` judges each output's run, for one output or several alike: the
/// criteria over the whole run, or, with a warm-up or windows, over the frames after the
/// warm-up and in every window (`ValidationWindows`); a display that failed mid-run fails
/// too.
///
///     let judge = OutputJudge(criteria: criteria, warmupSeconds: 5, windowSeconds: 10)
///     let tally = judge.makeTally()             // add it to the output's sinks before the run
///     let judged = judge.judge(summary, tally: tally, sinks: sinks)
public struct OutputJudge {
    /// One output's judgement.
    public struct Judged {
        /// Each criterion's result (overall and in every window), then the display's failure
        /// if it failed mid-run.
        public var results: [CriterionResult]
        /// The frames after the warm-up and the windows (nil when judged on the whole run).
        public var split: ValidationWindows?
        /// True when no frame was shown after the warm-up: nothing was judged (``results`` is
        /// empty).
        public var nothingToJudge: Bool { split?.judgedFrames == 0 }
    }

    /// The thresholds.
    public var criteria: ValidationCriteria
    /// Frames shown in the first seconds ignored (nil: none).
    public var warmupSeconds: Double?
    /// Judge every criterion in each window of these seconds too (nil: only overall).
    public var windowSeconds: Double?

    /// A judge of `criteria`, after `warmupSeconds` and in windows of `windowSeconds`.
    public init(criteria: ValidationCriteria, warmupSeconds: Double? = nil, windowSeconds: Double? = nil) {
        self.criteria = criteria
        self.warmupSeconds = warmupSeconds
        self.windowSeconds = windowSeconds
    }

    /// True when the frames are judged one by one (a warm-up or windows).
    public var keepsFrames: Bool { warmupSeconds != nil || windowSeconds != nil }

    /// The tally an output's sinks need for this judge (it keeps the frames when
    /// ``keepsFrames``).
    public func makeTally() -> FrameTally { FrameTally(keepFrames: keepsFrames) }

    /// Judges one output's run: `summary` (completed), the `tally` its sinks fed and the
    /// `sinks` (the refresh measured from its shown frames); a display that failed mid-run is
    /// a failed criterion too. When no frame was shown after the warm-up, nothing is judged
    /// (``Judged/nothingToJudge``).
    public func judge(_ summary: RunSummary, tally: FrameTally, sinks: SessionSinks) -> Judged {
        var judged = judge(
            summary, frames: tally.frames, hardwareVBlank: sinks.hardwareVBlank,
            measuredRefreshHz: sinks.measuredRefreshHz, largestDropEvent: tally.largestDropEvent)
        if !judged.nothingToJudge, let failed = CriterionResult.display(summary.end) { judged.results.append(failed) }
        return judged
    }

    /// Judges `summary` and its `frames` (used only with a warm-up or windows), whatever
    /// produced them (a run, or flips observed): `measuredRefreshHz` and `largestDropEvent`
    /// are the whole run's, `hardwareVBlank` false when the sequences are synthetic.
    public func judge(
        _ summary: RunSummary, frames: [FrameReport], hardwareVBlank: Bool, measuredRefreshHz: Double?,
        largestDropEvent: Int
    ) -> Judged {
        guard keepsFrames else {
            return Judged(
                results: criteria.evaluate(
                    summary, measuredRefreshHz: measuredRefreshHz, largestDropEvent: largestDropEvent),
                split: nil)
        }
        let info = ValidationWindows.RunInfo(summary, hardwareVBlank: hardwareVBlank)
        let split = ValidationWindows(
            frames: frames, info: info, warmupNs: Int64(((warmupSeconds ?? 0) * 1e9).rounded()),
            windowNs: windowSeconds.map { Int64(($0 * 1e9).rounded()) })
        return Judged(results: split.judgedFrames == 0 ? [] : split.judge(criteria), split: split)
    }
}
