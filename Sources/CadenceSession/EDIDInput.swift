import DRM
import EDID
import Foundation
import KMSDisplay

/// Where `cadence edid` reads an EDID: a file (binary or hex text, `-` for standard input) or a
/// connector's EDID property, each failure one line for the user.
public enum EDIDInput {
    /// A failure to read or decode an EDID; its description is the one line for the user.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// The line.
        public var description: String

        /// A failure with the line `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The EDID bytes of the file at `path` (`-`: standard input): binary when they start with
    /// the EDID header, else hex text (edid-decode's hex dump, `xxd -p`). Throws ``Failure``
    /// when the file is missing, unreadable, empty or neither.
    public static func bytes(ofFile path: String) throws -> [UInt8] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileManager.default.fileExists(atPath: path) else { throw Failure("no such file: \(path)") }
            guard let d = FileManager.default.contents(atPath: path) else { throw Failure("cannot read \(path)") }
            data = d
        }
        return try bytes(data: [UInt8](data), path: path)
    }

    /// `bytes` read from `path`, as EDID bytes: as they are when they start with the EDID header,
    /// else decoded from hex text. Throws ``Failure`` when they are empty or neither.
    public static func bytes(data bytes: [UInt8], path: String) throws -> [UInt8] {
        if bytes.isEmpty {
            throw Failure("\(path): empty (a connector with nothing plugged in has an empty edid file)")
        }
        if bytes.count >= 8, bytes[0] == 0, bytes[1] == 0xFF { return bytes }
        if let hex = EDID.bytes(fromHex: String(decoding: bytes, as: UTF8.self)), !hex.isEmpty { return hex }
        throw Failure("\(path): neither a binary EDID nor hex text")
    }

    /// The EDID of the connector named `name` on the card `device` (nil: the first card), read
    /// read-only, and its origin ("/dev/dri/card0 HDMI-A-1"). Throws ``Failure`` when the card
    /// cannot be opened or read, has no such connector, or the connector has no EDID.
    public static func bytes(
        ofConnector name: String, device: String?, source: DeviceSource = .live
    ) throws -> (bytes: [UInt8], origin: String) {
        let path: String
        let dev: DRMDevice
        do {
            path = try OutputSelection.devicePath(device)
            dev = try OutputSelection.open(path, source: source, readOnly: true)
        } catch let e as OutputSelectionError {
            throw Failure(e.description)
        }
        func reading<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch let e as DRMError { throw Failure(OutputSelection.explain(e, path: path)) }
        }
        let res = try reading { try dev.resources() }
        let conns = try reading { try res.connectors.map { try dev.connector($0) } }
        guard let c = conns.first(where: { $0.name == name }) else {
            throw Failure("no connector \(name) on \(path) (connectors: \(conns.map(\.name).joined(separator: ", ")))")
        }
        guard let bytes = try reading({ try dev.edid(of: c.id) }), !bytes.isEmpty else {
            throw Failure("\(name) on \(path) has no EDID (\(c.status))")
        }
        return (bytes, "\(path) \(name)")
    }

    /// `bytes` decoded; throws ``Failure`` ("ORIGIN: what is wrong") when they are not an EDID.
    public static func decode(_ bytes: [UInt8], origin: String) throws -> EDID {
        do { return try EDID(bytes) } catch let e as EDIDError { throw Failure("\(origin): \(e.description)") }
    }
}
