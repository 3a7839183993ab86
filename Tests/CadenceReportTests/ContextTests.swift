import CadenceCore
import CadenceReport
import Foundation
import Raster
import Testing

/// A fake procfs/sysfs tree: kernel, cpuinfo, thermal zones and cpufreq.
struct FakeSystemTree {
    let root: String

    init(cpus: [(khz: Int, governor: String)] = [(2_400_000, "schedutil"), (3_600_000, "schedutil")],
         zones: [(type: String, milli: Int)] = [("acpitz", 40_000), ("x86_pkg_temp", 47_500)]) throws {
        root = temporaryDirectory()
        try write("proc/sys/kernel/ostype", "Linux\n")
        try write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
        var info = ""
        for i in cpus.indices { info += "processor\t: \(i)\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz\n\n" }
        try write("proc/cpuinfo", info)
        for (i, c) in cpus.enumerated() {
            try write("sys/devices/system/cpu/cpu\(i)/cpufreq/scaling_cur_freq", "\(c.khz)\n")
            try write("sys/devices/system/cpu/cpu\(i)/cpufreq/scaling_governor", "\(c.governor)\n")
        }
        // Not CPUs: must be ignored.
        try FileManager.default.createDirectory(atPath: root + "/sys/devices/system/cpu/cpufreq", withIntermediateDirectories: true)
        try write("sys/devices/system/cpu/online", "0-1\n")
        for (i, z) in zones.enumerated() { try setZone(i, type: z.type, milli: z.milli) }
    }

    func write(_ path: String, _ text: String) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    func setZone(_ i: Int, type: String, milli: Int) throws {
        try write("sys/class/thermal/thermal_zone\(i)/type", type + "\n")
        try write("sys/class/thermal/thermal_zone\(i)/temp", "\(milli)\n")
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

@Suite struct SystemContextTests {
    @Test func headerInfoFromTheTree() throws {
        let tree = try FakeSystemTree(cpus: [(2_400_000, "schedutil"), (800_000, "powersave"), (3_000_000, "schedutil")])
        defer { tree.remove() }
        let info = SystemProbe(root: tree.root).info(driver: "vkms 1.0.0")
        #expect(info == SystemInfo(kernel: "Linux 6.1.0-18-amd64", driver: "vkms 1.0.0",
                                   cpuModel: "Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz", cpus: 3, cpuGovernor: "schedutil,powersave"))
    }

    @Test func sampleReadsEveryZoneAndPicksTheCPU() throws {
        let tree = try FakeSystemTree()
        defer { tree.remove() }
        let probe = SystemProbe(root: tree.root + "/")
        let c = probe.sample(timeNs: 5_000_000_000)
        #expect(c.timeNs == 5_000_000_000)
        #expect(c.thermal == [.init(zone: "thermal_zone0", type: "acpitz", celsius: 40), .init(zone: "thermal_zone1", type: "x86_pkg_temp", celsius: 47.5)])
        // x86_pkg_temp is the CPU package; acpitz only when nothing better exists.
        #expect(c.cpuTemperatureC == 47.5)
        #expect(c.cpuFrequencyMHz == [.init(cpu: 0, mhz: 2400), .init(cpu: 1, mhz: 3600)])
        #expect(c.meanFrequencyMHz == 3000)
        try tree.setZone(1, type: "x86_pkg_temp", milli: 71_250)
        #expect(probe.sample(timeNs: 6_000_000_000).cpuTemperatureC == 71.25)
        // Unknown zone types: the first zone.
        let other = try FakeSystemTree(zones: [("battery", 30_000), ("gpu", 55_000)])
        defer { other.remove() }
        #expect(SystemProbe(root: other.root).sample(timeNs: 0).cpuTemperatureC == 30)
    }

