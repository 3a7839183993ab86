import Testing
@testable import CadenceCore

@Suite struct RefreshMeasurementTests {
    /// Flips at every vblank of a `hz` panel, timestamps truncated to µs like flip events.
    func flips(hz: Double, count: Int, startSeq: UInt64 = 1000, skip: Set<Int> = [], jitterNs: (Int) -> Int64 = { _ in 0 }) -> [FlipTimestamp] {
        let period = 1e9 / hz
        var out: [FlipTimestamp] = []
        var seq = startSeq
        for i in 0..<count {
            if skip.contains(i) { seq += 1 }
            let t = Int64((5e12 + Double(seq) * period).rounded()) / 1000 * 1000 + jitterNs(i)
            out.append(FlipTimestamp(sequence: seq, timestamp: t, receivedAt: t + 120_000))
            seq += 1
        }
        return out
    }

    @Test func perfectSixtyHertzPanel() throws {
        let m = RefreshMeasurement(flips: flips(hz: 60.0038, count: 600), nominalRefreshHz: 60.0038, hardwareVBlank: true)
        let measured = try #require(m.measuredRefreshHz)
        #expect(abs(measured - 60.0038) / 60.0038 < 1e-6)
        #expect(m.missedVBlanks == 0)
        #expect(m.flips == 600)
        #expect(abs(m.intervalMs.mean - 1000 / 60.0038) < 0.001)
        #expect(m.allChecksPassed)
        #expect(m.checks.allSatisfy { $0.passed == true })
    }

    @Test func sequenceGapsAreMissedVBlanks() {
        let m = RefreshMeasurement(flips: flips(hz: 144, count: 300, skip: [10, 50, 51]), nominalRefreshHz: 144, hardwareVBlank: true)
        #expect(m.missedVBlanks == 3)
        // The per-vblank spacing still matches the period, so the timestamp checks pass.
        #expect(m.allChecksPassed)
        #expect(abs(m.intervalMs.max - 2000 / 144.0) < 0.002)
        #expect(abs(m.measuredRefreshHz! - 144) < 1e-3)
    }

    /// A VT switched away and back between flips 120 and 121 (129 vblanks of fbcon in between):
    /// marked as a break, the gap is no interval and no missed vblanks; the fit spans it. Only the
    /// step into the break is left out: a real miss right after it still counts.
    @Test func aSessionGapIsNotMissedVBlanks() throws {
        // Flips 120... shifted by 129 vblanks, and one more vblank missed after the break (at 300).
        let f = flips(hz: 60.0038, count: 600, skip: [300]).enumerated().map { i, x in
            guard i >= 120 else { return x }
            let t = x.timestamp + Int64((129 * 1e9 / 60.0038).rounded()) / 1000 * 1000
            return FlipTimestamp(sequence: x.sequence + 129, timestamp: t, receivedAt: t + 120_000)
        }
        let plain = RefreshMeasurement(flips: f, nominalRefreshHz: 60.0038, hardwareVBlank: true)
        #expect(plain.missedVBlanks == 130 && plain.sessionGaps == 0)
        let m = RefreshMeasurement(flips: f, nominalRefreshHz: 60.0038, hardwareVBlank: true, breaks: [120])
        #expect(m.sessionGaps == 1 && m.missedVBlanks == 1, "\(m.missedVBlanks)")
        #expect(m.intervalMs.count == 598 && abs(m.intervalMs.max - 2000 / 60.0038) < 0.002, "\(m.intervalMs)")
        let hz = try #require(m.measuredRefreshHz)
        #expect(abs(hz - 60.0038) / 60.0038 < 1e-5)
        #expect(m.allChecksPassed)
        // Indices that start nothing (0, past the end) are not gaps.
        let none = RefreshMeasurement(flips: f, nominalRefreshHz: 60.0038, hardwareVBlank: true, breaks: [0, 600, 5000])
        #expect(none.sessionGaps == 0 && none.missedVBlanks == 130)
    }

