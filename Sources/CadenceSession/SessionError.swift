/// A failure the user can act on (a file that cannot be read, no such profile, no seat): its
/// ``description`` is one line, meant to be shown as it is.
public struct SessionError: Error, CustomStringConvertible, Sendable {
    /// The one line.
    public var description: String

    /// The failure saying `message`.
    public init(_ message: String) { description = message }
}
