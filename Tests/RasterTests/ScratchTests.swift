import Testing
@testable import Raster
import CadenceCore

#if canImport(Glibc)
import Glibc
#endif

/// The per-thread scratch that keeps drawing allocation-free in steady state: reused across
/// calls, grown only for a larger request, one per thread, and never shared with a nested call.
@Suite struct ScratchTests {
    @Test func aThreadReusesItsBufferAndGrowsItOnlyForALargerRequest() {
        // A fresh thread, so no earlier test on this one has sized its buffer.
        let r = onNewThread { () -> [Int] in
            var seen: [Int] = [Scratch.threadCapacity]
            let a = Scratch.with(bytes: 10_000) { Int(bitPattern: $0) }
            seen.append(Scratch.threadCapacity)
            let b = Scratch.with(bytes: 10_000) { Int(bitPattern: $0) }
            let c = Scratch.with(bytes: 5) { Int(bitPattern: $0) }
            seen.append(Scratch.threadCapacity)
            // One byte more than it holds: a new, larger buffer.
            let d = Scratch.with(bytes: Scratch.threadCapacity + 1) { Int(bitPattern: $0) }
            seen.append(Scratch.threadCapacity)
            return seen + [a == b ? 1 : 0, a == c ? 1 : 0, d % 64, a % 64]
        }
        #expect(r[0] == 0)
        #expect(r[1] >= 10_000)
        #expect(r[2] == r[1])  // same capacity: no allocation for the second, smaller calls
        #expect(r[3] >= r[1] + r[1] / 2)  // grown by at least half again
        #expect(r[4] == 1 && r[5] == 1)  // the same memory each time
        #expect(r[6] == 0 && r[7] == 0)  // 64-byte aligned
    }

    @Test func aNestedRequestGetsOtherMemory() {
        let (outer, inner) = Scratch.with(bytes: 256) { o in
            (Int(bitPattern: o), Scratch.with(bytes: 256) { Int(bitPattern: $0) })
        }
        #expect(outer != inner)
    }

    @Test func threadsHaveTheirOwnBuffers() throws {
        // Both hold their buffers at the same time, so neither can be the other's.
        let held = SeparateThreads.run(2) { _ in Scratch.with(bytes: 4096) { p in usleep(50_000); return Int(bitPattern: p) } }
        let a = try held[0].get(), b = try held[1].get()
        #expect(a != b)
    }

    /// A linear gradient whose strip is larger than a stack temporary (1080p, diagonal): the
    /// second frame uses the buffer the first one sized.
    @Test func aGradientFrameReusesTheStripBuffer() {
        let r = onNewThread { () -> (Int, Int) in
            let bmp = Bitmap(width: 1920, height: 1080)
            let g = Gradient(.black, .white)
            bmp.canvas.fillLinearGradient(bmp.canvas.bounds, from: Point(0, 0), to: Point(1920, 1080), g)
            let first = Scratch.threadCapacity
            bmp.canvas.fillLinearGradient(bmp.canvas.bounds, from: Point(0, 0), to: Point(1920, 1080), g)
            return (first, Scratch.threadCapacity)
        }
        #expect(r.0 >= 1920 * 4)
        #expect(r.1 == r.0)
    }
}

/// Runs `body` on a thread of its own (a fresh one: piece 1 of ``SeparateThreads``) and
/// returns its result.
private func onNewThread<R>(_ body: @escaping () -> R) -> R {
    let results = SeparateThreads.run(2) { i in i == 1 ? body() : nil }
    return try! results[1].get()!
}