    /// The sampler lists the directories once and then only reads the files: values change,
    /// a zone that goes away is left out, sub-zero and garbage values are handled.
    @Test func theSamplerReadsTheFilesItFound() throws {
        let tree = try FakeSystemTree()
        defer { tree.remove() }
        let sampler = SystemProbe(root: tree.root).sampler()
        #expect(sampler.sample(timeNs: 1).thermal.map(\.celsius) == [40, 47.5])
        try tree.setZone(0, type: "acpitz", milli: -12_500)
        try tree.write("sys/class/thermal/thermal_zone1/temp", "not a number\n")
        #expect(sampler.sample(timeNs: 2).thermal == [.init(zone: "thermal_zone0", type: "acpitz", celsius: -12.5)])
        #expect(sampler.sample(timeNs: 2).cpuTemperatureC == -12.5)
        try FileManager.default.removeItem(atPath: tree.root + "/sys/class/thermal/thermal_zone0")
        try tree.setZone(1, type: "x86_pkg_temp", milli: 50_000)
        #expect(sampler.sample(timeNs: 3).thermal.map(\.zone) == ["thermal_zone1"])
        // A zone added later is not sampled (the set is fixed when the run starts).
        try tree.setZone(5, type: "cpu-thermal", milli: 60_000)
        #expect(sampler.sample(timeNs: 4).thermal.count == 1)
        #expect(SystemProbe(root: tree.root).sample(timeNs: 4).thermal.count == 2)
    }

    @Test func aMachineWithoutThermalOrCpufreqGivesEmptyReadings() throws {
        let empty = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let probe = SystemProbe(root: empty)
        #expect(probe.info(driver: "fake display") == SystemInfo(kernel: nil, driver: "fake display", cpuModel: nil, cpus: nil, cpuGovernor: nil))
        let c = probe.sample(timeNs: 1)
        #expect(c.thermal.isEmpty && c.cpuFrequencyMHz.isEmpty && c.cpuTemperatureC == nil && c.meanFrequencyMHz == nil)
        // The real machine: whatever exists is read, nothing throws.
        let live = SystemProbe().info(driver: "x")
        #expect(live.kernel?.hasPrefix("Linux ") == true)
        #expect((live.cpus ?? 0) >= 1)
    }

    /// Writes a fake-display run log with a context record every `every` frames, the CPU
    /// temperature rising 1 °C per record from 40 °C.
    func logWithContext(_ dir: String, every: Int = 60, tree: FakeSystemTree) throws -> String {
        let path = dir + "/ctx.jsonl"
        let writer = try RunLogWriter(path: path)
        let display = FakeDisplay()
        let cfg = config(frames: 600, injectLate: [100: 1, 250: 3])
        let run = try PacingRun(backend: display, configuration: cfg)
        let probe = SystemProbe(root: tree.root)
        try writer.begin(RunLogHeader(backend: display, configuration: cfg, system: probe.info(driver: "fake display")))
        var n = 0
        run.onFrame = { r in
            try? writer.write(FrameRecord(r))
            n += 1
            if n % every == 0 {
                try? tree.setZone(1, type: "x86_pkg_temp", milli: 40_000 + 1000 * (n / every))
                try? writer.write(probe.sample(timeNs: r.presentedTime))
            }
        }
        try writer.end(try run.run())
        return path
    }

