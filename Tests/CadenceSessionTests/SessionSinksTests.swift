import CadenceCore
import CadenceReport
import CadenceSession
import Foundation
import Testing

/// A sink that notes each frame it receives in a log shared with other sinks.
final class RecordingSink: FrameSink {
    let name: String
    let journal: Journal
    var opened = 0
    var closed: RunSummary?

    init(_ name: String, journal: Journal) {
        self.name = name
        self.journal = journal
    }

    func open(_ context: SinkContext) { opened += 1 }
    func frame(_ report: FrameReport) { journal.entries.append("\(name) \(report.frameIndex)") }
    func close(_ summary: RunSummary) { closed = summary }
}

/// What the sinks received, in the order they received it.
final class Journal {
    var entries: [String] = []
}

/// A sink that stops at its `failAt`th frame, as a file sink whose disk is full.
final class FailingSink: FrameSink {
    let failAt: Int
    private var context: SinkContext?
    private var frames = 0
    private var stopped = false

    init(failAt: Int) { self.failAt = failAt }

    func open(_ context: SinkContext) { self.context = context }
    func frame(_ report: FrameReport) {
        guard !stopped else { return }
        frames += 1
        if frames == failAt {
            stopped = true
            context?.fail(
                SinkFailure(
                    incompleteOutput: "test sink: \(frames - 1) frames (disk full)",
                    notice: "the test sink stopped after \(frames - 1) frames"))
        }
    }
}

@Suite struct SessionSinksTests {
    /// A new empty directory (the caller removes it).
    func scratchDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cadence-session-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func configuration(frames: Int) -> RunConfiguration {
        var c = RunConfiguration()
        c.frames = frames
        return c
    }

    /// Two sinks on the fake display: each gets every frame once, in completion order, the first
    /// sink before the second for every frame; both are opened once and closed with the summary.
    @Test func sinksReceiveEveryFrameInOrder() throws {
        let journal = Journal()
        let a = RecordingSink("a", journal: journal), b = RecordingSink("b", journal: journal)
        var notices: [String] = []
        let sinks = SessionSinks([a, b], notice: { notices.append($0) })
        let session = try RunSession(
            display: FakeDisplay(FakeDisplayConfiguration()), configuration: configuration(frames: 120),
            sinks: sinks)
        let summary = try session.run()
        #expect(summary.frames == 120 && summary.end == .completed && summary.incompleteOutputs == nil)
        #expect(journal.entries == (0..<120).flatMap { ["a \($0)", "b \($0)"] })
        #expect(a.opened == 1 && b.opened == 1)
        #expect(a.closed == summary && b.closed == summary)
        #expect(notices.isEmpty)
        #expect(abs((sinks.measuredRefreshHz ?? 0) - 60) < 1e-3)
    }

    /// A sink added after the run was attached is opened at once and gets the frames after it.
    @Test func aSinkAddedLateIsOpenedAndFed() throws {
        let journal = Journal()
        let sinks = SessionSinks(notice: { _ in })
        let session = try RunSession(
            display: FakeDisplay(FakeDisplayConfiguration()), configuration: configuration(frames: 10),
            sinks: sinks)
        let late = RecordingSink("late", journal: journal)
        sinks.add(late)
        _ = try session.run()
        #expect(late.opened == 1 && journal.entries.count == 10)
    }

    /// A sink that fails stops with one notice and one `incompleteOutputs` entry; the run and
    /// the other sinks go on to the end.
    @Test func aFailingSinkProducesItsFailure() throws {
        let journal = Journal()
        let after = RecordingSink("after", journal: journal)
        var notices: [String] = []
        let sinks = SessionSinks([FailingSink(failAt: 5), after], notice: { notices.append($0) })
        let session = try RunSession(
            display: FakeDisplay(FakeDisplayConfiguration()), configuration: configuration(frames: 30),
            sinks: sinks)
        let summary = try session.run()
        #expect(summary.frames == 30 && summary.end == .completed)
        #expect(summary.incompleteOutputs == ["test sink: 4 frames (disk full)"])
        #expect(notices == ["the test sink stopped after 4 frames"])
        #expect(journal.entries.count == 30, "the sink after the failed one still gets every frame")
    }

    /// The file sinks: the log reads back with every frame and the summary as its end line; the
    /// CSV has a row per frame; the summary file is the returned summary.
    @Test func filesAreWrittenAndComplete() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = SessionOutputs()
        files.log = dir + "/run.jsonl"
        files.csv = dir + "/run.csv"
        files.summary = dir + "/summary.json"
        files.quiet = true
        var c = configuration(frames: 60)
        c.injectLate = [20: 2]
        let sinks = try SessionSinks(files: files, notice: { _ in })
        sinks.prepare(driver: "fake display")
        let summary = try RunSession(display: FakeDisplay(FakeDisplayConfiguration()), configuration: c, sinks: sinks)
            .run()
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.records.count == 60 && log.end?.summary == summary)
        #expect(summary.causeCounts == [.renderLate: 1] && summary.droppedRefreshes == 2)
        let csv = try String(contentsOfFile: dir + "/run.csv", encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 61)
        let written = try JSONDecoder().decode(
            RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json")))
        #expect(written == summary)
    }

    /// An unwritable path fails before the run, and removes the files created before it.
    @Test func anUnwritablePathRemovesTheFilesBeforeIt() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = SessionOutputs()
        files.log = dir + "/run.jsonl"
        files.csv = dir + "/no/such/dir/run.csv"
        #expect(throws: (any Error).self) { _ = try SessionSinks(files: files, notice: { _ in }) }
        #expect(!FileManager.default.fileExists(atPath: dir + "/run.jsonl"))
    }
}
