import CadenceCore
import CadenceSession
import Foundation
import Scenes
import Testing

/// `WritebackCaptures`: the schedule's edges, and the worker's verdict on each capture
/// (identity decoded, pixels equal with the X byte ignored), queued beyond its bound.
@Suite struct WritebackCapturesTests {
    @Test func scheduleEdges() throws {
        let every = try CaptureSchedule(parsing: "every:1")
        #expect((0..<5).allSatisfy { every.contains($0) })
        let fifty = try CaptureSchedule(parsing: "every:50")
        #expect(fifty.contains(0) && !fifty.contains(49) && fifty.contains(50) && !fifty.contains(51))
        let list = try CaptureSchedule(parsing: "frames:0,7,7")
        #expect(list.frames == [0, 7] && list.contains(7) && !list.contains(1))
        for bad in ["every:0", "every:-1", "every:", "frames:", "frames:1,,2", "frames:-1", "all:3", "every", ""] {
            #expect(throws: CaptureSchedule.Invalid.malformed(bad)) { try CaptureSchedule(parsing: bad) }
        }
        let onMismatch = try CaptureSchedule(parsing: "on-mismatch")
        #expect(onMismatch.onMismatch && onMismatch.contains(0) && onMismatch.contains(301))
        #expect(!fifty.onMismatch && !list.onMismatch)
    }

    @Test func pngBesideTheLog() {
        #expect(WritebackCaptures.pngBase(log: "dir/run.jsonl.zst") == "dir/run-capture-")
        #expect(WritebackCaptures.pngBase(log: "run") == "run-capture-")
        #expect(WritebackCaptures.pngBase(log: nil) == "capture-")
        #expect(WritebackCaptures.pngPath(base: "x-", frame: 50) == "x-000050.png")
        #expect(WritebackCaptures.pngPath(base: "x-", frame: 1_234_567) == "x-1234567.png")
    }

    /// A frame drawn with its identity, `width` × `height`, filled with `colour`.
    static func frame(_ index: Int, width: Int = 96, height: Int = 64, colour: UInt32 = 0x0030_C030) -> [UInt32] {
        var p = [UInt32](repeating: colour, count: width * height)
        p.withUnsafeMutableBytes { raw in
            FrameIdentity.draw(index, base: raw.baseAddress!, width: width, height: height, stride: width * 4)
        }
        return p
    }

    /// More captures than may be queued: every one is checked, in order, and the summary
    /// counts decoded and equal apart (a stale frame decodes to the previous index but equals
    /// its render; a corrupted pixel decodes but differs; X bytes are ignored).
    @Test func verdictsAfterTheQueueFills() throws {
        let dir = NSTemporaryDirectory() + "cadence-wb-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let c = WritebackCaptures(schedule: try CaptureSchedule(parsing: "every:1"), pngBase: dir + "c-")
        let n = WritebackCaptures.maximumQueued * 3
        for i in 0..<n {
            c.rendered(i)
            #expect(c.take() == i && c.take() == nil)
            var captured = Self.frame(i).map { $0 | 0xFF00_0000 }
            var rendered = Self.frame(i)
            if i == 5 { rendered = Self.frame(4); captured = Self.frame(4) }  // stale: drawn as frame 4
            if i == 7 { captured[captured.count - 1] ^= 0x0000_0100 }  // one pixel differs
            c.check(label: i, width: 96, height: 64, rendered: rendered, captured: captured)
        }
        let s = c.finish(skipped: 2, timedOut: 1, readMicroseconds: 12.5)
        #expect(s.captures == n && s.decoded == n - 1 && s.equal == n - 1)
        #expect(s.mismatchedFrames == [5, 7])
        #expect(s.skipped == 2 && s.timedOut == 1 && s.readMicroseconds == 12.5)
        let pngs = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".png") }
        #expect(pngs.count == n)
    }

    /// Captures flagged by the CRC, without a render: only the identity is checked, and each
    /// flagged frame is listed with the frame its capture shows (nil when none decodes); the
    /// display's ring counts are kept.
    @Test func flaggedCapturesRecordTheFrameTheyShow() throws {
        let dir = NSTemporaryDirectory() + "cadence-wb-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let c = WritebackCaptures(schedule: try CaptureSchedule(parsing: "on-mismatch"), pngBase: dir + "c-")
        c.check(label: 300, width: 96, height: 64, rendered: [], captured: Self.frame(299), reason: .stale)
        c.check(
            label: 41, width: 96, height: 64, rendered: [], captured: Self.frame(41), reason: .changeWithoutFlip,
            changeVBlank: 1043)
        c.check(
            label: 50, width: 96, height: 64, rendered: [], captured: [UInt32](repeating: 0, count: 96 * 64),
            reason: .stale)
        var counts = OnMismatchCaptures()
        counts.jobs = 600
        counts.recycledUnread = 597
        let s = c.finish(skipped: 1, timedOut: 0, readMicroseconds: 3, onMismatch: counts)
        #expect(s.captures == 3 && s.decoded == 1 && s.equal == 0 && s.mismatchedFrames == [300, 50])
        let m = try #require(s.onMismatch)
        #expect(m.jobs == 600 && m.recycledUnread == 597 && s.skipped == 1)
        #expect(
            m.flagged == [
                FlaggedCapture(frame: 300, shows: 299, reason: .stale),
                FlaggedCapture(frame: 41, shows: 41, reason: .changeWithoutFlip, vblank: 1043),
                FlaggedCapture(frame: 50, shows: nil, reason: .stale)
            ])
        #expect(m.flagged[0].description == "frame 300 (stale): capture shows frame 299")
        #expect(m.flagged[1].description == "frame 41 (change without a flip at vblank 1043): capture shows frame 41")
        // Scheduled captures' summaries have no on-mismatch part (their JSON is unchanged).
        let plain = WritebackCaptures(schedule: try CaptureSchedule(parsing: "every:5"), pngBase: dir + "p-")
        let p = plain.finish(skipped: 0, timedOut: 0, readMicroseconds: 0)
        #expect(p.onMismatch == nil)
        let json = String(decoding: try JSONEncoder().encode(p), as: UTF8.self)
        #expect(!json.contains("onMismatch"), "\(json)")
    }

    @Test func framesOutsideTheScheduleAreNotTaken() throws {
        let c = WritebackCaptures(schedule: try CaptureSchedule(parsing: "frames:3"), pngBase: "unused-")
        c.rendered(2)
        #expect(c.take() == nil)
        c.rendered(3)
        c.rendered(4)
        #expect(c.take() == nil)
        let none = WritebackCaptures(schedule: nil, pngBase: "unused-")
        none.rendered(0)
        #expect(none.take() == nil)
        #expect(none.finish(skipped: 0, timedOut: 0, readMicroseconds: 0) == WritebackSummary())
    }
}
