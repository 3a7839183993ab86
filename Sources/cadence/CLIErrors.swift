import ArgumentParser
import CadenceCore
import Foundation

/// A user-facing failure: its description is the one line printed on stderr.
struct CLIFailure: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

/// Runs `body`; an `ExitCode` passes through, any other error becomes the single line
/// `cadence COMMAND: message` on stderr and exit status 2 (usage or device error).
func exitTwoOnError(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as ExitCode {
        throw e
    } catch {
        StandardStreams.errorLine("cadence \(command): \(String(describing: error))")
        throw ExitCode(2)
    }
}

extension RunConfiguration.Invalid {
    /// The line for the user: the option that set the value, then what is wrong with it
    /// ("--latency must be 1, 2 or 3"). A bad rate range already quotes the range it was given.
    var commandLineMessage: String {
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
