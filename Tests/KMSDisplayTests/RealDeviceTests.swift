import Testing
import CadenceCore
import DRM
#if canImport(Glibc)
import Glibc
#endif
@testable import KMSDisplay

/// Runs KMSDisplay against a real kernel device when `CADENCE_KMS_DEVICE` names one (inside
/// the VM: `tools/vm/run.sh --driver vkms --bin <test binary> -- env CADENCE_KMS_DEVICE=/dev/dri/card0 ...`).
/// Skipped everywhere else.
@Suite(.serialized, .enabled(if: getenv("CADENCE_KMS_DEVICE") != nil, "set CADENCE_KMS_DEVICE to a /dev/dri/card* node"))
struct RealDeviceTests {
    var path: String { String(cString: getenv("CADENCE_KMS_DEVICE")) }

    @Test(arguments: [ModesetAPI.atomic, .legacy])
    func presentsEveryFrameAtConsecutiveVBlanks(api: ModesetAPI) throws {
        let d = try KMSDisplay.open(device: path, api: api)
        defer { try? d.close() }
        var events: [BackendEvent] = []
        events.reserveCapacity(16)
        var presented: [VBlank] = []
        let surface = try #require(d.surface)
        for frame: FrameID in 1...120 {
            surface.base.storeBytes(of: UInt32(truncatingIfNeeded: frame &* 0x010203), toByteOffset: 0, as: UInt32.self)
            try d.finish(frame: frame)
            try d.submit(frame: frame)
            var done = false
            while !done {
                events.removeAll(keepingCapacity: true)
                try d.waitForEvents(until: d.now() + 1_000_000_000, into: &events)
                #expect(!events.isEmpty, "no event within 1 s")
                if events.isEmpty { return }
                for e in events {
                    if case .presented(let f, let vb, let received) = e {
                        #expect(f == frame)
                        #expect(vb.timestamp <= received)
                        presented.append(vb)
                        done = true
                    }
                }
            }
        }
        let seqSteps = zip(presented, presented.dropFirst()).map { $1.sequence &- $0.sequence }
        let dts = zip(presented, presented.dropFirst()).map { Double($1.timestamp - $0.timestamp) }
        if d.hasHardwareVBlank {
            // One frame per vblank, allowing a handful of misses to guest scheduling under TCG.
            #expect(seqSteps.allSatisfy { $0 >= 1 })
            #expect(seqSteps.filter { $0 > 1 }.count <= 3, "sequence steps \(seqSteps)")
            for (step, dt) in zip(seqSteps, dts) {
                #expect(abs(dt - Double(step) * d.refreshInterval) / d.refreshInterval < 0.005)
            }
        } else {
            #expect(dts.allSatisfy { $0 > 0 })
        }
        print("kms \(api.rawValue): \(presented.count) frames, hardware vblank \(d.hasHardwareVBlank), missed \(seqSteps.map { Int($0) - 1 }.filter { $0 > 0 }.reduce(0, +))")
    }

    @Test func vblankEventsFollowTheCounter() throws {
        let d = try KMSDisplay.open(device: path)
        defer { try? d.close() }
        var events: [BackendEvent] = []
        var last = try d.lastVBlank()
        for _ in 0..<30 {
            try d.requestVBlank(after: last.sequence)
            events.removeAll(keepingCapacity: true)
            try d.waitForEvents(until: d.now() + 1_000_000_000, into: &events)
            guard case .vblank(let vb) = events.first else {
                Issue.record("expected a vblank event, got \(events)")
                return
            }
            #expect(vb.sequence > last.sequence)
            #expect(vb.timestamp > last.timestamp)
            last = vb
        }
        let now = d.now()
        #expect(last.timestamp <= now)
    }

    @Test func spinWaitsOnCLOCK_MONOTONIC() throws {
        let d = try KMSDisplay.open(device: path)
        defer { try? d.close() }
        let t0 = d.now()
        d.spin(until: t0 + 2_000_000)
        #expect(d.now() - t0 >= 2_000_000)
    }
}
