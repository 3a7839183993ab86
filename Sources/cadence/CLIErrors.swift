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
