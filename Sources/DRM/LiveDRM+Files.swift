import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// ``LiveDRM``'s plain-file calls, for the CRC files in debugfs (CRC.swift).
extension LiveDRM {
    func deviceMinor(_ fd: Int32) throws -> UInt32 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Errno(rawValue: errno) }
        let dev = UInt64(st.st_rdev)
        // glibc's gnu_dev_minor.
        return UInt32(truncatingIfNeeded: (dev & 0xff) | ((dev >> 12) & 0xffff_ff00))
    }

    func isDirectory(_ path: String) throws -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { throw Errno(rawValue: errno) }
        return st.st_mode & S_IFMT == S_IFDIR
    }

    func openFile(_ path: String, writeOnly: Bool) throws -> Int32 {
        let fd = Glibc.open(path, (writeOnly ? O_WRONLY : O_RDONLY | O_NONBLOCK) | O_CLOEXEC)
        if fd < 0 { throw Errno(rawValue: errno) }
        return fd
    }

    func writeFile(_ fd: Int32, _ bytes: [UInt8]) throws -> Int {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n < 0 { throw Errno(rawValue: errno) }
        return n
    }

    func readFile(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if n < 0 { throw Errno(rawValue: errno) }
        return n
    }

    func closeFile(_ fd: Int32) { _ = Glibc.close(fd) }
}
