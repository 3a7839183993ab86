import CadenceCore
import Foundation
import Testing
@testable import CadenceMetrics

/// The samples of an exposition: "name{labels}" → value.
private func samples(_ bytes: [UInt8]) -> [String: Double] {
    var out: [String: Double] = [:]
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
        guard let sp = line.lastIndex(of: " "), let v = Double(line[line.index(after: sp)...]) else { continue }
        out[String(line[..<sp])] = v
    }
    return out
}

/// A shown frame at refresh `n` of 60 Hz, `dropped` stale refreshes before it.
private func shown(_ n: Int64, dropped: Int = 0, cause: DropCause? = nil) -> FrameSample {
    var s = FrameSample()
    s.outcome = dropped > 0 ? .late : .onTime
    s.presentedTime = (n + 1) * 16_666_667
    s.droppedRefreshes = dropped
    s.hitch = Int64(dropped) * 16_666_667
    s.interval = n > 0 ? Int64(1 + dropped) * 16_666_667 : 0
    s.intervalRefreshes = n > 0 ? 1 + dropped : 0
    s.cause = dropped > 0 ? cause : nil
    s.refreshHz = 60
    s.effectiveRateHz = 60
    return s
}

@Suite struct MetricsFeedTests {
    let run = #"{connector="Virtual-1",crtc="2"}"#

    @Test func everyFramePushedIsCountedWhileScrapesRun() throws {
        let path = NSTemporaryDirectory() + "cadence-feed-\(UUID().uuidString).prom"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let feed = MetricsFeed(textfile: path, textfileInterval: 0.2)
        try feed.writeTextfileNow()
        try feed.start(labels: .init(connector: "Virtual-1", crtc: 2))
        // Before any frame: the series exists with every counter at 0.
        let first = samples(feed.exposition())
        #expect(first["cadence_frames_total\(run)"] == 0)
        #expect(first[#"cadence_drop_events_total{connector="Virtual-1",crtc="2",cause="busy"}"#] == 0)
        let producer = Thread {
            for n in 0..<3000 { feed.push(shown(Int64(n), dropped: n % 100 == 99 ? 2 : 0, cause: .renderLate)) }
        }
        producer.start()
        var scrapes = 0
        while !producer.isFinished || scrapes < 3 {
            let m = samples(feed.exposition())
            #expect((m["cadence_frames_total\(run)"] ?? -1) <= 3000)
            scrapes += 1
            usleep(1000)
        }
        #expect(feed.finish() == nil)
        #expect(feed.lostSamples == 0)
        let m = samples(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(m["cadence_frames_total\(run)"] == 3000)
        #expect(m["cadence_frames_presented_total\(run)"] == 3000)
        #expect(m["cadence_dropped_refreshes_total\(run)"] == 60)
        #expect(m[#"cadence_drop_events_total{connector="Virtual-1",crtc="2",cause="render-late"}"#] == 30)
        #expect(m[#"cadence_frame_interval_refreshes_bucket{connector="Virtual-1",crtc="2",le="1.0"}"#] == 2969)
        #expect(m[#"cadence_frame_interval_refreshes_bucket{connector="Virtual-1",crtc="2",le="3.0"}"#] == 2999)
        #expect(m["cadence_refresh_hz\(run)"] == 60)
        // No client label on a run's series.
        #expect(!String(decoding: feed.exposition(), as: UTF8.self).contains("client="))
    }

    @Test func aFullRingLosesTheNewestFramesAndSaysHowMany() throws {
        let feed = MetricsFeed(textfile: nil, capacity: 8)
        for n in 0..<20 { feed.push(shown(Int64(n))) }
        #expect(feed.lostSamples == 12)
        try feed.start(labels: .init(connector: "Virtual-1", crtc: 2))
        #expect(feed.finish() == nil)
        let m = samples(feed.exposition())
        #expect(m["cadence_frames_total\(run)"] == 8)
        // The ring is free again.
        feed.push(shown(20))
        #expect(samples(feed.exposition())["cadence_frames_total\(run)"] == 9)
    }

    @Test func aTextfileThatCannotBeWrittenIsReported() throws {
        let feed = MetricsFeed(textfile: "/nonexistent-dir/m.prom")
        #expect(throws: MetricsError.self) { try feed.writeTextfileNow() }
        try feed.start(labels: .init(connector: "c", crtc: 0))
        feed.push(shown(0))
        #expect(feed.finish()?.description == "cannot write /nonexistent-dir/m.prom: No such file or directory")
    }

    @Test func hitchRatioCoversTheLastMinuteOnly() {
        let metrics = FrameMetrics()
        let labels = FrameMetrics.Labels(connector: "c", crtc: 0)
        let key = #"cadence_hitch_time_ratio{connector="c",crtc="0"}"#
        // 30 s at 60 Hz with one drop of 3 refreshes at 10 s: 50 ms of hitch over 30 s.
        for n in Int64(0)..<1800 { metrics.record(shown(n, dropped: n == 600 ? 3 : 0, cause: .schedulerLate), labels: labels) }
        let early = samples(metrics.exposition())[key] ?? -1
        #expect(abs(early - 50.000001 / (1799 * 16.666667 / 1000)) < 1e-3)
        // 80 s later the drop is out of the window.
        for n in Int64(1800)..<(1800 + 4800) { metrics.record(shown(n), labels: labels) }
        #expect(samples(metrics.exposition())[key] == 0)
    }

    @Test func expositionPassesPromtool() throws {
        let tool = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: tool) else { return }
        let metrics = FrameMetrics()
        for n in Int64(0)..<100 {
            metrics.record(shown(n, dropped: n % 10 == 9 ? 1 : 0, cause: .flipLate), labels: .init(connector: "Virtual-1", crtc: 0))
        }
        var r = FrameReport()
        r.presentedTime = 1
        metrics.record(r, labels: .init(connector: "Virtual-1", crtc: 0, client: "kiosk"), refreshHz: 60, expectedInterval: 1)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        input.fileHandleForWriting.write(Data(metrics.exposition()))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
    }
}
