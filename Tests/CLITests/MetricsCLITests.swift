import CadenceCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The samples of a Prometheus exposition: "name{labels}" → value.
func exposition(_ text: String) -> [String: Double] {
    var out: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let sp = line.lastIndex(of: " "), let v = Double(line[line.index(after: sp)...]) else { continue }
        out[String(line[..<sp])] = v
    }
    return out
}

/// `promtool check metrics` on `text` when promtool is installed (nil when it is not): its
/// exit status and output.
func promtoolCheck(_ text: String) throws -> (status: Int32, output: String)? {
    let tool = "/usr/bin/promtool"
    guard FileManager.default.isExecutableFile(atPath: tool) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = ["check", "metrics"]
    let input = Pipe(), output = Pipe()
    p.standardInput = input
    p.standardOutput = output
    p.standardError = output
    try p.run()
    input.fileHandleForWriting.write(Data(text.utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A TCP port nothing listens on right now (bound to port 0, then closed).
func freePort() -> Int {
    let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(s) }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, len) } }
    _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
    return Int(UInt16(bigEndian: a.sin_port))
}

/// The body of `GET /metrics` on 127.0.0.1:`port` (nil when nothing answers 200).
func scrape(port: Int) -> String? {
    let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(s) }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = UInt16(port).bigEndian
    a.sin_addr.s_addr = inet_addr("127.0.0.1")
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    let ok = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else { return nil }
    let req = Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
    _ = req.withUnsafeBytes { send(s, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buf.withUnsafeMutableBytes { recv(s, $0.baseAddress!, $0.count, 0) }
        if n <= 0 { break }
        out += buf[0..<n]
    }
    let text = String(decoding: out, as: UTF8.self)
    guard text.hasPrefix("HTTP/1.1 200"), let split = text.range(of: "\r\n\r\n") else { return nil }
    return String(text[split.upperBound...])
}

@Suite(.serialized) struct MetricsCLITests {
    let fake = #"{connector="fake",crtc="0"}"#

    func summary(_ json: String) throws -> RunSummary {
        try JSONDecoder().decode(RunSummary.self, from: Data(json.utf8))
    }

