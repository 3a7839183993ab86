import ArgumentParser
import CadenceSession
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

extension SessionMode {
    /// `command`'s device source (`SessionMode.source(notice:probe:)`): `auto`'s notice is one
    /// stderr line "cadence COMMAND: session: …"; `seat` without a seat is one line naming
    /// `--session seat`.
    func source(command: String, probe: @escaping () throws -> SeatSession = { try SeatSession.open() }) -> DeviceSource {
        let source = source(notice: { StandardStreams.errorLine("cadence \(command): " + $0) }, probe: probe)
        func seatRequired(_ open: @escaping (String) throws -> DRMDevice) -> (String) throws -> DRMDevice {
            { path in
                do { return try open(path) } catch let e as SeatError { throw CLIFailure("--session seat: \(e)") }
            }
        }
        return DeviceSource(discover: source.discover, open: seatRequired(source.open),
                            openReadOnly: seatRequired(source.openReadOnly))
    }
}
