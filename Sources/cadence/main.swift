import ArgumentParser

/// `cadence`: drive a DRM/KMS display, pace frames against the real vblank, report drops.
struct Cadence: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cadence",
        abstract: "Measure a display's real cadence and report exactly which frames were dropped and why.",
        discussion: """
            Examples:
              cadence list                      devices, connectors, modes with exact Hz
              cadence measure --duration 10     the panel's real refresh from kernel timestamps
              cadence run                       pace a test scene (fake display when no DRM device)
              cadence validate --max-dropped 0  pass/fail a display (exit 0/1)
              cadence report run.jsonl --output run.png   picture of a logged run
            """,
        subcommands: [
            ListCommand.self, MeasureCommand.self, RunCommand.self,
            ScenesCommand.self, RenderCommand.self, BenchCommand.self,
            ValidateCommand.self, ReportCommand.self, ReplayCommand.self,
        ]
    )
}

Cadence.main()
