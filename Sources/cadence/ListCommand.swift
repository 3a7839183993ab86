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
                    for w in report.fasterModeWarnings { printError("warning: \(path): " + w) }
                case .failure(let e):
                    printError("skipping \(path): \(e.description)")
                }
            }
        }
        if json {
            let sim: [(String, JSON)] = profiles.isEmpty ? []
                : [("backend", .string("fake-drm")), ("profile", .string(profiles.map(\.path).joined(separator: ",")))]
            print(JSON.object(sim + [("devices", .array(reports))]).rendered)
        }
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

/// Everything `list` shows about one device: CadenceSession's `DeviceInventory`, with its text
/// and JSON.
extension DeviceInventory {
    static func flagText(_ m: ModeInfo) -> String {
        var f: [String] = []
        if m.flags.contains(.phsync) { f.append("+hsync") }
        if m.flags.contains(.nhsync) { f.append("-hsync") }
        if m.flags.contains(.pvsync) { f.append("+vsync") }
        if m.flags.contains(.nvsync) { f.append("-vsync") }
        if m.flags.contains(.interlace) { f.append("interlace") }
        if m.flags.contains(.doublescan) { f.append("doublescan") }
        if m.vscan > 1 { f.append("vscan \(m.vscan)") }
        return f.joined(separator: " ")
    }

    static func hex(_ v: UInt32) -> String { "0x" + String(v, radix: 16) }

    var text: String {
        var s = "\(path): driver \(version.name) \(version.versionString)"
        if !version.description.isEmpty { s += " (\(version.description))" }
        s += "\n  caps:"
        for (cap, v) in caps { s += " \(cap)=\(v.map(String.init) ?? "?")" }
        s += "\n  client caps: universal planes \(universalPlanes ? "yes" : "no"), atomic \(atomic ? "yes" : "no")\n"
        for (i, (c, edid, props)) in connectors.enumerated() {
            s += "  connector \(c.name) (id \(c.id.rawValue)): \(c.status)"
            if c.status == .connected { s += ", \(c.widthMM)x\(c.heightMM) mm, EDID \(edid.map { "\($0) bytes" } ?? "none")" }
            s += "\n"
            if c.status == .connected { for l in identities[i].lines(indent: "    ") { s += l + "\n" } }
            let shown = props.filter { !$0.info.isBlob }
            if !shown.isEmpty {
                s += "    properties: " + shown.map { "\($0.info.name)=\($0.displayValue)" }.joined(separator: " ") + "\n"
            }
            for m in c.modes {
                s += "    \(m.isPreferred ? "*" : " ") \(m.description) Hz  clock \(m.clock) kHz"
                s += "  h \(m.hdisplay) \(m.hsyncStart) \(m.hsyncEnd) \(m.htotal)"
                s += "  v \(m.vdisplay) \(m.vsyncStart) \(m.vsyncEnd) \(m.vtotal)"
                let flags = Self.flagText(m)
                if !flags.isEmpty { s += "  \(flags)" }
                s += "\n"
            }
        }
        for e in encoders {
            s += "  encoder \(e.id.rawValue): CRTC \(e.crtcID.rawValue), possible CRTCs \(Self.hex(e.possibleCRTCs))\n"
        }
        for c in crtcs {
            s += "  CRTC \(c.id.rawValue): "
            s += c.mode.map { "\($0.description) Hz, framebuffer \(c.framebufferID.rawValue)" } ?? "off"
            s += "\n"
        }
        s += scanoutText
        for (p, kind) in planes {
            s += "  plane \(p.id.rawValue): \(kind), CRTC \(p.crtcID.rawValue), possible CRTCs \(Self.hex(p.possibleCRTCs)), "
            s += "formats \(p.formats.map(\.description).joined(separator: " "))\n"
        }
        return s
    }