    @Test func logsCarryContextAndOldLogsStillRead() throws {
        let dir = temporaryDirectory()
        let tree = try FakeSystemTree()
        defer { try? FileManager.default.removeItem(atPath: dir); tree.remove() }
        let path = try logWithContext(dir, tree: tree)
        let log = try RunLog.read(path: path)
        #expect(log.records.count == 600)
        #expect(log.context.count == 10)
        #expect(log.context.map(\.cpuTemperatureC) == (1...10).map { 40.0 + Double($0) })
        #expect(log.header?.system?.kernel == "Linux 6.1.0-18-amd64" && log.header?.system?.cpuGovernor == "schedutil")
        // The frames' accounting is untouched by the context lines.
        #expect(LogAnalysis.summary(of: log) == log.end?.summary)
        // A log from before: no system key, no context lines.
        let text = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let header = text[0].replacingOccurrences(of: #","system":\{[^}]*\}"#, with: "", options: .regularExpression)
        #expect(!header.contains("system") && header.contains("\"record\":\"run\""))
        let old = ([header] + text.dropFirst().filter { !$0.contains("\"record\":\"context\"") }.map(String.init)).joined(separator: "\n") + "\n"
        let oldLog = try RunLog.parse(Data(old.utf8), name: "old.jsonl")
        #expect(oldLog.header?.system == nil && oldLog.context.isEmpty && oldLog.records.count == 600)
        #expect(LogAnalysis.summary(of: oldLog) == LogAnalysis.summary(of: log))
        #expect(ReportChart(log: oldLog).temperatureBox == nil)
        // A malformed or misplaced context line is refused with one line.
        let bad = text[0] + "\n{\"record\":\"context\",\"version\":1,\"timeNs\":\"soon\"}\n" + text[1] + "\n"
        #expect(throws: RunLog.Invalid("x.jsonl: line 2: malformed context record")) { try RunLog.parse(Data(bad.utf8), name: "x.jsonl") }
        let after = text.joined(separator: "\n") + "\n" + text.first { $0.contains("\"record\":\"context\"") }! + "\n"
        #expect(throws: RunLog.Invalid.self) { try RunLog.parse(Data(after.utf8), name: "x.jsonl") }
    }

    @Test func reportDrawsTheTemperatureUnderTheTimeline() throws {
        let dir = temporaryDirectory()
        let tree = try FakeSystemTree()
        defer { try? FileManager.default.removeItem(atPath: dir); tree.remove() }
        let log = try RunLog.read(path: try logWithContext(dir, tree: tree))
        let chart = ReportChart(log: log, width: 1000, height: 700)
        let tb = try #require(chart.temperatureBox)
        #expect(tb.y > chart.timeline.maxY && tb.maxY < chart.histogramBox.y)
        // Each reading sits at the frame shown when it was taken: every 60th frame.
        #expect(chart.temperatures.map { Int($0.frame.rounded()) } == (1...10).map { 60 * $0 - 1 })
        #expect(chart.temperatureRange == 40...51)
        #expect(chart.temperatureCaption == "CPU temperature (C) by frame: 41.0-50.0 C; CPU frequency 3000-3000 MHz")
        // PNG: the temperature colour at the first and last readings, the lowest one lower.
        let bmp = PNGReport.render(chart)
        let first = chart.temperatures[0], last = chart.temperatures[9]
        let y0 = try #require(chart.y(celsius: first.celsius)), y9 = try #require(chart.y(celsius: last.celsius))
        #expect(y9 < y0)
        withExtendedLifetime(bmp) {
            let c = bmp.canvas
            #expect(px(c, x: Int(chart.x(framePosition: first.frame).rounded()), y: Int(y0.rounded())) == ReportChart.temperatureColor)
            #expect(px(c, x: Int(chart.x(framePosition: last.frame).rounded()), y: Int(y9.rounded())) == ReportChart.temperatureColor)
            // Between the strip's readings and the timeline: background.
            #expect(px(c, x: Int(chart.x(framePosition: first.frame).rounded()), y: Int(tb.y - 2)) != ReportChart.temperatureColor)
        }
        // SVG: one reading per record with its value.
        let svg = SVGReport.svg(chart)
        #expect(svg.contains("<polyline class=\"temperature\" data-points=\"10\""))
        #expect(svg.components(separatedBy: "class=\"reading\"").count == 11)
        #expect(svg.contains("data-celsius=\"50.0\""))
        // HTML: the machine's context.
        let html = HTMLReport.html(chart, log: log, source: "ctx.jsonl")
        #expect(html.contains("<tr><th>kernel</th><td>Linux 6.1.0-18-amd64</td></tr>"))
        #expect(html.contains("<tr><th>CPU temperature (°C)</th><td>41.0 – 50.0</td></tr>"))
    }
}
