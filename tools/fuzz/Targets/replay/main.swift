import CadenceReport
import Foundation
import FuzzSupport

/// `cadence replay`: a log that parses is replayed on the pacing core.
runFuzzer { data, size in
    if let log = try? RunLog.parse(Data(fuzzBytes(data, size)), name: "fuzz", allowPartialLastLine: true) {
        _ = try? Replay.run(log)
    }
    return 0
}