    static func modeJSON(_ m: ModeInfo) -> JSON {
        .object([
            ("name", .string(m.name)), ("width", .int(Int(m.hdisplay))), ("height", .int(Int(m.vdisplay))),
            ("refreshHz", .number(m.refreshHz, decimals: 4)), ("preferred", .bool(m.isPreferred)),
            ("clockKHz", .int(Int(m.clock))),
            ("htotal", .int(Int(m.htotal))), ("vtotal", .int(Int(m.vtotal))),
            ("interlaced", .bool(m.flags.contains(.interlace))), ("doublescan", .bool(m.flags.contains(.doublescan))),
            ("vscan", .int(Int(m.vscan))), ("flags", .string(flagText(m))),
        ])
    }

    var json: JSON {
        .object([
            ("path", .string(path)),
            ("driver", .string(version.name)), ("driverVersion", .string(version.versionString)),
            ("driverDescription", .string(version.description)),
            ("caps", .object(caps.map { ($0.0.description, $0.1.map { .int(Int($0)) } ?? .null) })),
            ("universalPlanes", .bool(universalPlanes)), ("atomic", .bool(atomic)),
            ("connectors", .array(connectors.indices.map { i in
                let (c, edid, props) = connectors[i]
                return .object([
                    ("name", .string(c.name)), ("id", .int(Int(c.id.rawValue))), ("status", .string(c.status.description)),
                    ("widthMM", .int(c.widthMM)), ("heightMM", .int(c.heightMM)),
                    ("edidBytes", edid.map { .int($0) } ?? .null), ("identity", identities[i].json),
                    ("properties", .object(props.map { p in
                        (p.info.name, p.info.enumName(p.value).map(JSON.string) ?? .int(Int(truncatingIfNeeded: p.value)))
                    })),
                    ("modes", .array(c.modes.map(Self.modeJSON))),
                ])
            })),
            ("encoders", .array(encoders.map { e in
                .object([("id", .int(Int(e.id.rawValue))), ("crtc", .int(Int(e.crtcID.rawValue))),
                         ("possibleCrtcs", .int(Int(e.possibleCRTCs)))])
            })),
            ("crtcs", .array(crtcs.indices.map { i in
                let c = crtcs[i]
                return .object([("id", .int(Int(c.id.rawValue))), ("framebuffer", .int(Int(c.framebufferID.rawValue))),
                                ("mode", c.mode.map(Self.modeJSON) ?? .null)] + crcJSON(i))
            })),
            ("writebackConnectors", writebackJSON),
            ("planes", .array(planes.map { p, kind in
                .object([("id", .int(Int(p.id.rawValue))), ("type", .string(kind.description)),
                         ("crtc", .int(Int(p.crtcID.rawValue))), ("possibleCrtcs", .int(Int(p.possibleCRTCs))),
                         ("formats", .array(p.formats.map { .string($0.description) }))])
            })),
        ])
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

/// Runs `body`, turning DRM errors into one clear line that names the device (and the mode
/// whose buffers were being allocated, if any).
func describing<T>(_ path: String, mode: ModeInfo? = nil, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as DRMError {
        if let mode, !e.call.hasPrefix("gbm_") { throw CLIFailure("cannot allocate \(mode.hdisplay)x\(mode.vdisplay) scanout buffers on \(path): \(e)") }
        throw CLIFailure(OutputSelection.explain(e, path: path))
    }
}

/// A JSON value with ordered object keys, rendered compactly.
enum JSON {
    case null
    case bool(Bool)
    case int(Int)
    case number(Double, decimals: Int)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])
    /// A value encoded by JSONEncoder (sorted keys), rendered as it is.
    case raw(String)

    /// `value` as JSONEncoder writes it (sorted keys); null when it cannot be encoded.
    static func encoded(_ value: some Encodable) -> JSON {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        guard let d = try? e.encode(value) else { return .null }
        return .raw(String(decoding: d, as: UTF8.self))
    }

    var rendered: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .number(let d, let decimals):
            guard d.isFinite else { return "null" }
            var scale = 1.0
            for _ in 0..<decimals { scale *= 10 }
            let r = (d * scale).rounded() / scale
            if r == r.rounded(), abs(r) < 1e15 { return String(Int(r)) }
            return "\(r)"
        case .string(let s): return JSON.quote(s)
        case .array(let a): return "[" + a.map(\.rendered).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.map { JSON.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        case .raw(let text): return text
        }
    }

    static func quote(_ s: String) -> String { s.jsonQuoted }
}