    @Test func missedVBlanksAreAttributedBySubmissionTime() {
        var f = flips(hz: 100, count: 20, skip: [5, 12])
        // Flip 5 was submitted 1 ms after flip 4 completed: in time, yet it skipped a vblank.
        f[5].submittedAt = f[4].timestamp + 1_000_000
        // Flip 12 was submitted 15 ms after flip 11: after the first skipped vblank.
        f[12].submittedAt = f[11].timestamp + 15_000_000
        let m = RefreshMeasurement(flips: f, nominalRefreshHz: 100, hardwareVBlank: true)
        #expect(m.missedVBlanks == 2)
        #expect(m.missedAfterTimelySubmit == 1)
        #expect(m.missedAfterLateSubmit == 1)
        #expect(m.missedUnattributed == 0)
        f[12].submittedAt = nil
        #expect(RefreshMeasurement(flips: f, nominalRefreshHz: 100, hardwareVBlank: true).missedUnattributed == 1)
    }

    @Test func measuredDiffersFromNominalWhenPanelIsSlow() {
        // The mode says 60 but the panel runs at 59.94: the fit finds 59.94 and the spacing
        // check (0.1% off) still passes while the fit exposes the difference.
        let m = RefreshMeasurement(flips: flips(hz: 59.94, count: 600), nominalRefreshHz: 60, hardwareVBlank: true)
        #expect(abs(m.measuredRefreshHz! - 59.94) < 1e-4)
        #expect(m.checks.first { $0.name == "vblankSpacing" }?.passed == true)
    }

    @Test func jitterAboveLimitFails() {
        let m = RefreshMeasurement(
            flips: flips(hz: 60, count: 200, jitterNs: { $0 % 2 == 0 ? 0 : 200_000 }),
            nominalRefreshHz: 60, hardwareVBlank: true)
        let jitter = m.checks.first { $0.name == "jitter" }!
        #expect(jitter.passed == false)
        #expect(jitter.value > 0.005)
        #expect(m.checks.first { $0.name == "vblankSpacing" }?.passed == false)
        #expect(!m.allChecksPassed)
    }

    @Test func timestampAfterReceiptFails() {
        var f = flips(hz: 60, count: 10)
        f[4].receivedAt = f[4].timestamp - 1
        let m = RefreshMeasurement(flips: f, nominalRefreshHz: 60, hardwareVBlank: true)
        let c = m.checks.first { $0.name == "timestampNotAfterReceipt" }!
        #expect(c.passed == false && c.value == 1)
    }

    @Test func nonMonotonicSequenceFails() {
        var f = flips(hz: 60, count: 10)
        f[5].sequence = f[4].sequence
        let m = RefreshMeasurement(flips: f, nominalRefreshHz: 60, hardwareVBlank: true)
        #expect(m.checks.first { $0.name == "sequenceMonotonic" }?.passed == false)
    }

    @Test func noVBlankDriverInventsNothing() {
        // bochs/virtio: sequence 0 and commit-completion timestamps with irregular spacing.
        let times: [Int64] = [0, 17_100_000, 33_900_000, 52_000_000, 67_000_000]
        let f = times.map { FlipTimestamp(sequence: 0, timestamp: 1_000_000_000 + $0, receivedAt: 1_000_050_000 + $0) }
        let m = RefreshMeasurement(flips: f, nominalRefreshHz: 60, hardwareVBlank: false)
        #expect(m.measuredRefreshHz == nil)
        #expect(m.missedVBlanks == 0)
        #expect(m.flips == 5)
        #expect(abs(m.intervalMs.max - 18.1) < 1e-9)
        #expect(m.checks.first { $0.name == "jitter" }?.passed == nil)
        #expect(m.checks.first { $0.name == "timestampNotAfterReceipt" }?.passed == true)
        #expect(m.allChecksPassed)
    }

    @Test func emptyRecordingIsHarmless() {
        let m = RefreshMeasurement(flips: [], nominalRefreshHz: 60, hardwareVBlank: true)
        #expect(m.flips == 0 && m.measuredRefreshHz == nil && m.missedVBlanks == 0)
        #expect(m.allChecksPassed)
    }
}
