import Foundation

/// One open DRM file as the kernel's debugfs `clients` file lists it
/// (`/sys/kernel/debug/dri/N/clients`).
///
/// Debian's 6.1 kernel prints a header line and then, per open file,
///
///                  command   pid dev master a   uid      magic
///                  cadence   123   0   y    y     0          0
///
/// that is the process' `comm` right-aligned in 20 columns (it may contain spaces), the pid
/// that opened the file, the minor, whether the file is DRM master, whether it is
/// authenticated, the uid, and the legacy auth magic.
public struct DRMClient: Equatable, Sendable {
    /// The process' `comm` (at most 15 bytes; "<unknown>" when the process is gone).
    public var command: String
    /// The pid of the task that opened the file (the process' main thread for most programs).
    public var pid: Int32
    /// The DRM minor the file was opened on.
    public var minor: Int
    /// True when the file is the device's DRM master.
    public var master: Bool
    /// True when the file is authenticated.
    public var authenticated: Bool
    public var uid: UInt32
    public var magic: UInt32

    public init(command: String, pid: Int32, minor: Int, master: Bool, authenticated: Bool, uid: UInt32, magic: UInt32) {
        self.command = command
        self.pid = pid
        self.minor = minor
        self.master = master
        self.authenticated = authenticated
        self.uid = uid
        self.magic = magic
    }
}

/// Reads and parses the DRM debugfs `clients` files.
public enum DRMClients {
    /// The default debugfs DRM directory.
    public static let defaultRoot = "/sys/kernel/debug/dri"

    /// Parses the text of one `clients` file: the header and lines that do not have the seven
    /// columns are skipped. The last six whitespace-separated fields are the numbers and flags;
    /// everything before them (trimmed) is the command.
    public static func parse(_ text: String) -> [DRMClient] {
        var out: [DRMClient] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 7 else { continue }
            let tail = fields.suffix(6).map(String.init)
            guard let pid = Int32(tail[0]), let minor = Int(tail[1]),
                  let master = flag(tail[2]), let auth = flag(tail[3]),
                  let uid = UInt32(tail[4]), let magic = UInt32(tail[5]) else { continue }
            // The command: the line up to the pid field, without the padding.
            let commandFields = fields.dropLast(6)
            guard let first = commandFields.first, let last = commandFields.last else { continue }
            let command = String(line[first.startIndex..<last.endIndex])
            out.append(DRMClient(command: command, pid: pid, minor: minor, master: master, authenticated: auth, uid: uid, magic: magic))
        }
        return out
    }

    private static func flag(_ s: String) -> Bool? {
        switch s {
        case "y": return true
        case "n": return false
        default: return nil
        }
    }

    /// Every client of every DRM minor under `root` (`N/clients` for each entry N); empty when
    /// debugfs is not mounted or not readable (no root).
    public static func read(root: String = defaultRoot) -> [DRMClient] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root) else { return [] }
        var out: [DRMClient] = []
        for e in entries.sorted() where Int(e) != nil {
            guard let data = FileManager.default.contents(atPath: "\(root)/\(e)/clients") else { continue }
            out += parse(String(decoding: data, as: UTF8.self))
        }
        return out
    }

    /// The thread-group id of `pid` (from `/proc/PID/status`), nil when the task is gone.
    public static func threadGroup(of pid: Int32, proc: String = "/proc") -> Int32? {
        guard let data = FileManager.default.contents(atPath: "\(proc)/\(pid)/status") else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Tgid:") {
            return Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The client of `clients` that `pid` (a traced task) belongs to: the one opened by `pid`,
    /// else by its thread group `tgid` (the master file first when it has several); nil when
    /// none matches.
    public static func match(pid: Int32, tgid: Int32?, in clients: [DRMClient]) -> DRMClient? {
        func best(_ p: Int32) -> DRMClient? {
            let m = clients.filter { $0.pid == p }
            return m.first(where: \.master) ?? m.first
        }
        return best(pid) ?? tgid.flatMap(best)
    }
}
