/// Several ``PacingRun``s, one per output, driven on one thread: each output runs at its own
/// rate with its own display link, driven by its own display's events, and is accounted on its
/// own.
///
/// Why one thread: the outputs of one DRM device share its file descriptor and (on a fake
/// device) its virtual clock; turn-taking on one thread needs no locks and stays exact on
/// virtual time. Each turn waits for the next event of any output (a display sharing a device
/// returns after every read, see `KMSDisplay`), at most one refresh of the fastest output, then
/// the next run takes its turn. A frame's scripted rendering time (injected lateness, render
/// cost) serves the other outputs while it passes (``PacingRun/whileRendering``), so a slow
/// frame on one output is not a drop on another. Real rendering is not: an output's drawing
/// holds the thread, and the others wait for it.
public final class PacingGroup {
    /// The runs, one per output, in the order given.
    public let runs: [PacingRun]
    /// Indices of the runs whose callback is on the stack (not stepped from inside it).
    private var active: Set<Int> = []
    /// Runs that produce no more frames (their last frames may still be draining).
    private var finished: Set<Int> = []
    /// Finished runs whose frames have all completed (or whose drain time is up).
    private var drained: Set<Int> = []
    private var failure: (any Error)?
    private var rotation = 0
    private let quantum: Nanoseconds

    /// Groups `runs` (each on its own display; displays sharing a device must route its events
    /// per CRTC). Sets each run's ``PacingRun/whileRendering``.
    public init(runs: [PacingRun]) {
        self.runs = runs
        let fastest = runs.map { $0.pacer.refreshInterval }.min() ?? 16_666_667
        quantum = Swift.max(1, Nanoseconds(fastest.rounded()))
        for (i, r) in runs.enumerated() {
            r.whileRendering = { [unowned self] t in self.serve(except: i, until: t) }
        }
    }

    /// Runs every output until each reaches its frame count or duration, `shouldStop` returns
    /// true (asked every turn), or its device is lost; then lets each one's queued frames
    /// complete. Returns one summary per run, in order. An error thrown by any run ends them all
    /// and is rethrown.
    public func run(shouldStop: () -> Bool = { false }) throws -> [RunSummary] {
        for r in runs { r.begin() }
        var stopped = false
        while drained.count < runs.count {
            if shouldStop() { stopped = true; break }
            try round(Array(runs.indices), until: nil)
            if let e = failure { throw e }
        }
        return try runs.map { try $0.end(stopped: stopped) }
    }

    /// One round over `candidates` (skipping finished runs and those on the stack): turns that do
    /// not wait (due callbacks fire, frames are submitted, events already read are handled), two
    /// each and more while a pass handled events, then one turn, taken in rotation, that waits
    /// for the next event of any output (at most until `t`, or one refresh of the fastest
    /// output).
    ///
    /// A turn handles events after its callbacks were considered: a flip completion it handles
    /// frees its link to fire, which only its next turn does. The waiting turn goes to one
    /// output in rotation, so the passes go on until one handles nothing; otherwise the freed
    /// link would wait up to a refresh (seen on a wall-clock two-output run whose vblanks came
    /// while the other output was drawing).
    private func round(_ candidates: [Int], until t: Nanoseconds?) throws {
        var pass = 0
        while true {
            var handled = 0
            for i in candidates where !drained.contains(i) && !active.contains(i) {
                let before = runs[i].pacer.eventsHandled
                try turn(i, limit: runs[i].backend.now())
                handled &+= runs[i].pacer.eventsHandled &- before
            }
            pass += 1
            if pass >= 2 && (handled == 0 || pass >= 8) { break }
        }
        let ready = candidates.filter { !drained.contains($0) && !active.contains($0) }
        guard !ready.isEmpty else { return }
        // A turn above may have read another output's events from the shared device after that
        // output's own turns: serve it in the next round instead of waiting (up to a refresh) on
        // the one in rotation while its events sit there.
        if ready.contains(where: { runs[$0].backend.hasEventsReady }) { return }
        let k = ready[rotation % ready.count]
        rotation &+= 1
        try turn(k, limit: t ?? runs[k].backend.now() &+ quantum)
    }

    /// One turn of run `i`: a step while it produces frames, then drain steps until its last
    /// frames have completed.
    private func turn(_ i: Int, limit: Nanoseconds) throws {
        active.insert(i)
        defer { active.remove(i) }
        if !finished.contains(i) {
            if try !runs[i].step(limit: limit) { finished.insert(i) } else { return }
        }
        if try !runs[i].drainStep(limit: limit) { drained.insert(i) }
    }

    /// While run `i` renders until `t`: turns of the other runs (those not already on the
    /// stack) until `t`.
    private func serve(except i: Int, until t: Nanoseconds) {
        let clock = runs[i].backend
        let others = runs.indices.filter { $0 != i }
        while failure == nil && clock.now() < t {
            guard others.contains(where: { !active.contains($0) && !drained.contains($0) }) else { return }
            do { try round(others, until: t) } catch { failure = error }
        }
    }
}
