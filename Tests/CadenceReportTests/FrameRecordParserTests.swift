import CadenceCore
import Foundation
import Testing

@testable import CadenceReport

/// The frame-line parser that reads logs without `JSONDecoder` (FrameRecordParser.swift): it
/// agrees with the decoder field for field on everything it accepts, and leaves everything
/// out of the writer's shape (and every error) to the decoder.
@Suite struct FrameRecordParserTests {
    /// The writer's encoder (`RunLogWriter`).
    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// A record with every field drawn from what a run can write, and beyond (negative spans,
    /// the largest times, odd rates, every outcome and cause, optional fields present or not).
    static func randomRecord(_ g: inout SplitMix64) -> FrameRecord {
        func time() -> Int64 {
            switch Int.random(in: 0..<4, using: &g) {
            case 0: return 0
            case 1: return RunLog.maxTimeNs
            default: return Int64.random(in: 0...RunLog.maxTimeNs, using: &g)
            }
        }
        func span() -> Int64 { Int64.random(in: -RunLog.maxTimeNs...RunLog.maxTimeNs, using: &g) }
        func rate() -> Double {
            switch Int.random(in: 0..<5, using: &g) {
            case 0: return 0
            case 1: return [60, 59.94, 143.856, 23.976, 29.97, 1e-3, 0.1].randomElement(using: &g)!
            case 2: return Double(Int.random(in: 1...1_000_000, using: &g))
            case 3: return -Double.random(in: 0.5...500, using: &g)
            default: return Double.random(in: 0...1000, using: &g)
            }
        }
        func maybe<T>(_ v: T) -> T? { Bool.random(using: &g) ? v : nil }
        var r = FrameRecord(FrameReport.sample)
        let kind: FrameRecord.IntentKind = [.next, .at, .atNearest, .afterMinimumDuration].randomElement(using: &g)!
        r.intent = .init(
            kind: kind, range: FrameRateRange(minimum: rate(), maximum: rate(), preferred: rate()),
            targetTimeNs: time(), targetSequence: UInt64.random(in: 0...UInt64(RunLog.maxIndex), using: &g),
            minDurationNs: maybe(span()), requestedTimeNs: maybe(time()))
        r.frame = Int.random(in: 0...RunLog.maxIndex, using: &g)
        r.id = UInt64.random(in: 0...UInt64(RunLog.maxIndex), using: &g)
        r.latency = Int.random(in: 0...16, using: &g)
        r.effectiveRateHz = rate()
        r.callbackNs = time(); r.wakeNs = time(); r.deadlineNs = time(); r.renderStartNs = time()
        r.renderEndNs = time(); r.commitNs = time(); r.flipNs = time(); r.receivedNs = time()
        r.schedulerDelayNs = maybe(span())
        r.copyEndNs = maybe(time())
        r.busyRetries = Int.random(in: 0...RunLog.maxCount, using: &g)
        r.sequence = UInt64.random(in: 0...UInt64(RunLog.maxIndex), using: &g)
        r.crtc = UInt32.random(in: 0...UInt32.max, using: &g)
        r.connector = maybe(["DP-1", "HDMI-A-2", "card1-eDP-1", "Virtual-1", ""].randomElement(using: &g)!)
        r.outcome = FrameOutcome.allCases.randomElement(using: &g)!
        r.cause = maybe(DropCause.allCases.randomElement(using: &g)!)
        r.lateRefreshes = Int.random(in: 0...RunLog.maxCount, using: &g)
        r.droppedRefreshes = Int.random(in: 0...RunLog.maxCount, using: &g)
        r.intervalRefreshes = Int.random(in: 0...RunLog.maxCount, using: &g)
        r.hitchNs = span()
        r.intervalNs = span()
        // [[sequence, time], …] as the writer writes them, and other shapes the decoder takes.
        func pairs() -> [[Int64]] {
            (0..<Int.random(in: 0...4, using: &g)).map { _ in
                Bool.random(using: &g)
                    ? [Int64.random(in: 0...Int64(RunLog.maxIndex), using: &g), time()]
                    : (0..<Int.random(in: 0...3, using: &g)).map { _ in span() }
            }
        }
        r.lateVBlankEvents = maybe(pairs())
        r.vblanks = maybe(pairs())
        return r
    }

    static func line(_ r: FrameRecord) throws -> [UInt8] { [UInt8](try encoder.encode(r)) }

