import SystemPackage

/// One line of a CRTC's CRC data file (debugfs `dri/N/crtc-M/crc/data`): the vblank it was
/// taken at and the CRC words the driver computed over what the CRTC scanned out.
///
/// The kernel writes each line as `0x%08x` (the frame counter, or `XXXXXXXXXX` when the driver
/// has none) followed by one ` 0x%08x` per CRC word, a newline and a NUL byte, one line per read.
public struct CRCLine: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The CRTC's vblank counter when the CRC was taken (the low 32 bits, the numbering of
    /// flip events), or nil when the driver reports no frame counter.
    public var frame: UInt32?
    /// The CRC words (one to ten; how many and what they mean is the driver's).
    public var values: [UInt32]

    public init(frame: UInt32?, values: [UInt32]) {
        self.frame = frame
        self.values = values
    }

    /// Parses one line as the kernel writes it (the trailing newline and NUL optional); nil when
    /// it is not one: a wrong token count, a token that is not `0x` and 8 hex digits, no CRC word.
    public init?(parsing text: Substring) {
        var text = text
        while text.last == "\0" { text = text.dropLast() }
        var tokens = text.split(separator: " ", omittingEmptySubsequences: true)
        if let last = tokens.last, last.hasSuffix("\n") {
            tokens[tokens.count - 1] = last.dropLast()
            if tokens[tokens.count - 1].isEmpty { tokens.removeLast() }
        }
        guard tokens.count >= 2, tokens.count <= 11 else { return nil }
        if tokens[0] == "XXXXXXXXXX" {
            frame = nil
        } else {
            guard let f = Self.word(tokens[0]) else { return nil }
            frame = f
        }
        var values: [UInt32] = []
        values.reserveCapacity(tokens.count - 1)
        for t in tokens.dropFirst() {
            guard let v = Self.word(t) else { return nil }
            values.append(v)
        }
        self.values = values
    }

    /// Parses one line, as the `Substring` initialiser does.
    public init?(parsing text: String) { self.init(parsing: text[...]) }

    /// `0x` followed by exactly 8 hex digits.
    static func word(_ t: Substring) -> UInt32? {
        let u = t.utf8
        guard u.count == 10, t.hasPrefix("0x") else { return nil }
        return UInt32(t.dropFirst(2), radix: 16)
    }

    /// The line as the kernel writes it, without the newline.
    public var description: String {
        var s = frame.map(Self.hex) ?? "XXXXXXXXXX"
        for v in values { s += " " + Self.hex(v) }
        return s
    }

    static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The longest line the kernel writes (10 CRC words: 10 + 11 × 10 bytes, the newline and
    /// a NUL); a read with a buffer shorter than the driver's line fails with EINVAL.
    public static let maximumLength = 122
}

/// Why a CRTC's CRC cannot be read.
public enum CRCError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The driver offers no CRC for this CRTC: its debugfs directory has no `crtc-M/crc`
    /// (bochs-drm, virtio_gpu). `path` is the directory looked for.
    case unsupported(driver: String, path: String)
    /// debugfs cannot be read: not mounted (ENOENT) or not permitted (EACCES, EPERM: debugfs
    /// needs root or CAP_SYS_ADMIN). `path` is the file or directory that failed.
    case noAccess(path: String, errno: Errno)
    /// A call on the CRC files failed (a source the driver refuses: EINVAL; the data file
    /// already open elsewhere: EBUSY; the CRTC off: EIO).
    case failed(DRMError)

    /// One line naming the driver or the path and the errno, and for no access what to do.
    public var description: String {
        switch self {
        case .unsupported(let driver, let path):
            return "not supported by \(driver) (no \(path))"
        case .noAccess(let path, let errno) where errno == .noSuchFileOrDirectory:
            return "no debugfs: \(path) does not exist (mount it: mount -t debugfs none /sys/kernel/debug)"
        case .noAccess(let path, let errno):
            return
                "no access to debugfs: \(path): \(errno.description) (\(DRMError.symbol(errno))): run as root (debugfs needs root or CAP_SYS_ADMIN)"
        case .failed(let e):
            return e.description
        }
    }
}

extension DRMDevice {
    /// The directory where debugfs mounts by default.
    public static let debugfsRoot = "/sys/kernel/debug"

    /// The card's debugfs directory, `root/dri/<minor>` (the minor number of the node, from
    /// fstat). Throws ``CRCError/noAccess(path:errno:)`` when `root/dri` cannot be read.
    public func debugfsDirectory(root: String = DRMDevice.debugfsRoot) throws(CRCError) -> String {
        let minor: UInt32
        do {
            minor = try retrying("fstat", path) { try sys.deviceMinor(fd) }
        } catch let e as DRMError {
            throw .failed(e)
        } catch {
            throw .failed(DRMError(call: "fstat", object: path, errno: .ioError))
        }
        let dri = root + "/dri"
        try Self.requireDirectory(sys, dri) { .noAccess(path: dri, errno: $0) }
        return dri + "/\(minor)"
    }

