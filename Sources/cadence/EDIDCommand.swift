import ArgumentParser
import DRM
import KMSDisplay
import EDID
import Foundation

/// `cadence edid`: decode a raw EDID from a file (binary or hex text) or a connector.
/// Exit 0 decoded (warnings included), 2 bad input (one line on stderr).
struct EDIDCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edid",
        abstract: "Decode an EDID: monitor name, serial, size, preferred mode with exact Hz, VRR range.",
        discussion: """
            FILE is a raw EDID (binary, as /sys/class/drm/card0-HDMI-A-1/edid) or hex text
            (edid-decode's hex dump, `xxd -p`); `-` reads standard input. --connector reads the
            connector's EDID property from the DRM device instead. Damaged EDIDs (bad checksum,
            truncated extension) are decoded as far as they go and the problems listed as warnings.
            Exit 0 decoded, 2 bad input or no EDID.

            Examples:
              cadence edid /sys/class/drm/card0-HDMI-A-1/edid
              cadence edid --connector HDMI-A-1 --json
              cadence edid monitor.hex
            """)

    @Argument(help: "A raw or hex EDID file, or - for standard input.")
    var file: String?
    @Option(help: "Read the EDID of this connector (e.g. HDMI-A-1) from the DRM device.")
    var connector: String?
    @Option(help: "DRM card node for --connector (default: the first /dev/dri/card*).")
    var device: String?
    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        try exitTwoOnError("edid") {
            let (bytes, origin) = try input()
            let edid: EDID
            do { edid = try EDID(bytes) } catch let e as EDIDError { throw CLIFailure("\(origin): \(e.description)") }
            if json {
                print(EDIDReport.json(edid, origin: origin).rendered)
            } else {
                print(EDIDReport.text(edid, origin: origin), terminator: "")
            }
        }
    }

    private func input() throws -> ([UInt8], String) {
        switch (file, connector) {
        case (nil, nil): throw CLIFailure("give an EDID FILE or --connector NAME")
        case (.some, .some): throw CLIFailure("give either FILE or --connector, not both")
        case (.some(let path), nil): return (try Self.read(path), path)
        case (nil, .some(let name)):
            let path = try selecting { try OutputSelection.devicePath(device) }
            let dev = try openDevice(path)
            let res = try describing(path) { try dev.resources() }
            let conns = try describing(path) { try res.connectors.map { try dev.connector($0) } }
            guard let c = conns.first(where: { $0.name == name }) else {
                throw CLIFailure("no connector \(name) on \(path) (connectors: \(conns.map(\.name).joined(separator: ", ")))")
            }
            guard let bytes = try describing(path, { try dev.edid(of: c.id) }), !bytes.isEmpty else {
                throw CLIFailure("\(name) on \(path) has no EDID (\(c.status))")
            }
            return (bytes, "\(path) \(name)")
        }
    }

    /// A file's EDID bytes: binary when it starts with the EDID header, else hex text.
    static func read(_ path: String) throws -> [UInt8] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileManager.default.fileExists(atPath: path) else { throw CLIFailure("no such file: \(path)") }
            guard let d = FileManager.default.contents(atPath: path) else { throw CLIFailure("cannot read \(path)") }
            data = d
        }
        let bytes = [UInt8](data)
        if bytes.isEmpty { throw CLIFailure("\(path): empty (a connector with nothing plugged in has an empty edid file)") }
        if bytes.count >= 8, bytes[0] == 0, bytes[1] == 0xFF { return bytes }
        if let hex = EDID.bytes(fromHex: String(decoding: bytes, as: UTF8.self)), !hex.isEmpty { return hex }
        throw CLIFailure("\(path): neither a binary EDID nor hex text")
    }
}
