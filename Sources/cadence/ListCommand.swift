import ArgumentParser
import CadenceSession
import DRM
import Foundation
import KMSDisplay

/// `cadence list`: devices, driver, caps, connectors with status, modes with exact Hz
/// (preferred marked), encoders, CRTCs and planes.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List DRM devices, connectors, modes, CRTCs and planes.",
        usage: """
            cadence list [--backend <backend>] [--device <device>] [--json]
                   [--session <session>] [--watch]
            """,
        discussion: """
            For every /dev/dri/card* (or --device): driver and version, capabilities,
            connectors by kernel name with status and EDID size, every mode with its
            exact refresh from the timing (* = preferred), encoders, CRTCs and planes.
            Does not need DRM master. When a connected connector offers a faster mode
            at the size it is driven at (or, when not driven, at its preferred size),
            a one-line warning on stderr says so ("stuck at 60").

            --watch prints every connector's status once, then one line per status
            change (time, card, connector, old→new, and when connected its preferred
            mode and the monitor's EDID identity) as the card's hotplug uevents come,
            until SIGINT or SIGTERM; with --json one JSON object per line.

            Exit status:
              0  listed (a node that fails among several is skipped with one line), or
                 watched until a stop signal
              2  usage or device error (no DRM device, no permission, not a DRM node)

            Examples:
              cadence list                        every card
              cadence list --device /dev/dri/card1
              cadence list --json                 one JSON object: {"devices": [...]}
              cadence list --backend fake-drm:amdgpu-vrr   a shipped fake DRM profile
              cadence list --watch --device /dev/dri/card0   connector plug/unplug
            """)

    @Option(name: .long, help: "kms (the /dev/dri cards; auto is the same) or fake-drm[:PROFILE] (a fake DRM device from a drm_info -j profile).")
    var backend: String = "auto"

    @Option(name: .long, help: "A DRM card node (default: every /dev/dri/card*).")
    var device: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    @Flag(name: .long, help: "Print connector status changes (hotplug) as they happen, until SIGINT.")
    var watch = false

    @OptionGroup var sessionOptions: SessionOptions

    func run() throws {
        try exitTwoOnError("list") { try execute() }
    }

    private func execute() throws {
        var source = try sessionOptions.source(command: "list")
        var profiles: [FakeDRMProfileFile] = []
        if BackendChoice.isFakeDRM(backend) {
            profiles = try FakeDRMProfileFile.loadAll(BackendChoice.profileSpec(backend))
            source = .fake(profiles.map { $0.makeDevice(wallClock: false, seed: 0) })
        } else if backend != "auto" && backend != "kms" {
            throw CLIFailure("--backend must be auto, kms or fake-drm[:PROFILE]")
        }
        if watch {
            let path = try refusing { try DeviceInventory.watchedNode(device: device, profiles: profiles) }
            return try watch(path: path, source: source)
        }
        let paths = try refusing { try DeviceInventory.nodes(device: device, profiles: profiles) }
        for profile in profiles where !json {
            print("fake DRM device (simulator) from profile \(profile.path): \(profile.description)")
        }
        var reports: [JSON] = []
        let listing = try selecting {
            try DeviceInventory.list(paths, source: source) { path, result in
                switch result {
                case .success(let report):
                    if json { reports.append(report.json) } else { print(report.text, terminator: "") }
                    for w in report.fasterModeWarnings { StandardStreams.errorLine("warning: \(path): " + w) }
                case .failure(let e):
                    StandardStreams.errorLine("skipping \(path): \(e.description)")
                }
            }
        }
        if json { print(DeviceInventory.listingJSON(reports, profiles: profiles.map(\.path))) }
        if let refusal = listing.refusal { throw failure(refusal) }
    }

    /// Runs `body`, wording a refusal of the listing.
    private func refusing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let r as DeviceInventory.Refusal {
            throw failure(r)
        }
    }

    /// The one line of a refusal of the listing, naming the options.
    private func failure(_ refusal: DeviceInventory.Refusal) -> CLIFailure {
        switch refusal {
        case .noDevice: return CLIFailure(OutputSelection.noDeviceMessage)
        case .noneListable(let nodes): return CLIFailure("no listable DRM device among \(nodes) nodes")
        case .watchNeedsRealCard:
            return CLIFailure("--watch needs a real card (--backend kms): a fake DRM device never changes")
        }
    }
}

// MARK: - Shared by list and measure

/// Opens `path` read-only (`list` and `edid --connector` only read: GETRESOURCES, GETCONNECTOR,
/// GETPROPBLOB), turning the usual failures into one clear line.
func openDevice(_ path: String, source: DeviceSource = .live) throws -> DRMDevice {
    try selecting { try OutputSelection.open(path, source: source, readOnly: true) }
}

/// Runs `body`, turning an ``OutputSelectionError`` into a ``CLIFailure``.
func selecting<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as OutputSelectionError {
        throw CLIFailure(e.description)
    }
}
