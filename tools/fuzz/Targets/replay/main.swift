import CadenceReport
import Foundation
import FuzzSupport

/// `cadence replay`: a log that parses is replayed on the pacing core. Replay works refresh by
/// refresh, so its cost is the recording's span (up to 10^8 refreshes are accepted, see
/// ReplayLimits); logs spanning more than 10^5 refreshes are skipped here so that a slow input
/// (> 1 s) means a bug, not a long recording.
runFuzzer { data, size in
    guard let log = try? RunLog.parse(Data(fuzzBytes(data, size)), name: "fuzz", allowPartialLastLine: true) else { return 0 }
    let flips = log.records.filter { $0.flipNs > 0 }.map(\.flipNs)
    if let a = flips.min(), let b = flips.max(), let h = log.header, Double(b - a) / h.refreshIntervalNs > 1e5 { return 0 }
    _ = try? Replay.run(log)
    return 0
}