    /// Drop events by cause as the log's frames say: shown frames that followed dropped refreshes.
    func dropEventsByCause(log path: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["frame"] != nil,
                  let outcome = o["outcome"] as? String, outcome == "on-time" || outcome == "late",
                  let d = o["droppedRefreshes"] as? Int, d > 0 else { continue }
            out[o["cause"] as? String ?? "unknown", default: 0] += 1
        }
        return out
    }

    /// Every counter and histogram of the textfile equals the run's summary.
    func expectEqual(_ m: [String: Double], _ s: RunSummary, causes: [String: Int]) {
        #expect(m["cadence_frames_total\(fake)"] == Double(s.frames))
        #expect(m["cadence_frames_presented_total\(fake)"] == Double(s.presented))
        #expect(m["cadence_dropped_refreshes_total\(fake)"] == Double(s.droppedRefreshes))
        var events = 0.0
        for c in DropCause.allCases {
            let v = m[#"cadence_drop_events_total{connector="fake",crtc="0",cause="\#(c.rawValue)"}"#]
            #expect(v == Double(causes[c.rawValue] ?? 0), "\(c.rawValue)")
            events += v ?? 0
        }
        #expect(events == Double(s.dropEvents))
        #expect(m["cadence_frame_interval_refreshes_count\(fake)"] == Double(s.intervalRefreshes.values.reduce(0, +)))
        var upTo = 0
        for k in 1...4 {
            upTo += s.intervalRefreshes["\(k)"] ?? 0
            #expect(m[#"cadence_frame_interval_refreshes_bucket{connector="fake",crtc="0",le="\#(k).0"}"#] == Double(upTo), "le \(k)")
        }
        #expect(abs((m["cadence_hitch_time_ratio\(fake)"] ?? -1) - s.hitchTimeRatio) < 1e-9 * max(1, s.hitchTimeRatio))
        #expect(m["cadence_effective_rate_hz\(fake)"] == s.effectiveRateHz)
        #expect(abs((m["cadence_refresh_hz\(fake)"] ?? 0) - s.refreshHz) < 1e-6)
    }

    /// With the CRC check, the textfile carries its verdict: the stale frame the fault made,
    /// the frames verified, the repeated refreshes; promtool accepts it.
    @Test func scanoutCountersEqualTheSummaryScanout() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let args = [
            "run", "--backend", "fake-drm", "--quiet", "--frames", "300", "--inject-late", "100:1", "--verify", "crc",
            "--fault", "stale-buffer:200", "--json", "--metrics-textfile", "m.prom"
        ]
        let r = try cadence(args, in: dir)
        #expect(r.status == 0, "\(r.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let v = try #require(json["scanout"] as? [String: Any])
        let text = try String(contentsOfFile: dir + "/m.prom", encoding: .utf8)
        let m = exposition(text)
        func value(_ name: String, _ extra: String? = nil) -> Double? {
            for (k, v) in m where k.hasPrefix("cadence_" + name + "{") {
                if let e = extra, !k.contains(e) { continue }
                return v
            }
            return nil
        }
        #expect(value("scanout_frames_verified_total") == Double(v["verified"] as? Int ?? -1))
        #expect(value("scanout_mismatches_total", "kind=\"stale\"") == 1)
        #expect(value("scanout_mismatches_total", "kind=\"change-without-flip\"") == 0)
        #expect(value("scanout_inexact_frames_total") == Double(v["inexact"] as? Int ?? -1))
        #expect(value("scanout_repeated_refreshes_total") == Double(v["repeatedRefreshes"] as? Int ?? -1))
        #expect(value("writeback_captures_total", "equal") == nil)
        if let p = try promtoolCheck(text) { #expect(p.status == 0, "\(p.output)") }
        // Without the check there is no scanout series.
        let plain = try cadence(
            ["run", "--backend", "fake-drm", "--quiet", "--frames", "30", "--metrics-textfile", "p.prom"], in: dir)
        #expect(plain.status == 0)
        #expect(!(try String(contentsOfFile: dir + "/p.prom", encoding: .utf8)).contains("scanout"))
    }

    @Test func runTextfileEqualsTheSummary() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--quiet", "--frames", "600", "--inject-late", "100:1,250:3,400:2",
                             "--json", "--log", "run.jsonl", "--metrics-textfile", "m.prom"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let s = try summary(r.out)
        #expect(s.droppedRefreshes == 6 && s.dropEvents == 3 && s.discarded == 0)
        let text = try String(contentsOfFile: dir + "/m.prom", encoding: .utf8)
        let m = exposition(text)
        // No frame was discarded: the drop events by cause are the summary's causes.
        #expect(try dropEventsByCause(log: dir + "/run.jsonl") == s.causes)
        expectEqual(m, s, causes: s.causes)
        #expect(files(in: dir) == ["m.prom", "run.jsonl"])
        if let p = try promtoolCheck(text) { #expect(p.status == 0, "\(p.output)") }
    }

    /// The summary's causes count frames; a frame can be discarded without being a drop event of
    /// its own (30 fps content at latency 3, a frame 4 refreshes late: the content frame queued
    /// behind it is due at the same vblank as the next and never shown), so there the drop
    /// events by cause are the log's shown frames after stale refreshes, and only their sum is
    /// the summary's drop events.
    @Test func validateTextfileEqualsTheSummaryWhenCausesAreNotDropEvents() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["validate", "--backend", "fake", "--quiet", "--frames", "300", "--content-rate", "30",
                             "--latency", "3", "--inject-late", "100:4", "--summary", "s.json", "--log", "run.jsonl",
                             "--metrics-textfile", "m.prom", "--max-dropped", "1000"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let s = try summary(try String(contentsOfFile: dir + "/s.json", encoding: .utf8))
        let causes = try dropEventsByCause(log: dir + "/run.jsonl")
        #expect(s.dropEvents > 0 && s.causes.values.reduce(0, +) > s.dropEvents && causes != s.causes)
        #expect(causes.values.reduce(0, +) == s.dropEvents)
        let text = try String(contentsOfFile: dir + "/m.prom", encoding: .utf8)
        expectEqual(exposition(text), s, causes: causes)
        if let p = try promtoolCheck(text) { #expect(p.status == 0, "\(p.output)") }
    }

    @Test func anUnwritableTextfileIsOneLineExitTwoAndWritesNothing() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--quiet", "--frames", "10", "--log", "run.jsonl",
                             "--metrics-textfile", "no-such-dir/m.prom"], in: dir)
        #expect(r.status == 2)
        #expect(lines(r.err) == ["cadence run: cannot write no-such-dir/m.prom: No such file or directory"], "\(r.err)")
        #expect(files(in: dir).isEmpty)
    }

    #if MetricsHTTP
    /// /metrics answers during a run (wall clock), and the last scrape's counters never exceed
    /// the summary's; the textfile written at the end equals it.
    @Test func scrapeDuringARun() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = freePort()
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--quiet", "--duration", "3", "--json",
                                    "--metrics-port", String(port), "--metrics-textfile", "m.prom"], in: dir)
        var mid: [String: Double]?
        let end = Date().addingTimeInterval(60 * hangLimitScale)
        while mid == nil && Date() < end && p.process.isRunning {
            if let body = scrape(port: port), let v = exposition(body)["cadence_frames_presented_total\(fake)"], v > 0 {
                mid = exposition(body)
                if let pc = try promtoolCheck(body) { #expect(pc.status == 0, "\(pc.output)") }
            } else {
                usleep(50_000)
            }
        }
        let r = p.finish()
        #expect(r.status == 0, "\(r.err)")
        let s = try summary(r.out)
        let m = try #require(mid)
        #expect(m["cadence_frames_presented_total\(fake)"]! <= Double(s.presented))
        let final = exposition(try String(contentsOfFile: dir + "/m.prom", encoding: .utf8))
        #expect(final["cadence_frames_presented_total\(fake)"] == Double(s.presented))
        #expect(final["cadence_dropped_refreshes_total\(fake)"] == Double(s.droppedRefreshes))
        // The server stopped with the run.
        #expect(scrape(port: port) == nil)
    }

    @Test func aPortInUseIsOneLineExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, len) } }
        listen(s, 1)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        let port = Int(UInt16(bigEndian: a.sin_port))
        for command in ["run", "validate"] {
            let r = try cadence([command, "--backend", "fake", "--quiet", "--frames", "10", "--max-dropped", "0", "--log", "run.jsonl",
                                 "--metrics-port", String(port)].filter { command == "validate" || ($0 != "--max-dropped" && $0 != "0") },
                                in: dir)
            #expect(r.status == 2)
            #expect(lines(r.err) == ["cadence \(command): cannot serve metrics on 127.0.0.1:\(port): address already in use"], "\(r.err)")
            #expect(files(in: dir).isEmpty)
        }
    }
    #else
    @Test func withoutTheTraitMetricsPortIsOneLineExitTwo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cadence(["run", "--backend", "fake", "--quiet", "--frames", "10", "--metrics-port", "9464"], in: dir)
        #expect(r.status == 2)
        #expect(lines(r.err) == ["cadence run: this build has no HTTP server: built without the MetricsHTTP trait; use --metrics-textfile"])
    }
    #endif
}
