import Benchmark
import CadenceCore

/// One pacing "frame" on the fake display (virtual time): link callback, present, submit,
/// completion event, accounting. Each benchmark iteration is 1000 frames, so the reported
/// per-iteration figures divided by 1000 are per frame.
let framesPerIteration = 1000

/// A long-running pacer in steady state (warmed up so that every buffer has its capacity).
final class SteadyRun {
    let display: FakeDisplay
    let pacer: FramePacer
    var accounting = FrameAccounting(expectedFrames: 4_000_000)
    var frame = 0

    init(latency: Int) throws {
        display = FakeDisplay(FakeDisplayConfiguration(refreshHz: 60))
        pacer = try FramePacer(backend: display)
        let link = DisplayLink(preferredFrameLatency: latency) { _ in }
        link.handler = { [unowned self] u in
            let t = self.display.now()
            _ = try? self.pacer.present(update: u, frameIndex: self.frame, renderStart: t, renderEnd: t)
            self.frame += 1
        }
        pacer.onFrameCompleted = { [unowned self] r in self.accounting.add(r) }
        pacer.add(link)
        try frames(2_000)
    }

    /// Runs until `n` more frames have completed.
    func frames(_ n: Int) throws {
        let target = accounting.frames + n
        while accounting.frames < target {
            try pacer.runOnce(until: display.now() + 1_000_000_000)
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.cpuTotal, .wallClock, .mallocCountTotal, .throughput],
        timeUnits: .microseconds,
        maxDuration: .seconds(3),
        maxIterations: 200
    )
    // What the harness itself costs per iteration (subtract from the figures below).
    Benchmark("baseline: empty iteration") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(0) }
    }
    // Ten times the frames: a per-frame allocation would show as 10× the mallocs.
    let long = try! SteadyRun(latency: 1)
    Benchmark("pacing 10000 frames, latency 1") { benchmark in
        for _ in benchmark.scaledIterations {
            try long.frames(10 * framesPerIteration)
        }
    }
    for latency in [1, 3] {
        let run = try! SteadyRun(latency: latency)
        Benchmark("pacing 1000 frames, latency \(latency)") { benchmark in
            for _ in benchmark.scaledIterations {
                try run.frames(framesPerIteration)
            }
        }
    }
}
