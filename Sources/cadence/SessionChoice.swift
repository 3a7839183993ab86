import ArgumentParser
import DRM

/// `--session auto|seat|direct`: how `list`, `measure`, `run` and `validate` open a card.
///
/// - `direct` (the default): open(2) on the node; the user needs permission on it (root or the
///   `video` group) and becomes DRM master itself.
/// - `seat`: through a seat session (libseat: seatd, or logind; `LIBSEAT_BACKEND` picks one),
///   so that a user on the active VT needs neither; VT switches pause and resume the run. No
///   seat answering is an error (one line, exit 2).
/// - `auto`: a seat when one answers, direct access otherwise; one stderr line says which.
///
/// The seat is probed only when a card is opened (a run that falls back to the fake display
/// never asks), and at most once per command.
struct SessionOptions: ParsableArguments {
    @Option(help: "How to open the card: direct (open(2); root or the 'video' group), seat (libseat: seatd or logind), or auto (a seat when one answers, else direct; says which).")
    var session: String = "direct"

    /// The choice, validated (one-line error otherwise).
    func mode() throws -> SessionMode {
        guard let m = SessionMode(rawValue: session) else { throw CLIFailure("--session must be auto, seat or direct") }
        return m
    }

    /// Where `command`'s cards come from under this choice (see ``SessionMode/source(command:)``).
    func source(command: String) throws -> DeviceSource { try mode().source(command: command) }
}

/// The three ways to open a card (``SessionOptions``).
enum SessionMode: String, Sendable {
    case auto, seat, direct

    /// The device source: `direct` is `.live`; `seat` and `auto` open the seat on the first
    /// card opened (``SessionOpener``).
    func source(command: String, probe: @escaping () throws -> SeatSession = { try SeatSession.open() }) -> DeviceSource {
        if self == .direct { return .live }
        let opener = SessionOpener(mode: self, command: command, probe: probe)
        return DeviceSource(discover: { DRMDevice.discover() }, open: { try opener.open($0) },
                            openReadOnly: { try opener.open($0, readOnly: true) })
    }

    /// The notice `auto` prints when it picked a seat.
    static func seatNotice(_ s: SeatSession) -> String {
        "session: \(s.name) through \(s.backend) (libseat)"
    }

    /// The notice `auto` prints when no seat answered.
    static func directNotice(_ e: SeatError) -> String {
        "session: direct access (open(2)): \(e)"
    }
}

/// Opens cards through a seat probed once, on first use.
final class SessionOpener {
    let mode: SessionMode
    let command: String
    let probe: () throws -> SeatSession
    private var resolved: SeatSession??

    init(mode: SessionMode, command: String, probe: @escaping () throws -> SeatSession) {
        self.mode = mode
        self.command = command
        self.probe = probe
    }

    /// The seat (nil: direct access), probing it the first time; `seat` without one throws.
    func session() throws -> SeatSession? {
        if let r = resolved { return r }
        do {
            let s = try probe()
            if mode == .auto { StandardStreams.errorLine("cadence \(command): \(SessionMode.seatNotice(s))") }
            resolved = .some(s)
            return s
        } catch let e as SeatError {
            if mode == .seat { throw CLIFailure("--session seat: \(e)") }
            StandardStreams.errorLine("cadence \(command): \(SessionMode.directNotice(e))")
            resolved = .some(nil)
            return nil
        }
    }

    /// Through the seat (which opens read-write), else open(2), read-only with `readOnly`.
    func open(_ path: String, readOnly: Bool = false) throws -> DRMDevice {
        if let s = try session() { return try s.openDevice(path) }
        return try DRMDevice.open(path: path, readOnly: readOnly)
    }
}
