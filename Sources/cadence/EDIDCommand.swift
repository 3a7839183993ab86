import ArgumentParser
import CadenceSession
import EDID

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
            let (bytes, origin): ([UInt8], String)
            switch (file, connector) {
            case (nil, nil): throw CLIFailure("give an EDID FILE or --connector NAME")
            case (.some, .some): throw CLIFailure("give either FILE or --connector, not both")
            case (.some(let path), nil): (bytes, origin) = (try EDIDInput.bytes(ofFile: path), path)
            case (nil, .some(let name)): (bytes, origin) = try EDIDInput.bytes(ofConnector: name, device: device)
            }
            let edid = try EDIDInput.decode(bytes, origin: origin)
            print(json ? EDIDReport.json(edid, origin: origin).rendered : EDIDReport.text(edid, origin: origin),
                  terminator: json ? "\n" : "")
        }
    }
}
