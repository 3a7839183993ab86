import CadenceCore
import CadenceReport

extension RunPlanning {
    /// The scanout checks `--verify` (crc, writeback, or crc,writeback) asks for, with
    /// `--capture`'s schedule for writeback (every:N, frames:LIST, or on-mismatch with both
    /// checks), checked with `--fault` (which needs crc). Throws one line (`RunSpec.Invalid`).
    public static func scanoutChecks(
        verify: String?, capture: String?, fault: String?
    ) throws -> (
        crc: Bool, writeback: CaptureSchedule?
    ) {
        typealias Invalid = RunSpec.Invalid
        let onMismatch = capture == "on-mismatch"
        let onMismatchRefusal = Invalid(
            "--capture on-mismatch needs --verify crc,writeback (the CRC flags the frames whose capture is read)")
        let faultRefusal = Invalid("--fault needs --verify crc (without it nothing can see the fault)")
        guard let v = verify else {
            if onMismatch { throw onMismatchRefusal }
            if fault != nil { throw faultRefusal }
            if capture != nil { throw Invalid("--capture needs --verify writeback") }
            return (false, nil)
        }
        let parts = v.split(separator: ",").map(String.init)
        let known = parts.allSatisfy { $0 == "crc" || $0 == "writeback" }
        guard !parts.isEmpty, known, Set(parts).count == parts.count else {
            throw Invalid("--verify '\(v)': the checks are crc, writeback, or crc,writeback")
        }
        let crc = parts.contains("crc")
        let writeback = parts.contains("writeback")
        if fault != nil && !crc { throw faultRefusal }
        if onMismatch && !(crc && writeback) { throw onMismatchRefusal }
        guard writeback else {
            if capture != nil { throw Invalid("--capture needs --verify writeback") }
            return (crc, nil)
        }
        guard let c = capture else { throw Invalid("--verify writeback needs --capture every:N or frames:LIST") }
        do {
            return (crc, try CaptureSchedule(parsing: c))
        } catch {
            throw Invalid(
                "--capture '\(c)' must be every:N (N ≥ 1), frames:LIST (frame indexes ≥ 0, comma-separated) or on-mismatch"
            )
        }
    }

    /// The frame of `--fault stale-buffer:FRAME` (nil: no fault); one line (`RunSpec.Invalid`)
    /// for anything else.
    public static func staleBufferFault(_ fault: String?) throws -> Int? {
        guard let f = fault else { return nil }
        let p = f.split(separator: ":", omittingEmptySubsequences: false)
        guard p.count == 2, p[0] == "stale-buffer", let n = Int(p[1]), n >= 1 else {
            throw RunSpec.Invalid("--fault '\(f)' must be stale-buffer:FRAME with FRAME ≥ 1")
        }
        return n
    }

    /// `--mode` as given (`specs`): the common mode `WxH[@HZ]` (nil: each output's preferred
    /// one) and the per-output modes `NAME=WxH[@HZ]` by connector name, which win over it.
    /// One line (`RunSpec.Invalid`) for a malformed `NAME=` spec or a mode given twice.
    public static func modeChoice(_ specs: [String]) throws -> (all: String?, perOutput: [String: String]) {
        var all: String?
        var perOutput: [String: String] = [:]
        for spec in specs {
            guard let eq = spec.firstIndex(of: "=") else {
                if let first = all {
                    throw RunSpec.Invalid(
                        "--mode is given twice (\(first), \(spec)): give it once, or NAME=WxH[@HZ] once per output")
                }
                all = spec
                continue
            }
            let name = String(spec[..<eq])
            let mode = String(spec[spec.index(after: eq)...])
            guard !name.isEmpty, !mode.isEmpty else {
                throw RunSpec.Invalid("--mode \(spec): give NAME=WxH[@HZ] (e.g. DP-1=2560x1440@144)")
            }
            guard perOutput[name] == nil else { throw RunSpec.Invalid("--mode \(name)=…: given twice") }
            perOutput[name] = mode
        }
        return (all, perOutput)
    }

    /// The mode of a one-output run driving `connector` (nil: the first connected) from `--mode`
    /// as given (`specs`). `NAME=WxH[@HZ]` is accepted when NAME is `connector` (and no common
    /// mode is given); otherwise it belongs to a several-output run (one line, `RunSpec.Invalid`).
    public static func singleOutputMode(_ specs: [String], connector: String?) throws -> String? {
        let (all, perOutput) = try modeChoice(specs)
        guard let (name, mode) = perOutput.first else { return all }
        guard perOutput.count == 1, all == nil, let c = connector, c == name else {
            let drives = connector.map { "drives \($0)" } ?? "drives the first connected connector"
            throw RunSpec.Invalid(
                "--mode \(name)=…: this run \(drives), not several outputs; give --mode WxH[@HZ], or --connector once per output"
            )
        }
        return mode
    }

    /// The line refusing what several outputs cannot do yet (docs/several-outputs.md says
    /// why): `--metrics-port`/`--metrics-textfile` (`metrics`), `--verify` or `--capture`
    /// (`verify`), `--fault` (`fault`), then `--backend fake` (`backend`); nil when none is
    /// given.
    public static func severalOutputsRefusal(metrics: Bool, verify: Bool, fault: Bool, backend: String) -> String? {
        var used: [String] = []
        if metrics { used.append("--metrics-port/--metrics-textfile") }
        if verify { used.append("--verify") }
        if fault { used.append("--fault") }
        if !used.isEmpty {
            return
                "\(used.joined(separator: ", ")) \(used.count == 1 ? "is" : "are") not supported with several outputs yet: run one --connector at a time"
        }
        return backend == "fake" ? refusalLine(.severalOutputsNeedKMS) : nil
    }
}

extension RunConfiguration.Invalid {
    /// The line for the user: the option that set the value, then what is wrong with it
    /// ("--latency must be 1, 2 or 3"). A bad rate range already quotes the range it was given.
    public var commandLineMessage: String {
        let option: String
        switch setting {
        case .range: return description
        case .minimumDuration: option = "--min-duration"
        case .contentRate: option = "--content-rate"
        case .latency: option = "--latency"
        case .frames: option = "--frames"
        case .duration: option = "--duration"
        case .minimumDurationAndContentRate: option = "--min-duration and --content-rate"
        case .injectLate: option = "--inject-late"
        case .renderCost: option = "--render-cost"
        }
        return "\(option) \(problem)"
    }
}
