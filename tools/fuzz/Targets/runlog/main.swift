import CadenceCore
import CadenceReport
import Foundation
import FuzzSupport

/// The run-log reader as `cadence report` uses it: parse (strict, then allowing a cut-off last
/// line), analyse, and draw every output format (the PNG drawn, not encoded). Every line the
/// fast frame-line parser accepts must decode to the same record with JSONDecoder.
let decoder = JSONDecoder()
runFuzzer { data, size in
    let bytes = Data(fuzzBytes(data, size))
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
        let raw = [UInt8](line)
        guard let fast = FrameRecord(logLine: raw) else { continue }
        guard let slow = try? decoder.decode(FrameRecord.self, from: Data(raw)), slow == fast,
            slow.effectiveRateHz.bitPattern == fast.effectiveRateHz.bitPattern
        else {
            fatalError("the fast parser and JSONDecoder disagree on: \(String(decoding: raw, as: UTF8.self))")
        }
    }
    for partial in [false, true] {
        guard let log = try? RunLog.parse(bytes, name: "fuzz", allowPartialLastLine: partial) else { continue }
        let summary = LogAnalysis.summary(of: log)
        _ = LogAnalysis.differences(summary, log.end?.summary ?? summary)
        _ = CSVExport.csv(log.records)
        let chart = ReportChart(log: log, width: 480, height: 320)
        _ = SVGReport.svg(chart)
        _ = HTMLReport.html(chart, log: log, source: "fuzz")
        // The chart drawn from the log's data; not PNG-encoded: Deflating a 480x320 canvas under
        // coverage instrumentation took ~1.5 s per input (9 inputs/s, and timeouts under load),
        // and the encoder's input is pixels, not outside text (Raster's PNG tests cover it).
        _ = PNGReport.render(chart)
    }
    return 0
}
