import CadenceCore
import CadenceMetrics
import CadenceReport
import DRM
import DRMTrace
import Foundation

/// Where `observe` writes: the log and CSV lines, the Prometheus textfile, and the result at
/// the end (``ObserveSession`` keeps the state).
extension ObserveSession {
    /// One log line; a frame line may start a new file first (a rotated log), other lines never do.
    func writeLog(_ line: String, record: Bool = true) {
        guard let f = log else { return }
        do {
            try f.write(line: Array(line.utf8), record: record, mayRotate: record)
            if record { logFrames += 1 }
        } catch {
            // The lines written stay (a killed run's log reads the same).
            incomplete.append("log \(f.path): \(logFrames) flips, no end line (\(error))")
            onNotice("logging stopped after \(logFrames) flips: \(error); observing goes on and the lines written stay")
            f.close()
            log = nil
        }
    }

    func write(_ file: inout LineFile?, _ what: String, _ line: String) {
        guard let f = file else { return }
        do { try f.write(line: line) } catch {
            incomplete.append("\(what): \(error)")
            f.discard()
            file = nil
        }
    }

    func writeTextfile() {
        lastTextfile = Date()
        guard let path = textfile else { return }
        do { try metrics.writeTextfile(path) } catch { incomplete.append("metrics textfile: \(error)") }
    }

    /// Ends the run: the flips still waiting, the final gauges, the textfile, the summary.
    public func finish() -> ObserveResult {
        events.removeAll()
        stream.finish(into: &events)
        handle()
        // Flips still held (a client whose cadence never settled): judged against its dominant
        // interval so far.
        for key in order {
            guard var c = clients[key], c.heldFlips > 0 else { continue }
            let judged = c.flush()
            clients[key] = c
            emit(judged, key: key, period: periodNs(key.crtc))
        }
        var result = ObserveResult()
        result.durationSeconds = seconds
        result.traceLines = stream.lines
        result.lostEvents = stream.tracker.inexactFlips > 0 || stream.lostEvents > 0 ? stream.lostEvents : 0
        result.inexactFlips = stream.tracker.inexactFlips
        result.requestDeliveries = stream.tracker.requestDeliveries
        result.typedDeliveries = stream.tracker.typedDeliveries
        result.sendProbeMismatch = stream.tracker.sendProbeMismatch
        for (crtc, held) in heldCRC where crcWideners[crtc] == nil {
            // No flip or vblank of this CRTC was traced: the lines are widened on their own.
            crcWideners[crtc] = SequenceWidener()
            for x in held { addWidenedCRC(crtc: crtc, x) }
        }
        heldCRC = [:]
        for crtc in Set(vblanks.keys).union(contents.keys).sorted() {
            let hz = fits[crtc]?.hz ?? 0
            var scanout = contents[crtc]?.finish()
            if scanout != nil {
                scanout!.source = contentSource
                scanout!.reads = crcReads
                scanout!.readMicroseconds = Double(crcReadNs) / 1e3
            }
            if let v = scanout {
                metrics.setScanout(v, labels: FrameMetrics.Labels(connector: displays.connector(crtc), crtc: Int(crtc)))
            }
            result.crtcs.append(
                .init(
                    crtc: Int(crtc), connector: displays.connector(crtc), vblanks: vblanks[crtc] ?? 0,
                    refreshHz: hz, modeRefreshHz: displays.byCRTC[crtc]?.refreshHz, scanout: scanout))
        }
        for key in order {
            guard let c = clients[key] else { continue }
            let period = periodNs(key.crtc)
            let hz = 1e9 / period
            metrics.setRefresh(hz, expectedInterval: c.expectedInterval, labels: labels(key))
            let s = RunSummary(
                accounting: c.accounting, backend: "observed", refreshHz: hz, vrr: nil,
                effectiveRateHz: hz / Double(c.expectedInterval), latency: 0, end: .completed)
            let task = stream.tracker.tasks[key.file]
            let id = identity(key.file)
            result.clients.append(
                .init(
                    crtc: Int(key.crtc), connector: displays.connector(key.crtc), client: clientName(key.file),
                    pid: id.map { Int($0.pid) } ?? task.map { Int($0.pid) }, file: String(key.file, radix: 16),
                    nameSource: id != nil ? "debugfs" : "trace", master: id?.master,
                    expectedRefreshes: c.expectedInterval, largestDropEvent: largest[key] ?? 0, summary: s))
        }
        result.cpuSeconds = Self.cpuSeconds()
        result.cpuObservingSeconds = cpuObserving
        let totalVBlanks = vblanks.values.reduce(0, +)
        if let c = cpuObserving, totalVBlanks > 0 { result.cpuPerVBlankUs = c * 1e6 / Double(totalVBlanks) }
        if let l = log {
            if let text = try? JSON.sortedText(result) {
                writeLog(#"{"record":"end","observe":"# + text + "}", record: false)
            }
            l.close()
        }
        csv?.close()
        if textfile != nil { writeTextfile() }
        result.incompleteOutputs = incomplete
        return result
    }
}
