import DRM
import SystemPackage
import Testing

/// The libseat wrapper without a seat daemon: libseat's `noop` backend (a seat that is always
/// enabled and opens nodes with open(2)) stands in for seatd; an unknown backend name is a seat
/// that does not answer. (The real seatd, with VT switches, is tools/vm/seat.sh.)
@Suite(.serialized) struct SeatTests {
    @Test func noopSeatOpensEnabledAndOpensNodes() throws {
        let seat = try SeatSession.open(backends: ["noop"], timeoutMilliseconds: 1000)
        #expect(seat.backend == "noop")
        #expect(seat.isActive)
        #expect(!seat.name.isEmpty)
        #expect(seat.fileDescriptor >= 0)
        #expect(seat.takeEvents().isEmpty, "the enable was consumed by open")
        let dev = try seat.openDevice("/dev/null")
        #expect(dev.path == "/dev/null" && dev.fd >= 0)
        #expect(dev.seat === seat)
        // Not a DRM node: the DRM layer says so, through the seat's descriptor.
        #expect(throws: DRMError(call: "drmGetVersion", object: "/dev/null", errno: .enotty)) { try dev.version() }
        #expect(!seat.disablePending(timeoutMilliseconds: 0))
    }

    @Test func aNodeTheSeatCannotOpenIsADRMErrorNamingTheCall() throws {
        let seat = try SeatSession.open(backends: ["noop"], timeoutMilliseconds: 1000)
        #expect(throws: DRMError(call: "libseat_open_device", object: "/nonexistent/card9", errno: .noSuchFileOrDirectory)) {
            _ = try seat.openDevice("/nonexistent/card9")
        }
    }

    @Test func aDeviceKeepsItsSeatOpen() throws {
        var dev: DRMDevice?
        do {
            let seat = try SeatSession.open(backends: ["noop"], timeoutMilliseconds: 1000)
            dev = try seat.openDevice("/dev/null")
        }
        // The session went out of scope; the device still holds it (and closes through it).
        #expect(dev?.seat?.isActive == true)
        dev = nil
    }

    @Test func noSeatAnsweringNamesEveryBackendTried() {
        do {
            _ = try SeatSession.open(backends: ["no-such-backend", "another"], timeoutMilliseconds: 100)
            Issue.record("opened a seat through a backend that does not exist")
        } catch let e as SeatError {
            #expect(e.failures.map(\.backend) == ["no-such-backend", "another"])
            let line = e.description
            #expect(line.hasPrefix("no seat answered (no-such-backend: "), "\(line)")
            #expect(line.contains("; another: ") && !line.contains("\n"), "\(line)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func anInactiveSeatIsSaidSo() {
        let e = SeatError(failures: [("seatd", Errno(rawValue: 16)), ("logind", Errno(rawValue: 2))])
        #expect(e.description == "no seat answered (seatd: the seat is not active (another session has the VT); logind: No such file or directory (ENOENT))")
    }
}
