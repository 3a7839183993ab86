import SystemPackage

/// A failed DRM call: which call, on which object, and the errno the kernel returned.
public struct DRMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The libdrm function or ioctl that failed ("drmModeSetCrtc").
    public var call: String
    /// The object it was called on ("CRTC 41", "/dev/dri/card0"), if any.
    public var object: String?
    /// The errno it failed with.
    public var errno: Errno

    public init(call: String, object: String? = nil, errno: Errno) {
        self.call = call
        self.object = object
        self.errno = errno
    }

    /// One line: "drmModeSetCrtc(CRTC 41): Device or resource busy (EBUSY)".
    public var description: String {
        let target = object.map { "(\($0))" } ?? ""
        return "\(call)\(target): \(errno.description) (\(Self.symbol(errno)))"
    }

    /// The symbolic errno name, for the handful DRM returns.
    static func symbol(_ e: Errno) -> String {
        switch e.rawValue {
        case 1: return "EPERM"
        case 2: return "ENOENT"
        case 4: return "EINTR"
        case 5: return "EIO"
        case 9: return "EBADF"
        case 11: return "EAGAIN"
        case 12: return "ENOMEM"
        case 13: return "EACCES"
        case 16: return "EBUSY"
        case 19: return "ENODEV"
        case 22: return "EINVAL"
        case 25: return "ENOTTY"
        case 28: return "ENOSPC"
        case 61: return "ENODATA"
        case 95: return "EOPNOTSUPP"
        case 111: return "ECONNREFUSED"
        default: return "errno \(e.rawValue)"
        }
    }
}

extension Errno {
    /// EOPNOTSUPP (95 on Linux): the driver lacks the feature (e.g. vblank).
    public static var eopnotsupp: Errno { Errno(rawValue: 95) }
    /// ENODEV (19): the device is gone.
    public static var enodev: Errno { Errno(rawValue: 19) }
    /// ENOTTY (25): not a DRM device.
    public static var enotty: Errno { Errno(rawValue: 25) }
}

/// Calls `body`, retrying while it fails with EINTR, and wraps any other errno in a
/// ``DRMError`` naming `call` and `object`.
@inline(__always)
func retrying<T>(_ call: String, _ object: @autoclosure () -> String?, _ body: () throws -> T) throws -> T {
    while true {
        do {
            return try body()
        } catch let e as Errno {
            if e == .interrupted { continue }
            throw DRMError(call: call, object: object(), errno: e)
        }
    }
}
