import Foundation
import Testing
@testable import DRMTrace

/// Trace lines as Debian's 6.1 kernel prints them (recorded on vkms in the VM).
enum Lines {
    static func vblank(_ crtc: Int, _ seq: UInt32, _ timeNs: Int64, comm: String = "<idle>-0") -> String {
        "          \(comm)       [000] d.h2.     5.071468: drm_vblank_event: crtc=\(crtc), seq=\(seq), time=\(timeNs), high-prec=true"
    }
    static func delivered(_ file: String, _ crtc: Int, _ seq: UInt32, at time: String = "6.954715") -> String {
        "          <idle>-0       [000] d.h3.     \(time): drm_vblank_event_delivered: file=\(file), crtc=\(crtc), seq=\(seq)"
    }
    static func queued(_ file: String, _ crtc: Int, _ seq: UInt32) -> String {
        "         app-77     [001] .....     6.946203: drm_vblank_event_queued: file=\(file), crtc=\(crtc), seq=\(seq)"
    }
    static func sequence(_ file: String, _ seq: UInt64, flags: Int = 2) -> String {
        "         cadence-128     [000] .....     6.946203: cadence_seq: (drm_crtc_queue_sequence_ioctl+0x0/0x2d0 [drm]) file=0x\(file) flags=\(flags) seq=\(seq)"
    }
    static func sent(_ file: String, _ crtc: Int, _ seq: UInt32, type: Int, time: Int64) -> String {
        "          <idle>-0       [000] d.h3.     6.954716: cadence_send: (drm_send_event_timestamp_locked+0x0/0x10 [drm]) file=0x\(file) crtc=\(crtc) seq=\(seq) type=\(type) time=\(time)"
    }
    static func commit(_ file: String, at time: String, flags: Int = 0x201, comm: String = "my kiosk-app-99") -> String {
        "  \(comm)     [001] .....     \(time): cadence_atomic: (drm_mode_atomic_ioctl+0x0/0xa40 [drm]) file=0x\(file) flags=\(flags)"
    }
}

@Suite struct TraceLineParserTests {
    @Test func vblankLine() {
        #expect(TraceLineParser.parse(Lines.vblank(0, 59, 5097460919)) == .vblank(crtc: 0, sequence: 59, timestamp: 5097460919))
    }

    @Test func deliveredQueuedAndProbes() {
        #expect(TraceLineParser.parse(Lines.delivered("0000000046bbcc76", 1, 172)) == .delivered(file: 0x46bbcc76, crtc: 1, sequence: 172, traceTime: 6_954_715_000))
        #expect(TraceLineParser.parse(Lines.queued("ffff88803ff8c600", 0, 9)) == .vblankRequest(file: 0xffff88803ff8c600, crtc: 0, sequence: 9, task: TraceTask(pid: 77, command: "app")))
        #expect(TraceLineParser.parse(Lines.sequence("ffff88803ff8c600", 176)) == .sequenceRequest(file: 0xffff88803ff8c600, sequence: 176, flags: 2, task: TraceTask(pid: 128, command: "cadence")))
        // A command with spaces and dashes: the pid is the digits before " [CPU]".
        #expect(TraceLineParser.parse(Lines.commit("ab", at: "7.000001")) == .commit(file: 0xab, flags: 0x201, task: TraceTask(pid: 99, command: "my kiosk-app"), traceTime: 7_000_001_000))
    }

    @Test func sendProbeLine() {
        // As recorded in the VM (tools/vm/observe.sh, --save-trace).
        let line = "          <idle>-0       [000] dNh3.    14.744334: cadence_send: (drm_send_event_timestamp_locked+0x0/0x10 [drm]) file=0xffff88803fab0a00 crtc=0 seq=591 type=3 time=14743858745"
        #expect(TraceLineParser.parse(line) == .sent(file: 0xffff88803fab0a00, crtc: 0, sequence: 591, type: 3, timestamp: 14_743_858_745))
        #expect(TraceLineParser.parse(Lines.sent("ab", 1, UInt32.max, type: 2, time: -1)) == .sent(file: 0xab, crtc: 1, sequence: UInt32.max, type: 2, timestamp: -1))
        // No type, or a 64-bit sequence: garbage.
        #expect(TraceLineParser.parse(line.replacingOccurrences(of: " type=3", with: "")) == nil)
        #expect(TraceLineParser.parse(line.replacingOccurrences(of: "seq=591", with: "seq=4294967296")) == nil)
    }

    @Test func maximumSequenceAndNegativeTime() {
        #expect(TraceLineParser.parse(Lines.vblank(2, UInt32.max, -5)) == .vblank(crtc: 2, sequence: UInt32.max, timestamp: -5))
        // A sequence beyond 32 bits in a 32-bit event is garbage.
        #expect(TraceLineParser.parse(Lines.delivered("1", 0, 0).replacingOccurrences(of: "seq=0", with: "seq=4294967296")) == nil)
    }

    @Test(arguments: [
        "", "# tracer: nop", "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
        "CPU:0 [LOST 12 EVENTS]",
        "          <idle>-0       [000] d.h2.     5.071468: sched_switch: prev_comm=a",
        "          <idle>-0       [000] d.h2.     5.071468: drm_vblank_event: crtc=0, seq=59",          // no time
        "          <idle>-0       [000] d.h2.     5.071468: drm_vblank_event: crtc=0, seq=5x9, time=1, high-prec=true",
        "          <idle>-0       [000] d.h2.     5.0714",                                              // truncated
        "garbage ] [ -1 ] : : : seq=1",
        "          <idle>-0       [000] d.h3.     6.954715: drm_vblank_event_delivered: file=zz, crtc=0, seq=1",
        "          <idle>-0       [000] d.h3.     6.954715: drm_vblank_event_delivered: xfile=1, crtc=0, seq=1",
    ])
    func garbageIsNil(_ line: String) {
        #expect(TraceLineParser.parse(line) == nil)
    }

    @Test func lostEventsCounted() {
        var s = TraceStream()
        var out: [FlipTracker.Event] = []
        let text = "CPU:0 [LOST 12 EVENTS]\nCPU:1 [LOST 3 EVENTS]\n" + Lines.vblank(0, 1, 100) + "\n"
        Array(text.utf8).withUnsafeBytes { s.feed($0, into: &out) }
        #expect(s.lostEvents == 15)
        #expect(s.records == 1)
        #expect(out == [.vblank(crtc: 0, sequence: 1, timestamp: 100)])
    }

    @Test func linesSplitAcrossReadsAndOverlongGarbage() {
        let text = Lines.vblank(0, 1, 100) + "\n" + String(repeating: "x", count: 10_000) + "\n" + Lines.vblank(0, 2, 200)
        let bytes = Array(text.utf8)
        for chunk in [1, 7, 4096, bytes.count] {
            var s = TraceStream()
            var out: [FlipTracker.Event] = []
            var i = 0
            while i < bytes.count {
                let j = min(bytes.count, i + chunk)
                bytes[i..<j].withUnsafeBytes { s.feed($0, into: &out) }
                i = j
            }
            s.finish(into: &out)
            #expect(out == [.vblank(crtc: 0, sequence: 1, timestamp: 100), .vblank(crtc: 0, sequence: 2, timestamp: 200)], "chunk \(chunk)")
        }
    }
}
