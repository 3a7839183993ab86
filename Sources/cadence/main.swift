import ArgumentParser
import Foundation

/// `cadence`: drive a DRM/KMS display, pace frames against the real vblank, report drops.
struct Cadence: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cadence",
        abstract: "Measure a display's real cadence and report exactly which frames were dropped and why.",
        discussion: """
            Exit status (the same for every command):
              0  ok: done, measured, or every criterion passed
              1  a check or criterion failed, or the device was lost mid-run
              2  usage, input or device error (bad option, no such file, no DRM
                 device, no permission, another DRM master)

            Examples:
              cadence list                       devices, connectors, exact modes
              cadence edid --connector HDMI-A-1  the panel's identity from its EDID
              cadence measure --duration 10      real refresh from kernel timestamps
              cadence run                        pace a test scene (the fake display
                                                 only when there is no DRM card)
              cadence validate --max-dropped 0   pass/fail a display (exit 0/1)
              cadence report run.jsonl --output run.png   picture of a logged run
              cadence observe --duration 60      another program's flips (tracefs, root)
            """,
        subcommands: [
            ListCommand.self, MeasureCommand.self, RunCommand.self,
            ScenesCommand.self, RenderCommand.self, BenchCommand.self,
            ValidateCommand.self, ReportCommand.self, ReplayCommand.self,
            EDIDCommand.self, ObserveCommand.self,
        ]
    )
}

// A closed stdout pipe or a full log disk is an error a command reports, never a signal death.
StandardStreams.ignoreWriteSignals()

// Parse errors (an unknown option, a value that is not a number, a failed validation) are bad
// input: one line on stderr and exit status 2, not ArgumentParser's usage block. Help and
// errors from a command's run keep ArgumentParser's handling.
var command: ParsableCommand
do {
    command = try Cadence.parseAsRoot()
} catch {
    if Cadence.exitCode(for: error) == .success { Cadence.exit(withError: error) }
    let message = Cadence.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
    StandardStreams.errorLine("cadence: \(message) (see --help)")
    exit(2)
}
if let status = BenchCommand.checkKernelRequest(for: command) { exit(status) }
do {
    try command.run()
} catch {
    Cadence.exit(withError: error)
}
