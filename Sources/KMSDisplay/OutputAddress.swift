import DRM

/// A connector as a user names it: bare (`HDMI-A-1`, on the card the run uses) or on its card
/// (`card1-HDMI-A-1`, the name `/sys/class/drm` gives it), so that outputs on several cards (a
/// laptop panel and a USB dock, two GPUs) can be named in one run. Linux numbers connectors of
/// one type across all cards (vkms' `Virtual-1` and virtio-gpu's `Virtual-2`), but drivers that
/// name their own connectors, or two kernels' worth of profiles, can repeat a name.
///
/// No DRM connector type name starts with "card" (they are VGA, DVI-I, LVDS, DP, HDMI-A, eDP,
/// Virtual, DSI, …), so `cardN-` is never part of a bare name.
public struct OutputAddress: Hashable, Sendable, CustomStringConvertible {
    /// The card's node name ("card1"), nil for a bare name.
    public var card: String?
    /// The connector's name on its card ("HDMI-A-1").
    public var connector: String

    /// Reads `cardN-NAME` (N decimal digits, NAME not empty) as a connector on card N; anything
    /// else is a bare connector name.
    public init(_ text: String) {
        if text.hasPrefix("card"), let dash = text.firstIndex(of: "-") {
            let digits = text[text.index(text.startIndex, offsetBy: 4)..<dash]
            let rest = text[text.index(after: dash)...]
            if !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), !rest.isEmpty {
                card = "card" + digits
                connector = String(rest)
                return
            }
        }
        card = nil
        connector = text
    }

    /// A connector on a card node: `card` is the node's path or name ("/dev/dri/card1" or "card1").
    public init(card: String, connector: String) {
        self.card = OutputAddress.cardName(ofNode: card)
        self.connector = connector
    }

    /// The card's node path ("/dev/dri/card1"), nil for a bare name.
    public var devicePath: String? { card.map { "/dev/dri/" + $0 } }

    /// `card1-HDMI-A-1`, or the bare name.
    public var description: String { card.map { "\($0)-\(connector)" } ?? connector }

    /// The node name of a card path: "/dev/dri/card1" → "card1".
    public static func cardName(ofNode path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
