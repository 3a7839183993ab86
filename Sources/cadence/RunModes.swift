/// `--mode` on `run` and `validate`: one mode for every output (`WxH[@HZ]`), and with several
/// outputs a mode per output (`NAME=WxH[@HZ]`, repeated), which wins over the common one.
extension RunCommand {
    /// The common mode (nil: each output's preferred one) and the per-output modes by connector
    /// name. Throws one line for a malformed `NAME=` spec or a mode given twice.
    func modeChoice() throws -> (all: String?, perOutput: [String: String]) {
        var all: String?
        var perOutput: [String: String] = [:]
        for spec in modeSpecs {
            guard let eq = spec.firstIndex(of: "=") else {
                if let first = all {
                    throw CLIFailure("--mode is given twice (\(first), \(spec)): give it once, or NAME=WxH[@HZ] once per output")
                }
                all = spec
                continue
            }
            let name = String(spec[..<eq]), mode = String(spec[spec.index(after: eq)...])
            guard !name.isEmpty, !mode.isEmpty else {
                throw CLIFailure("--mode \(spec): give NAME=WxH[@HZ] (e.g. DP-1=2560x1440@144)")
            }
            guard perOutput[name] == nil else { throw CLIFailure("--mode \(name)=…: given twice") }
            perOutput[name] = mode
        }
        return (all, perOutput)
    }

    /// The mode of a one-output run. `NAME=WxH[@HZ]` is accepted when NAME is the one
    /// `--connector` given (and no common mode is); otherwise it belongs to a several-output run.
    func singleOutputMode() throws -> String? {
        let (all, perOutput) = try modeChoice()
        guard let (name, mode) = perOutput.first else { return all }
        guard perOutput.count == 1, all == nil, let c = connector, c == name else {
            let drives = connector.map { "drives \($0)" } ?? "drives the first connected connector"
            throw CLIFailure("--mode \(name)=…: this run \(drives), not several outputs; give --mode WxH[@HZ], or --connector once per output")
        }
        return mode
    }
}
