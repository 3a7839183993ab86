import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a run ran on, for the log header: the context a drop needs to be understood.
public struct SystemInfo: Codable, Equatable, Sendable {
    /// `uname -sr` ("Linux 6.1.0-18-amd64"), from /proc/sys/kernel/{ostype,osrelease}.
    public var kernel: String?
    /// The display driver: the DRM driver's name and version ("vkms 1.0.0"), or "fake display".
    public var driver: String
    /// The CPU model (/proc/cpuinfo "model name", or "Model"/"Hardware" on ARM).
    public var cpuModel: String?
    /// CPUs listed in /proc/cpuinfo.
    public var cpus: Int?
    /// The cpufreq governors in use, distinct, in CPU order ("schedutil"); nil without cpufreq.
    public var cpuGovernor: String?

    public init(kernel: String?, driver: String, cpuModel: String?, cpus: Int?, cpuGovernor: String?) {
        self.kernel = kernel
        self.driver = driver
        self.cpuModel = cpuModel
        self.cpus = cpus
        self.cpuGovernor = cpuGovernor
    }
}

/// A log line written once a second of the run: CPU temperature and frequency at `timeNs`
/// (the display clock, as the frames' times).
///
///     {"record":"context","version":1,"timeNs":…,"cpuTemperatureC":47.5,
///      "thermal":[{"zone":"thermal_zone0","type":"x86_pkg_temp","celsius":47.5}],
///      "cpuFrequencyMHz":[{"cpu":0,"mhz":2400}]}
public struct ContextRecord: Codable, Equatable, Sendable {
    /// One thermal zone's reading.
    public struct Thermal: Codable, Equatable, Sendable {
        /// The sysfs zone ("thermal_zone0").
        public var zone: String
        /// Its type ("x86_pkg_temp", "cpu-thermal", "acpitz").
        public var type: String
        public var celsius: Double
        public init(zone: String, type: String, celsius: Double) {
            self.zone = zone
            self.type = type
            self.celsius = celsius
        }
    }
    /// One CPU's current frequency.
    public struct Frequency: Codable, Equatable, Sendable {
        public var cpu: Int
        public var mhz: Double
        public init(cpu: Int, mhz: Double) {
            self.cpu = cpu
            self.mhz = mhz
        }
    }

    /// Always "context".
    public var record: String = "context"
    public var version: Int = RunLogHeader.currentVersion
    /// CLOCK_MONOTONIC ns on the display's clock (virtual on the fake display).
    public var timeNs: Int64
    /// The CPU's temperature: the first zone whose type names the CPU package or SoC
    /// (see ``SystemProbe/cpuZonePreference``), else the first zone; nil without zones.
    public var cpuTemperatureC: Double?
    /// Every thermal zone.
    public var thermal: [Thermal]
    /// Every CPU with cpufreq, in CPU order.
    public var cpuFrequencyMHz: [Frequency]

    public init(timeNs: Int64, cpuTemperatureC: Double?, thermal: [Thermal], cpuFrequencyMHz: [Frequency]) {
        self.timeNs = timeNs
        self.cpuTemperatureC = cpuTemperatureC
        self.thermal = thermal
        self.cpuFrequencyMHz = cpuFrequencyMHz
    }

    /// The mean of the CPUs' frequencies (nil without cpufreq).
    public var meanFrequencyMHz: Double? {
        cpuFrequencyMHz.isEmpty ? nil : cpuFrequencyMHz.reduce(0) { $0 + $1.mhz } / Double(cpuFrequencyMHz.count)
    }
}

/// Reads the machine's context from procfs and sysfs under `root` ("/" on the machine; a
/// directory laid out the same way in tests): /proc/sys/kernel/{ostype,osrelease},
/// /proc/cpuinfo, /sys/class/thermal/thermal_zone*/{type,temp} (millidegrees Celsius) and
/// /sys/devices/system/cpu/cpu*/cpufreq/{scaling_cur_freq (kHz),scaling_governor}.
/// Anything missing is left out; nothing here throws.
public struct SystemProbe: Sendable {
    public var root: String

    public init(root: String = "/") { self.root = root }

    /// Zone types that name the CPU, best first.
    public static let cpuZonePreference = ["x86_pkg_temp", "cpu", "coretemp", "k10temp", "soc", "acpitz"]