    @Test func generatedRecordsParseAsTheDecoderDecodesThem() throws {
        var g = SplitMix64(seed: 24)
        let decoder = JSONDecoder()
        var accepted = 0
        for _ in 0..<5_000 {
            let r = Self.randomRecord(&g)
            let bytes = try Self.line(r)
            let decoded = try decoder.decode(FrameRecord.self, from: Data(bytes))
            let fast = FrameRecord(logLine: bytes)
            // Rates the encoder writes with an exponent (1e-05) are left to the decoder; nothing else is.
            let exponent = bytes.indices.dropLast().contains {
                (0x30...0x39).contains(bytes[$0]) && bytes[$0 + 1] == UInt8(ascii: "e")
            }
            if fast == nil {
                #expect(exponent, "declined: \(String(decoding: bytes, as: UTF8.self))")
            } else {
                accepted += 1
            }
            if let fast {
                #expect(fast == decoded, "\(String(decoding: bytes, as: UTF8.self))")
                #expect(fast == r)
                // Bit for bit, the rates too (== would take 0 for -0).
                #expect(fast.effectiveRateHz.bitPattern == decoded.effectiveRateHz.bitPattern)
            }
        }
        #expect(accepted >= 4_500)
    }

    @Test func aLineAsTheWriterWritesItKnownAnswer() throws {
        let text =
            #"{"busyRetries":2,"callbackNs":1000000000,"cause":"render-late","commitNs":1016666667,"connector":"DP-1","copyEndNs":1000000005,"crtc":4294967295,"deadlineNs":1016666667,"droppedRefreshes":1,"effectiveRateHz":59.94,"flipNs":1050000000,"frame":7,"hitchNs":-16666667,"id":8,"intent":{"kind":"at-nearest","minDurationNs":-5,"range":{"maximum":144,"minimum":23.976,"preferred":0.1},"requestedTimeNs":999,"targetSequence":1001,"targetTimeNs":1033333334},"intervalNs":33333333,"intervalRefreshes":2,"lateRefreshes":1,"latency":3,"outcome":"late","receivedNs":1050000100,"renderEndNs":1020000000,"renderStartNs":1000000001,"schedulerDelayNs":0,"sequence":1003,"version":1,"wakeNs":1000000002}"#
        let r = try #require(FrameRecord(logLine: Array(text.utf8)))
        #expect(r == (try JSONDecoder().decode(FrameRecord.self, from: Data(text.utf8))))
        #expect(r.busyRetries == 2 && r.cause == .renderLate && r.connector == "DP-1" && r.copyEndNs == 1_000_000_005)
        #expect(
            r.crtc == UInt32.max && r.effectiveRateHz == 59.94 && r.hitchNs == -16_666_667 && r.frame == 7 && r.id == 8)
        #expect(r.intent.kind == .atNearest && r.intent.minDurationNs == -5 && r.intent.requestedTimeNs == 999)
        #expect(r.intent.range == FrameRateRange(minimum: 23.976, maximum: 144, preferred: 0.1))
        #expect(r.intent.targetSequence == 1001 && r.intent.targetTimeNs == 1_033_333_334)
        #expect(
            r.outcome == .late && r.latency == 3 && r.sequence == 1003 && r.schedulerDelayNs == 0
                && r.wakeNs == 1_000_000_002)
        // Keys in another order, and without the optional ones: the same as the decoder too.
        let reordered =
            #"{"version":1,"frame":0,"id":1,"intent":{"targetTimeNs":5,"targetSequence":6,"range":{"preferred":0,"minimum":0,"maximum":0},"kind":"next"},"latency":1,"effectiveRateHz":60,"callbackNs":1,"wakeNs":2,"deadlineNs":3,"renderStartNs":4,"renderEndNs":5,"commitNs":6,"busyRetries":0,"flipNs":7,"sequence":8,"receivedNs":9,"crtc":0,"outcome":"on-time","lateRefreshes":0,"droppedRefreshes":0,"hitchNs":0,"intervalNs":0,"intervalRefreshes":0}"#
        let o = try #require(FrameRecord(logLine: Array(reordered.utf8)))
        #expect(o == (try JSONDecoder().decode(FrameRecord.self, from: Data(reordered.utf8))))
        #expect(
            o.cause == nil && o.connector == nil && o.copyEndNs == nil && o.schedulerDelayNs == nil
                && o.intent.minDurationNs == nil)
    }

    /// An intent kind the format does not have is refused by both readings (it was read as
    /// "next" while the kind was a string).
    @Test func anUnknownIntentKindIsRefused() throws {
        let line =
            #"{"version":1,"frame":0,"id":1,"intent":{"targetTimeNs":5,"targetSequence":6,"range":{"preferred":0,"minimum":0,"maximum":0},"kind":"sometimes"},"latency":1,"effectiveRateHz":60,"callbackNs":1,"wakeNs":2,"deadlineNs":3,"renderStartNs":4,"renderEndNs":5,"commitNs":6,"busyRetries":0,"flipNs":7,"sequence":8,"receivedNs":9,"crtc":0,"outcome":"on-time","lateRefreshes":0,"droppedRefreshes":0,"hitchNs":0,"intervalNs":0,"intervalRefreshes":0}"#
        #expect(FrameRecord(logLine: Array(line.utf8)) == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FrameRecord.self, from: Data(line.utf8)) }
        let known = line.replacingOccurrences(of: #""kind":"sometimes""#, with: #""kind":"after-minimum-duration""#)
        #expect(FrameRecord(logLine: Array(known.utf8))?.intent.kind == .afterMinimumDuration)
    }

    /// Each of these is valid JSON the decoder may read (or reject), but not the writer's
    /// shape: the fast parser declines, whatever the decoder then makes of it.
    @Test func outOfShapeLinesAreLeftToTheDecoder() throws {
        var g = SplitMix64(seed: 1)
        var r = Self.randomRecord(&g)
        r.effectiveRateHz = 60
        r.cause = .busy
        r.frame = 12
        r.vblanks = [[7, 1_000], [8, 2_000]]
        let good = String(decoding: try Self.line(r), as: UTF8.self)
        #expect(FrameRecord(logLine: Array(good.utf8)) == r)
        let variants: [String] = [
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\": 12"),  // whitespace
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":12.0"),  // a fraction
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":1.2e1"),  // an exponent
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":012"),  // a leading zero
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":-0"),  // minus zero
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":12345678901234567890"),  // past Int64
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":null"),
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":\"12\""),
            good.replacingOccurrences(of: "\"frame\":12,", with: ""),  // missing
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":12,\"frame\":12"),  // twice
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":12,\"extra\":1"),  // unknown key
            good.replacingOccurrences(of: "\"frame\":12", with: "\"fr\\u0061me\":12"),  // an escaped key
            good.replacingOccurrences(of: "\"cause\":\"busy\"", with: "\"cause\":\"bu\\u0073y\""),
            good.replacingOccurrences(of: "\"cause\":\"busy\"", with: "\"cause\":\"late\""),  // not a cause
            good.replacingOccurrences(of: "\"effectiveRateHz\":60", with: "\"effectiveRateHz\":6e1"),
            good.replacingOccurrences(of: "\"effectiveRateHz\":60", with: "\"effectiveRateHz\":60."),
            good.replacingOccurrences(of: "\"id\":", with: "\"id\":-"),  // unsigned, negative
            good.replacingOccurrences(of: "\"frame\":12", with: "\"frame\":9223372036854775808"),  // Int64.max + 1
            good.replacingOccurrences(of: "\"version\":1", with: "\"version\":1,\"record\":\"run\""),
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "[[7,1000],[8,2000],]"),  // a trailing comma
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "[[7,1000], [8,2000]]"),  // whitespace
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "[[7,1000],[8,2000.5]]"),  // a fraction
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "[[7,1000],[8,2000]"),  // unclosed
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "[7,1000]"),  // not nested
            good.replacingOccurrences(of: "[[7,1000],[8,2000]]", with: "null"),
            good + " ",
            good + "}",
            String(good.dropLast()),
            "[" + good + "]",
            "{}"
        ]
        let decoder = JSONDecoder()
        for v in variants {
            #expect(v != good)
            #expect(FrameRecord(logLine: Array(v.utf8)) == nil, "accepted: \(v)")
            _ = try? decoder.decode(FrameRecord.self, from: Data(v.utf8))
        }
        // A crtc above UInt32 and a non-ASCII connector are the decoder's to judge too.
        #expect(
            FrameRecord(
                logLine: Array(good.replacingOccurrences(of: "\"crtc\":\(r.crtc)", with: "\"crtc\":4294967296").utf8))
                == nil)
        var named = r
        named.connector = "DP-1é"
        #expect(FrameRecord(logLine: try Self.line(named)) == nil)
    }

    /// Whole logs: the fast and the decoder-only reading agree on the records and on every
    /// error, on the fuzz corpus, on logs of runs, and on those logs with bytes changed.
    @Test func fastAndDecoderReadingsAgreeOnLogs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var logs: [(String, Data)] = []
        for dir in ["tools/fuzz/corpus/runlog", "tools/fuzz/corpus/replay"] {
            let path = root.appendingPathComponent(dir).path
            for f in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
                logs.append(("\(dir)/\(f)", try Data(contentsOf: URL(fileURLWithPath: path + "/" + f))))
            }
        }
        #expect(logs.count >= 14)
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = config(frames: 300, latency: 2, injectLate: [10: 1, 100: 3])
        c.range = FrameRateRange(minimum: 0, maximum: 0, preferred: 30)
        logs.append(
            ("30 Hz", try Data(contentsOf: URL(fileURLWithPath: try recordRun(c, in: dir, name: "a.jsonl").path))))
        var content = config(frames: 200)
        content.contentRate = 23.976
        logs.append(
            (
                "content",
                try Data(contentsOf: URL(fileURLWithPath: try recordRun(content, in: dir, name: "b.jsonl").path))
            ))
        var vrr = FakeDisplayConfiguration(refreshHz: 144)
        vrr.vrrRange = 48...144
        var v = config(frames: 200)
        v.range = FrameRateRange(minimum: 48, maximum: 144, preferred: 90)
        logs.append(
            (
                "vrr",
                try Data(contentsOf: URL(fileURLWithPath: try recordRun(v, fake: vrr, in: dir, name: "c.jsonl").path))
            ))

        /// The records and what else was read, or the error.
        func reading(_ d: Data, fast: Bool, partial: Bool) -> ([FrameRecord], String) {
            do {
                let log = try RunLog.parse(d, name: "x", allowPartialLastLine: partial, fastFrames: fast)
                return (
                    log.records,
                    "\(log.header != nil) \(log.end != nil) \(log.context.count) \(log.rateSwitches.count) \(log.skippedPartialBytes)"
                )
            } catch {
                return ([], "error: \(error)")
            }
        }
        func agree(_ d: Data, partial: Bool) -> Bool {
            let (a, b) = (reading(d, fast: true, partial: partial), reading(d, fast: false, partial: partial))
            return a.0 == b.0 && a.1 == b.1
        }
        var g = SplitMix64(seed: 7)
        var compared = 0, fastFrames = 0
        for (name, d) in logs {
            for partial in [false, true] {
                #expect(agree(d, partial: partial), "\(name)")
                compared += 1
            }
            let lines = d.split(separator: 0x0A)
            fastFrames += lines.filter { FrameRecord(logLine: [UInt8]($0)) != nil }.count
            // Bytes changed, cut, or a line duplicated: the same records or the same one-line error.
            for _ in 0..<40 {
                var m = [UInt8](d)
                switch Int.random(in: 0..<3, using: &g) {
                case 0:
                    m[Int.random(in: 0..<m.count, using: &g)] = [0x30, 0x39, 0x2D, 0x2E, 0x22, 0x7D, 0x2C, 0x65, 0x20]
                        .randomElement(using: &g)!
                case 1: m.removeLast(Int.random(in: 1...min(m.count - 1, 700), using: &g))
                default: m.insert(contentsOf: Array("\"frame\":1,".utf8), at: Int.random(in: 0..<m.count, using: &g))
                }
                let md = Data(m)
                #expect(agree(md, partial: Bool.random(using: &g)), "\(name) mutated")
                compared += 1
            }
        }
        #expect(compared == logs.count * 42)
        // The fuzz corpus and the runs are read by the fast parser, not by the decoder.
        let runFrames = logs.suffix(3).map { (_, d) in
            d.split(separator: 0x0A).filter { !String(decoding: $0, as: UTF8.self).contains("\"record\"") }.count
        }.reduce(0, +)
        #expect(runFrames == 700)
        #expect(fastFrames >= runFrames)
    }
}

extension FrameReport {
    /// A report to build a record from before its fields are overwritten.
    fileprivate static var sample: FrameReport {
        let run = try! PacingRun(backend: FakeDisplay(.init(refreshHz: 60)), configuration: config(frames: 1))
        var out: FrameReport? = nil
        run.onFrame = { out = $0 }
        _ = try! run.run()
        return out!
    }
}
