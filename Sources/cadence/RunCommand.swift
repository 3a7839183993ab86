import ArgumentParser
import CadenceCore
import CadenceMetrics
import CadenceReport
import CadenceSession
import DRM
import Foundation
import KMSDisplay
import Scenes

/// `cadence run`: drive the pacing core on a KMS display or the fake display and account for
/// every frame. Bad input: one line on stderr, exit 2. Device lost mid-run: summary, exit 1.
/// An output file that stops being written, or a closed stdout: the run goes on, exit 3.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Pace frames on a KMS or fake display and account for every drop.",
        discussion: """
            A display link produces frames at the rate chosen from --rate; each frame is
            presented at its target vblank, and the kernel's flip timestamps decide what
            was on time, late by how many refreshes, or discarded, and why (render-late,
            scheduler-late, flip-late, busy, device-lost, disconnected).

            --backend kms drives /dev/dri/card* as DRM master; fake is a simulator on
            virtual time; auto (the default) is kms, or the fake display when the machine
            has no DRM card at all (it says so in one line). A card that cannot be opened
            or mastered (no permission, another DRM master) is an error, not a fallback.
            fake-drm[:PROFILE] runs the KMS code over a fake DRM device playing a drm_info
            -j profile (a file, or a shipped name: vkms (default), bochs, virtio-gpu,
            amdgpu-vrr, two-crtc); virtual time unless --fake-clock wall. A list of
            profiles (fake-drm:two-crtc,vkms) makes one fake card each: card0, card1, ...

            --rate picks a divisor of the refresh (on 60 Hz: 60, 30, 20, 15, ...), or any
            rate inside a VRR range: --fake-vrr on the fake display; on kms and fake-drm
            --vrr auto (default) sets VRR_ENABLED when the connector is vrr_capable and
            --rate asks for a rate no divisor gives (below the panel's minimum each frame
            is shown for whole refreshes: LFC). --latency is the pipelining depth; KMS has 3 buffers,
            so it caps latency at 2 (and says so when 3 is asked for).

            --connector A --connector B (or --connector all) runs several outputs at
            once, each on its own CRTC at its own rate: a summary per output and a
            total; --log/--csv/--summary write one file per output (run.jsonl ->
            run.DP-1.jsonl); --inject-late DP-1=100:2 targets one; --mode
            DP-1=2560x1440@60 gives one output its own mode. card1-DP-1 is DP-1 on
            /dev/dri/card1, and all (without --device) is every card's. Each card's
            outputs are paced on a thread of their own; outputs on several cards are
            named cardN-NAME everywhere (run.card1-DP-1.jsonl).

            Exit status:
              0  the run completed, or was stopped with SIGINT/SIGTERM/SIGHUP
              1  the device was lost mid-run, or the output was unplugged (its connector
                 reported disconnected: endReason "disconnected: …")
              2  usage, input or device error (no permission, another DRM master, ...)
              3  done, but an output is incomplete (a --log/--csv/--summary file stopped
                 being written: full disk, size limit, removed; or stdout closed)
            A file that fails stops with one stderr line; the display keeps running and the
            lines written stay.

            Examples:
              cadence run                                  the bar scene for 5 s
              cadence run --rate 30:30:30 --duration 10    30 Hz on a 60 Hz display
              cadence run --scene bar --hud --log run.jsonl --csv run.csv
              cadence run --backend fake --frames 600 --inject-late 100:1,250:3 --json
              cadence run --backend fake --content-rate 24 --duration 10 --log run.jsonl
              cadence run --scene bar --hud --duration 5
              cadence run --scene solid --duration 5
              cadence run --backend fake --adapt --render-cost 100-199:20 --frames 400 --log adapt.jsonl
              cadence run --backend fake --min-duration 34 --frames 120
              cadence run --backend fake --fake-vrr 48:120 --rate 48:120:90 --frames 300
              cadence run --backend fake-drm:amdgpu-vrr --rate 0:144:90 --frames 300
              cadence run --backend fake-drm:two-crtc --connector all
              cadence run --connector all --mode Virtual-2=1024x768@144
              cadence run --duration 0 --log run.jsonl --log-max-size 10M --log-keep 5
                                                           until stopped, rotating the log
              cadence run --duration 3600 --metrics-port 9464   /metrics
            """)

    @Option(help: "Display: auto (kms; fake only when the machine has no DRM card), kms, fake or fake-drm[:PROFILE[,PROFILE…]] (one fake card per profile).")
    var backend: String = "auto"
    @Option(help: "DRM card node for --backend kms (default: the first /dev/dri/card*).")
    var device: String?
    @Option(name: .customLong("connector"), help: "Connector name for KMS, e.g. HDMI-A-1, or card1-HDMI-A-1 for one on /dev/dri/card1 (default: the first connected); repeat it, or give all (every connected one, on every card unless --device names one), to run several outputs at once.")
    var connectors: [String] = []
    /// The one connector asked for (nil: the first connected).
    var connector: String? { connectors.first }
    @Option(name: .customLong("mode"), help: "KMS mode WxH or WxH@HZ (default: preferred); with several outputs, NAME=WxH[@HZ] gives output NAME its own mode (repeat it).")
    var modeSpecs: [String] = []

    @Option(name: .customLong("fake-refresh"), parsing: .unconditional, help: "Fake display refresh in Hz (59.94, 60, 144…).")
    var fakeRefresh: Double = 60
    @Option(name: .customLong("fake-vrr"), help: "Fake display VRR range MIN:MAX in Hz (KMS: --vrr).")
    var fakeVRR: String?
    @Option(name: .customLong("fake-jitter-us"), parsing: .unconditional, help: "Fake vblank timestamp jitter, ± µs.")
    var fakeJitterUs: Double = 0
    @Option(name: .customLong("fake-drift-ppm"), parsing: .unconditional, help: "Fake clock drift in ppm.")
    var fakeDriftPPM: Double = 0
    @Option(name: .customLong("fake-clock"), help: "Fake clock: virtual (as fast as possible) or wall (real time).")
    var fakeClock: String = "virtual"
    @Option(name: .customLong("fake-session-pause"), help: "AT:FOR[,…] in seconds: the fake display's seat session is paused at AT for FOR (a VT switch away and back).")
    var fakeSessionPause: String?

    @Option(help: "Frame-rate range MIN:MAX:PREFERRED in Hz (0 = unconstrained).")
    var rate: String?
    @Option(help: "Variable refresh on kms/fake-drm: auto (default: when --rate asks for a rate no divisor of the refresh gives and the panel is vrr_capable), on, off.")
    var vrr: String?
    @Option(name: .customLong("min-duration"), parsing: .unconditional, help: "Present each frame no earlier than the previous one's actual presentation + MS − ε (ε: vblank timestamp jitter, 1 µs to 0.5% of a refresh).")
    var minDuration: Double?
    @Option(name: .customLong("content-rate"), parsing: .unconditional, help: "Present content frame n at the first vblank not before t0 + n/HZ (24 on 60 Hz: 3,2,3,2).")
    var contentRate: Double?
    @Option(parsing: .unconditional, help: "Frame latency (pipelining depth) 1–3; KMS caps it at 2.")
    var latency: Int = 1
    @Option(parsing: .unconditional, help: "Stop after N frames.")
    var frames: Int?
    @Option(parsing: .unconditional, help: "Stop after S seconds (default 5 when --frames is not given; 0 = until SIGINT/SIGTERM/SIGHUP).")
    var duration: Double?
    @Option(parsing: .unconditional, help: "Seed for the fake display's jitter.")
    var seed: UInt64 = 0
    @Option(
        help: """
            Write one JSON record per frame to FILE (JSON lines, format version 2; \
            FILE.zst: zstd-compressed, flushed at least once a second).
            """)
    var log: String?
    @Option(name: .customLong("inject-late"), help: "[CONNECTOR=]FRAME:K[,...]: that frame's rendering ends K-1/2 refreshes after its deadline (on CONNECTOR only, else on every output); repeat it, or name outputs in one list (DP-1=100:2,eDP-1=50:1).")
    var injectLate: [String] = []
    @Option(name: .customLong("render-cost"), help: "FROM-TO:MS[,…] (FROM-:MS to the end): those frames take at least MS to render.")
    var renderCost: String?
    @Flag(help: "Step the rate down (next rate the range allows) when frames keep missing, back up when renders leave headroom.")
    var adapt = false
    @Option(help: "Scene to draw (see `cadence scenes`), or solid (plain colours, no rendering cost).")
    var scene: String = "bar"
    @Flag(help: "Draw the performance HUD (fps, rates, drops, interval chart) over the scene.")
    var hud = false
    @Flag(help: "Print the summary as one JSON object.")
    var json = false
    @Option(help: "crc: check with the CRTC's CRC (debugfs, root) that the content changed exactly at each flip's vblank and nowhere else; writeback: capture chosen frames (--capture) with the writeback connector and compare each with Cadence's render; crc,writeback: both. Every frame then carries a frame-identity barcode in its top-left corner. Summary line: scanout.")
    var verify: String?
    @Option(
        help: """
            With --verify writeback: every:N (frames 0, N, 2N, …) or frames:LIST (e.g. 10,20,300); \
            with --verify crc,writeback also on-mismatch (every flip carries a writeback job into a \
            ring of capture buffers, read only for the frames the CRC flags, e.g. a stale frame); \
            each capture is written as a PNG beside --log (LOG-capture-000050.png; without --log, \
            capture-000050.png here).
            """)
    var capture: String?
    @Option(help: "stale-buffer:FRAME: frame FRAME shows the previous frame's content (a buffer flipped without being updated), to prove --verify crc sees it.")
    var fault: String?
    @OptionGroup var outputs: RunOutputOptions
    @OptionGroup var sessionOptions: SessionOptions

    func run() throws {
        try exitTwoOnError("run") { try execute() }
    }

    /// Everything up to the run itself fails with exit 2; the run ends with 0 or 1 (3: an output
    /// incomplete). One output or several, the library's report is printed.
    private func execute() throws {
        let report = RunReport(try paceOutputs(source: nil, purpose: .run, onOutput: { _ in }))
        print(json ? try report.json() : report.text())
        report.unpluggedLines.forEach(StandardStreams.errorLine)
        if report.displayFailed { throw ExitCode(1) }
        if let code = StandardStreams.incompleteOutputStatus(report.incompleteOutputs) { throw ExitCode(code) }
    }

    /// Runs to the end (or SIGINT/SIGTERM/SIGHUP) and returns the summary; outputs are complete and the
    /// display is closed (CRTC restored) when it returns. `validate` runs this too.
    func pace(source: DeviceSource? = nil, purpose: BackendChoice.Purpose = .run,
              onRun: ((PacingRun, SessionSinks) -> Void)? = nil) throws -> RunSummary {
        try paceOutputs(source: source, purpose: purpose) { onRun?($0.run, $0.sinks) }[0].summary
    }

    /// The pacing options as given (CadenceSession's `RunTimingOptions`).
    var timing: RunTimingOptions {
        RunTimingOptions(
            rate: rate, minDurationMs: minDuration, contentRate: contentRate, latency: latency, frames: frames,
            durationSeconds: duration, injectLate: injectLate, renderCost: renderCost, adapt: adapt)
    }

    /// The run's configuration (one line for a bad value, naming the option).
    func makeConfiguration() throws -> RunConfiguration {
        do {
            return try timing.configuration(severalOutputs: severalOutputs, connector: connector)
        } catch let e as RunConfiguration.Invalid {
            throw CLIFailure(e.commandLineMessage)
        }
    }
}