    /// The header's system description; `driver` comes from the display.
    public func info(driver: String) -> SystemInfo {
        let ostype = read("proc/sys/kernel/ostype")
        let release = read("proc/sys/kernel/osrelease")
        let kernel = [ostype, release].compactMap { $0 }.joined(separator: " ")
        var model: String? = nil
        var cpus = 0
        if let info = read("proc/cpuinfo") {
            for line in info.split(separator: "\n") {
                let kv = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2 else { continue }
                if kv[0] == "processor" { cpus += 1 }
                if model == nil && ["model name", "Model", "Hardware", "cpu model"].contains(kv[0]) && !kv[1].isEmpty { model = kv[1] }
            }
        }
        var governors: [String] = []
        for cpu in numbered(in: "sys/devices/system/cpu", prefix: "cpu") {
            if let g = read("sys/devices/system/cpu/cpu\(cpu)/cpufreq/scaling_governor"), !governors.contains(g) { governors.append(g) }
        }
        return SystemInfo(kernel: kernel.isEmpty ? nil : kernel, driver: driver, cpuModel: model, cpus: cpus > 0 ? cpus : nil,
                          cpuGovernor: governors.isEmpty ? nil : governors.joined(separator: ","))
    }

    /// A sampler for the thermal zones and CPUs present now. The directories are listed once
    /// here: a run samples once a second from inside its pacing loop, where only the few small
    /// files themselves are read.
    public func sampler() -> ContextSampler {
        var zones: [ContextSampler.Zone] = []
        for n in numbered(in: "sys/class/thermal", prefix: "thermal_zone") {
            let dir = "sys/class/thermal/thermal_zone\(n)"
            guard FileManager.default.fileExists(atPath: path(dir + "/temp")) else { continue }
            zones.append(.init(zone: "thermal_zone\(n)", type: read(dir + "/type") ?? "", tempPath: path(dir + "/temp")))
        }
        var cpus: [(cpu: Int, path: String)] = []
        for cpu in numbered(in: "sys/devices/system/cpu", prefix: "cpu") {
            let p = path("sys/devices/system/cpu/cpu\(cpu)/cpufreq/scaling_cur_freq")
            if FileManager.default.fileExists(atPath: p) { cpus.append((cpu, p)) }
        }
        return ContextSampler(zones: zones, cpus: cpus)
    }

    /// Temperature and frequency now, stamped `timeNs` (lists the directories each time; a run
    /// uses ``sampler()``).
    public func sample(timeNs: Int64) -> ContextRecord { sampler().sample(timeNs: timeNs) }

    /// The N of every `prefix`N entry in `dir`, ascending.
    private func numbered(in dir: String, prefix: String) -> [Int] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path(dir))) ?? []
        return entries.compactMap { e in e.hasPrefix(prefix) ? Int(e.dropFirst(prefix.count)) : nil }.sorted()
    }

    private func path(_ relative: String) -> String { root.hasSuffix("/") ? root + relative : root + "/" + relative }

    /// A small file's contents without the trailing newline; nil when missing or empty.
    private func read(_ relative: String) -> String? {
        guard let d = FileManager.default.contents(atPath: path(relative)) else { return nil }
        let s = String(decoding: d, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return s.isEmpty ? nil : s
    }
}

/// Reads the thermal zones and CPU frequencies a ``SystemProbe`` found, with one open/read/close
/// per file and no directory listing: cheap enough for once a second inside a pacing loop.
public struct ContextSampler: Sendable {
    struct Zone: Sendable {
        var zone: String
        var type: String
        var tempPath: String
    }
    let zones: [Zone]
    let cpus: [(cpu: Int, path: String)]

    /// Temperature and frequency now, stamped `timeNs`.
    public func sample(timeNs: Int64) -> ContextRecord {
        var readings: [ContextRecord.Thermal] = []
        for z in zones {
            if let milli = Self.readInteger(z.tempPath) { readings.append(.init(zone: z.zone, type: z.type, celsius: Double(milli) / 1000)) }
        }
        var cpuTemp: Double? = nil
        for want in SystemProbe.cpuZonePreference where cpuTemp == nil {
            cpuTemp = readings.first { $0.type.lowercased().contains(want) }?.celsius
        }
        var freqs: [ContextRecord.Frequency] = []
        for c in cpus {
            if let khz = Self.readInteger(c.path) { freqs.append(.init(cpu: c.cpu, mhz: Double(khz) / 1000)) }
        }
        return ContextRecord(timeNs: timeNs, cpuTemperatureC: cpuTemp ?? readings.first?.celsius, thermal: readings, cpuFrequencyMHz: freqs)
    }

    /// The decimal integer at the start of a small file (sysfs values: "47500\n"), else nil.
    static func readInteger(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buf = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let n = withUnsafeMutableBytes(of: &buf) { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return withUnsafeBytes(of: &buf) { raw -> Int? in
            var value = 0, digits = 0, negative = false
            for i in 0..<n {
                let c = raw[i]
                if i == 0 && c == UInt8(ascii: "-") { negative = true; continue }
                guard c >= 0x30 && c <= 0x39 else { break }
                value = value &* 10 &+ Int(c &- 0x30)
                digits += 1
            }
            return digits > 0 ? (negative ? -value : value) : nil
        }
    }
}
