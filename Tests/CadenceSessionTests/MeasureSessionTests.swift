import CadenceCore
import CadenceSession
import DRM
import KMSDisplay
import Testing

/// ``MeasureSession``: one output and several measured through the same plan on fake DRM cards
/// (virtual time), the VRR sweep, and the refusals typed.
@Suite(.serialized) struct MeasureSessionTests {
    /// Opens and runs `plan`; the notices of both, in order.
    func measure(_ plan: MeasurePlan) throws -> (MeasureSession.Outcome, [MeasureSession.Notice]) {
        let notices = Notices()
        let session = try MeasureSession.open(plan, notice: { notices.all.append($0) })
        let outcome = try session.run(notice: { notices.all.append($0) })
        return (outcome, notices.all)
    }

    func refresh(_ outcome: MeasureSession.Outcome) throws -> [MeasureResult] {
        guard case .refresh(let results) = outcome else {
            Issue.record("expected the fixed refresh measured, got \(outcome)")
            return []
        }
        return results
    }

    @Test func oneOutputIsAGroupOfOne() throws {
        let plan = MeasurePlan(backend: .fakeDRM(profiles: nil), durationSeconds: 0.5)
        let (outcome, notices) = try measure(plan)
        let results = try refresh(outcome)
        #expect(results.count == 1)
        let r = try #require(results.first)
        #expect(r.name == nil && r.device == "/dev/dri/card0" && r.simulator != nil)
        #expect(r.warmupFlips == MeasurePlan.defaultWarmupFlips && r.durationSeconds == 0.5)
        // Half a second of flips at every vblank of a 60 Hz mode, none missed, every check passed.
        #expect((29...31).contains(r.measurement.flips), "\(r.measurement.flips)")
        #expect(r.recording.vblank == .hardware && r.measurement.missedVBlanks == 0)
        let hz = try #require(r.measurement.measuredRefreshHz)
        #expect(abs(hz - r.selection.mode.refreshHz) < 0.01, "\(hz)")
        #expect(r.failures.isEmpty && r.recording.scanout == nil && !r.recording.stopped)
        // The simulator is said once, first.
        guard case .simulator = notices.first else {
            Issue.record("\(notices)")
            return
        }
        #expect(notices.count == 1)
    }

    @Test func severalOutputsAreMeasuredEachAtItsOwnRate() throws {
        let plan = MeasurePlan(
            backend: .fakeDRM(profiles: "two-crtc"), outputs: .several(connectors: ["all"], mode: nil),
            durationSeconds: 1)
        let results = try refresh(try measure(plan).0)
        #expect(results.map { $0.name?.name } == ["eDP-1", "DP-1"])
        #expect(results.allSatisfy { $0.name?.card == nil && $0.failures.isEmpty })
        let hz = results.compactMap { $0.measurement.measuredRefreshHz }
        #expect(hz.count == 2 && abs(hz[0] - 60) < 0.001 && abs(hz[1] - 144) < 0.001, "\(hz)")
        let flips = results.map(\.measurement.flips)
        #expect((59...61).contains(flips[0]) && (143...145).contains(flips[1]), "\(flips)")
    }

    @Test func outputsOnTwoCardsAreNamedWithTheirCardInTheOrderNamed() throws {
        let plan = MeasurePlan(
            backend: .fakeDRM(profiles: "two-crtc,vkms"),
            outputs: .several(connectors: ["card1-Virtual-1", "card0-DP-1"], mode: nil), durationSeconds: 0.5)
        let results = try refresh(try measure(plan).0)
        #expect(results.map { $0.name?.name } == ["card1-Virtual-1", "card0-DP-1"])
        #expect(results.map { $0.name?.card } == ["/dev/dri/card1", "/dev/dri/card0"])
        #expect(results.map(\.device) == ["/dev/dri/card1", "/dev/dri/card0"])
        #expect(results.map { $0.selection.connector.name } == ["Virtual-1", "DP-1"])
    }

    @Test func theVRRSweepCoversThePanelsRange() throws {
        var plan = MeasurePlan(backend: .fakeDRM(profiles: "amdgpu-vrr"), durationSeconds: 2)
        plan.vrr = .on
        guard case .vrrSweep(let sweep) = try measure(plan).0 else {
            Issue.record("expected a VRR sweep")
            return
        }
        #expect(sweep.range == 48...144)
        #expect(sweep.steps.count == 10 && sweep.steps.first?.requestedHz == 36 && sweep.steps.last?.requestedHz == 144)
        #expect(sweep.steps.first?.belowRange == true && sweep.missed.isEmpty && !sweep.stopped)
    }

    @Test func vrrAutoWithoutVRRMeasuresTheFixedRefreshAndSaysSo() throws {
        var plan = MeasurePlan(backend: .fakeDRM(profiles: nil), durationSeconds: 0.2)
        plan.vrr = .auto
        let (outcome, notices) = try measure(plan)
        #expect(try refresh(outcome).count == 1)
        #expect(notices.contains { if case .vrrUnavailable = $0 { true } else { false } }, "\(notices)")
        plan.vrr = .on
        #expect {
            _ = try MeasureSession.open(plan, notice: { _ in })
        } throws: { e in
            if case .vrrUnavailable(let why) = e as? MeasureSession.Refusal { return why.hasPrefix("VRR unavailable") }
            return false
        }
    }

    @Test func refusalsAreTyped() throws {
        func refusal(_ plan: MeasurePlan) -> MeasureSession.Refusal? {
            do {
                _ = try MeasureSession.open(plan, notice: { _ in })
                return nil
            } catch {
                return error as? MeasureSession.Refusal
            }
        }
        let several = MeasurePlan.Outputs.several(connectors: ["all"], mode: nil)
        var p = MeasurePlan(backend: .fake)
        guard case .needsKMS = refusal(p) else { Issue.record("fake display"); return }
        p = MeasurePlan(backend: .fakeDRM(profiles: nil), durationSeconds: 0)
        guard case .invalidDuration(0) = refusal(p) else { Issue.record("duration 0"); return }
        p = MeasurePlan(backend: .fakeDRM(profiles: "two-crtc"), outputs: several)
        p.crc = true
        guard case .checksNeedOneOutput = refusal(p) else { Issue.record("crc, several"); return }
        p.crc = false
        p.vrr = .on
        guard case .vrrNeedsOneOutput = refusal(p) else { Issue.record("vrr, several"); return }
        p = MeasurePlan(backend: .fakeDRM(profiles: "amdgpu-vrr"))
        p.crc = true
        p.vrr = .auto
        guard case .crcNeedsFixedRefresh = refusal(p) else { Issue.record("crc with vrr"); return }
    }

    @Test func aWrongConnectorIsTheSelectionsOneLine() throws {
        let p = MeasurePlan(
            backend: .fakeDRM(profiles: "two-crtc"), device: "/dev/dri/card0",
            outputs: .one(connector: "card1-DP-1", mode: nil))
        #expect(
            throws: OutputSelectionError(
                "connector card1-DP-1 is on /dev/dri/card1, not on the device given (/dev/dri/card0)")
        ) {
            _ = try MeasureSession.open(p, notice: { _ in })
        }
    }
}

/// The notices seen, in order.
final class Notices {
    var all: [MeasureSession.Notice] = []
}