    /// stat(2) on `path`: returns when it is a directory; ENOENT (or not a directory) and any
    /// other errno become the error `make` builds.
    static func requireDirectory(_ sys: DRMSystem, _ path: String, _ make: (Errno) -> CRCError) throws(CRCError) {
        while true {
            do {
                guard try sys.isDirectory(path) else { throw make(.noSuchFileOrDirectory) }
                return
            } catch let e as Errno {
                if e == .interrupted { continue }
                throw make(e)
            } catch let e as CRCError {
                throw e
            } catch {
                throw make(.ioError)
            }
        }
    }
}

/// A running CRC capture on one CRTC: the source is written to `crc/control` and `crc/data` is
/// held open (O_NONBLOCK) until deinit, which stops the capture. Lines are read without
/// waiting, so a caller reads them beside its flip events.
///
/// Open it after the CRTC is on: the kernel refuses to start a capture on an inactive CRTC
/// (EIO). Reading needs debugfs: root or CAP_SYS_ADMIN.
public final class CRCCapture {
    /// The device the CRTC belongs to.
    public let device: DRMDevice
    /// The CRTC's index in the card's resources (debugfs names CRTCs by index).
    public let crtcIndex: Int
    /// The source written to the control file (`auto`: the driver's default).
    public let source: String
    /// The `crtc-M/crc` directory.
    public let directory: String
    let dataFD: Int32
    /// Lines read, in order, since the capture started.
    public private(set) var linesRead = 0

    /// Starts a capture of `source` on the CRTC at `crtcIndex` of `device`, under debugfs at `root`.
    ///
    /// Throws ``CRCError/noAccess(path:errno:)`` without debugfs (not mounted, not permitted),
    /// ``CRCError/unsupported(driver:path:)`` when the driver has no CRC for the CRTC, and
    /// ``CRCError/failed(_:)`` when the control write or the data open fails.
    public init(
        device: DRMDevice, crtcIndex: Int, source: String = "auto",
        root: String = DRMDevice.debugfsRoot
    ) throws(CRCError) {
        self.device = device
        self.crtcIndex = crtcIndex
        self.source = source
        let sys = device.sys
        let card = try device.debugfsDirectory(root: root)
        try DRMDevice.requireDirectory(sys, card) { .noAccess(path: card, errno: $0) }
        let dir = card + "/crtc-\(crtcIndex)/crc"
        directory = dir
        let driver = (try? device.version().name) ?? "this driver"
        try DRMDevice.requireDirectory(sys, dir) { e in
            e == .noSuchFileOrDirectory ? .unsupported(driver: driver, path: dir) : .noAccess(path: dir, errno: e)
        }
        let control = dir + "/control"
        let cfd = try Self.open(sys, control, writeOnly: true)
        defer { sys.closeFile(cfd) }
        do {
            let bytes = Array(source.utf8)
            let n = try retrying("write", control) { try sys.writeFile(cfd, bytes) }
            guard n == bytes.count else {
                throw CRCError.failed(DRMError(call: "write", object: control, errno: .ioError))
            }
        } catch let e as DRMError {
            throw .failed(e)
        } catch let e as CRCError {
            throw e
        } catch {
            throw .failed(DRMError(call: "write", object: control, errno: .ioError))
        }
        dataFD = try Self.open(sys, dir + "/data", writeOnly: false)
    }

    /// open(2) with the errno mapped: EACCES/EPERM are no access, the rest a failed call.
    static func open(_ sys: DRMSystem, _ path: String, writeOnly: Bool) throws(CRCError) -> Int32 {
        do {
            return try retrying("open", path) { try sys.openFile(path, writeOnly: writeOnly) }
        } catch let e as DRMError {
            if e.errno == .permissionDenied || e.errno == .notPermitted { throw .noAccess(path: path, errno: e.errno) }
            throw .failed(e)
        } catch {
            throw .failed(DRMError(call: "open", object: path, errno: .ioError))
        }
    }

    deinit { device.sys.closeFile(dataFD) }

    /// The data file's descriptor (readable when a line is waiting), for poll.
    public var fileDescriptor: Int32 { dataFD }

    /// Appends every line the kernel has ready now, without waiting; returns how many.
    /// A line that does not parse throws EIO naming the data file.
    @discardableResult
    public func readAvailable(into lines: inout [CRCLine]) throws(CRCError) -> Int {
        var count = 0
        let sys = device.sys
        let path = directory + "/data"
        var buffer = (
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0)
        )
        while true {
            let n: Int
            do {
                n = try withUnsafeMutableBytes(of: &buffer) { raw in
                    try retrying("read", path) { try sys.readFile(dataFD, into: raw) }
                }
            } catch let e as DRMError {
                if e.errno == .resourceTemporarilyUnavailable { return count }
                throw .failed(e)
            } catch {
                throw .failed(DRMError(call: "read", object: path, errno: .ioError))
            }
            if n == 0 { return count }
            // The kernel returns one line per read; a file that returns several is split.
            let text = withUnsafeBytes(of: &buffer) { raw in String(decoding: raw.prefix(n), as: UTF8.self) }
            for part in text.split(separator: "\n") where part.contains(where: { $0 != "\0" }) {
                guard let line = CRCLine(parsing: part) else {
                    throw .failed(DRMError(call: "read", object: path, errno: .ioError))
                }
                lines.append(line)
                linesRead += 1
                count += 1
            }
        }
    }
}
