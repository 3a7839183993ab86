import CadenceCore
import CadenceReport
import FuzzSupport

/// `--inject-late FRAME:K[,FRAME:K…]`: parse; a parsed spec must validate in a configuration,
/// and (when its frames are among the first 8) run on the fake display with every injected
/// frame late by exactly K − 1 or K refreshes.
runFuzzer { data, size in
    guard let spec = try? RunSpec.injectLate(fuzzText(data, size)) else { return 0 }
    precondition(!spec.isEmpty)
    var c = RunConfiguration()
    c.injectLate = spec
    precondition((try? c.validate()) != nil)
    guard let last = spec.keys.max(), last < 8 else { return 0 }
    c.frames = last + 2
    guard let run = try? PacingRun(backend: FakeDisplay(), configuration: c), let s = try? run.run() else {
        preconditionFailure("a valid --inject-late must run")
    }
    precondition(s.frames == last + 2 && s.presented == s.frames)
    return 0
}
