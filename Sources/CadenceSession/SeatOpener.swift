import DRM

/// The three ways to open a card.
///
/// - `direct`: open(2) on the node; the user needs permission on it (root or the `video`
///   group) and becomes DRM master itself.
/// - `seat`: through a seat session (libseat: seatd, or logind; `LIBSEAT_BACKEND` picks one),
///   so that a user on the active VT needs neither; VT switches pause and resume the run. No
///   seat answering is an error (the probe's `SeatError`).
/// - `auto`: a seat when one answers, direct access otherwise; one notice says which.
///
/// The seat is probed only when a card is opened, and at most once per source.
public enum SessionMode: String, Sendable {
    case auto, seat, direct

    /// The device source: `direct` is `.live`; `seat` and `auto` open the seat on the first
    /// card opened (``SeatOpener``). `notice` gets `auto`'s line saying which it picked; under
    /// `seat`, opening a card throws the probe's `SeatError` when no seat answered.
    public func source(
        notice: @escaping (String) -> Void, probe: @escaping () throws -> SeatSession = { try SeatSession.open() }
    ) -> DeviceSource {
        if self == .direct { return .live }
        let opener = SeatOpener(mode: self, probe: probe, notice: notice)
        return DeviceSource(
            discover: { DRMDevice.discover() }, open: { try opener.open($0) },
            openReadOnly: { try opener.open($0, readOnly: true) })
    }

    /// The notice `auto` gives when it picked a seat.
    public static func seatNotice(_ s: SeatSession) -> String {
        "session: \(s.name) through \(s.backend) (libseat)"
    }

    /// The notice `auto` gives when no seat answered.
    public static func directNotice(_ e: SeatError) -> String {
        "session: direct access (open(2)): \(e)"
    }
}

/// Opens cards through a seat probed once, on first use (``SessionMode/seat`` and
/// ``SessionMode/auto``).
public final class SeatOpener {
    /// `seat` or `auto` (`direct` never probes).
    public let mode: SessionMode
    /// Opens the seat session.
    public let probe: () throws -> SeatSession
    /// Gets `auto`'s line saying which way it opens cards.
    public let notice: (String) -> Void
    private var resolved: SeatSession??

    /// An opener that probes with `probe` on first use.
    public init(mode: SessionMode, probe: @escaping () throws -> SeatSession, notice: @escaping (String) -> Void) {
        self.mode = mode
        self.probe = probe
        self.notice = notice
    }

    /// The seat (nil: direct access), probing it the first time; `seat` without one rethrows
    /// the probe's `SeatError`.
    public func session() throws -> SeatSession? {
        if let r = resolved { return r }
        do {
            let s = try probe()
            if mode == .auto { notice(SessionMode.seatNotice(s)) }
            resolved = .some(s)
            return s
        } catch let e as SeatError {
            if mode == .seat { throw e }
            notice(SessionMode.directNotice(e))
            resolved = .some(nil)
            return nil
        }
    }

    /// Through the seat (which opens read-write), else open(2), read-only with `readOnly`.
    public func open(_ path: String, readOnly: Bool = false) throws -> DRMDevice {
        if let s = try session() { return try s.openDevice(path) }
        return try DRMDevice.open(path: path, readOnly: readOnly)
    }
}
