import CadenceCore
import DRM
import EDID

/// Whether a ``KMSDisplay`` runs variable refresh (`VRR_ENABLED` = 1 on its CRTC).
public enum VRRPolicy: String, CaseIterable, Sendable {
    /// VRR when the output offers it (``VRRAvailability``) and the display link's rate range asks
    /// for a rate no divisor of the mode's fixed refresh gives (90 Hz on 144 Hz, 30 Hz on 144 Hz);
    /// otherwise the fixed refresh, with ``KMSDisplay/vrrNote`` saying why when VRR was wanted.
    case auto
    /// VRR always; opening fails with one line when the output cannot run it.
    case on
    /// Never: the mode's fixed refresh.
    case off
}

/// Whether an output can run variable refresh, and in which range: the panel's range from its
/// EDID / DisplayID / HDMI data (`EDID.adaptiveSyncRange`), only when the connector's
/// `vrr_capable` is 1 and the atomic API can set `VRR_ENABLED`, its maximum limited to the
/// mode's refresh.
public struct VRRAvailability: Equatable, Sendable {
    /// The usable range in Hz, nil when VRR is unavailable.
    public var range: ClosedRange<Double>?
    /// Why VRR is unavailable (one phrase, e.g. "Virtual-1 has no vrr_capable property"); nil
    /// when ``range`` is set.
    public var reason: String?

    public init(range: ClosedRange<Double>?, reason: String?) {
        self.range = range
        self.reason = reason
    }

    /// Reads `vrr_capable` and the EDID of `output`'s connector for a mode refreshing at `modeHz`.
    public init(device: DRMDevice, output: KMSOutput, modeHz: Double) {
        let name = output.connector.name
        if let why = output.vrrUnavailableReason { self.init(range: nil, reason: why); return }
        switch output.vrrCapable {
        case nil: self.init(range: nil, reason: "\(name) has no vrr_capable property"); return
        case false?: self.init(range: nil, reason: "\(name) is not vrr_capable (vrr_capable 0)"); return
        case true?: break
        }
        guard let bytes = try? device.edid(of: output.connector.id), let edid = try? EDID(bytes) else {
            self.init(range: nil, reason: "\(name) has no EDID to give its VRR range"); return
        }
        guard let r = edid.adaptiveSyncRange else { self.init(range: nil, reason: "\(name)'s EDID gives no VRR range"); return }
        let top = Swift.min(r.maxHz, modeHz)
        guard top > r.minHz else {
            self.init(range: nil, reason: "\(name)'s VRR range \(ModeInfo.formatHz(r.minHz))–\(ModeInfo.formatHz(r.maxHz)) Hz has nothing below the mode's \(ModeInfo.formatHz(modeHz)) Hz")
            return
        }
        self.init(range: r.minHz...top, reason: nil)
    }

    /// True when `rate` asks for a rate no divisor of `refreshHz` gives: its preferred rate is
    /// more than 0.1% from the nearest divisor picked, or no divisor lies inside [minimum, maximum].
    public static func wantsVRR(_ rate: FrameRateRange, refreshHz: Double) -> Bool {
        let fixed = EffectiveRate.select(for: rate, refreshHz: refreshHz)
        if rate.preferred > 0 { return abs(fixed.hz - rate.preferred) > 0.001 * rate.preferred }
        let inside = fixed.hz >= rate.minimum * 0.999 && (rate.maximum <= 0 || fixed.hz <= rate.maximum * 1.001)
        return !inside
    }

    /// The range to run (nil: fixed refresh) under `policy` for a link asking for `rate`, and the
    /// note to show when ``VRRPolicy/auto`` wanted VRR that is unavailable. Throws a one-line
    /// ``OutputSelectionError`` ("VRR unavailable: …") for ``VRRPolicy/on`` without VRR.
    public func decide(_ policy: VRRPolicy, rate: FrameRateRange, modeHz: Double) throws -> (range: ClosedRange<Double>?, note: String?) {
        switch policy {
        case .off:
            return (nil, nil)
        case .on:
            guard let range else {
                throw OutputSelectionError("VRR unavailable: \(reason ?? "no VRR range")", kind: .vrrUnavailable)
            }
            return (range, nil)
        case .auto:
            guard Self.wantsVRR(rate, refreshHz: modeHz) else { return (nil, nil) }
            guard let range else {
                return (nil, "VRR unavailable (\(reason ?? "no VRR range")): pacing at a divisor of the fixed \(ModeInfo.formatHz(modeHz)) Hz")
            }
            return (range, nil)
        }
    }
}

/// Low-framerate compensation in software: a frame meant to stay up longer than the panel's
/// longest refresh (1/min Hz) is shown for k evenly spaced refreshes by flipping the same
/// framebuffer again (each flip starts a refresh under VRR); how many and when is CadenceCore's
/// `LowFramerateCompensation`, the model the fake display uses too: spread over the time from
/// the frame's refresh until the next frame is due (its commit plus its duration, the shorter of
/// the last two commit intervals). A new frame cancels the repeats left. The plan is in commit
/// times: a repeat is committed the panel's response before its refresh, the response the
/// shortest time from a commit to its refresh seen, and a frame shown later than that after its
/// commit (the panel was still in a refresh) starts its repeats as much later. Taking that
/// lateness for the response, as it did, committed a late frame's repeats early by it.
struct VRRRepeats {
    /// The frame on screen's refresh start and when the next frame is due, in commit times (nil:
    /// no repeat planned), and the model that spreads its repeats.
    var plan: (start: Int64, end: Int64)?
    var lfc: LowFramerateCompensation?
    /// Repeats done of the frame on screen.
    var done = 0
    /// When the repeat flip in flight was committed (nil: none in flight).
    var repeatCommit: Int64?
    /// A repeat flip is in flight.
    var inFlight: Bool { repeatCommit != nil }
    var cadence = CommitCadence()
    /// The shortest time from a commit to the refresh it started seen (nil before the first).
    var response: Int64?

    mutating func frameCommitted(at t: Int64) {
        cadence.committed(at: t)
        plan = nil
    }

    /// The frame committed last started its refresh at `t`.
    mutating func framePresented(at t: Int64, range: ClosedRange<Double>) {
        if lfc == nil { lfc = LowFramerateCompensation(range: range) }
        done = 0
        plan = nil
        guard let c = cadence.lastCommit else { return }
        let took = observe(commit: c, refresh: t)
        // Later than the response by less than the timestamps' whole µs: on time.
        let late = took - response! < 1_000 ? 0 : took - response!
        let d = cadence.frameDuration
        if d > 0 { plan = (c + late, c + d) }
    }

    /// The repeat committed at ``repeatCommit`` started its refresh at `t`.
    mutating func repeatCompleted(at t: Int64) {
        if let c = repeatCommit { _ = observe(commit: c, refresh: t) }
        repeatCommit = nil
        done += 1
    }

    /// A flip committed at `commit` started its refresh at `refresh`: the time it took, which
    /// ``response`` keeps the shortest of.
    private mutating func observe(commit: Int64, refresh: Int64) -> Int64 {
        let took = Swift.max(0, refresh - commit)
        response = Swift.min(response ?? took, took)
        return took
    }

    /// When the next repeat should be committed, nil when none is planned.
    var nextCommitTime: Int64? {
        guard let p = plan, let lfc else { return nil }
        return lfc.repeatStart(done + 1, frameStart: p.start, frameEnd: p.end)
    }
}

extension KMSDisplay {
    /// 1 ms before the target vblank on fixed refresh (the commit must reach the hardware
    /// before the vblank it aims at); 0.1 ms under VRR, where a flip starts its refresh when
    /// committed, so that a larger margin only makes frames early.
    public var recommendedCommitMargin: Nanoseconds { vrrRange == nil ? 1_000_000 : 100_000 }

    /// Tags a repeat flip's user data (never a frame id, never a vblank request).
    static let repeatTag: UInt64 = 1 << 62

    /// Under VRR, before the first frame: learns the panel's response (commit to refresh) from
    /// a flip the panel cannot have held. The buffer on screen is flipped twice: the first flip's
    /// refresh is one of ours, so a second committed the panel's shortest refresh after it finds
    /// the panel free, and its refresh comes the response after its commit. Without it the
    /// first flips of a run, held by the modeset's refresh or one the panel made on its own,
    /// gave only a longer bound, and a frame late before a free flip had its LFC repeats planned
    /// early by the difference (36.1 Hz on 48–144 Hz: 176 µs learnt, 100 µs true). Costs the
    /// shortest refresh and two responses at the start (about 7 ms at 144 Hz); a flip refused or
    /// unanswered within two of the longest refreshes leaves the response to be learnt as before.
    /// The probes are repeat flips: their completions (read as any repeat's, ``awaitRepeat()``)
    /// keep the shortest response and make the second probe's refresh ``last``, the panel's last
    /// refresh before the run.
    func learnPanelResponse() {
        guard let range = vrrRange, let shown = swapchain.onScreen else { return }
        let shortest = Int64((1e9 / range.upperBound).rounded())
        for probe in 0..<2 {
            // A flip timestamp is whole µs, truncated: 1 µs more makes sure the panel is free.
            if probe == 1 { device.sleep(until: last.timestamp &+ 1_000 &+ shortest) }
            guard (try? output.flip(to: swapchain.buffers[shown].framebuffer, userData: Self.repeatTag)) != nil
            else { return }
            repeats.repeatCommit = now()
            awaitRepeat()
            guard !repeats.inFlight else { return }
        }
    }

    /// Under VRR with LFC planned: commits a due repeat (its completion wakes the wait) and
    /// returns nil, or returns when the next one is due.
    func repeatDue() -> Nanoseconds? {
        guard !sessionPaused, inFlight == nil, !output.flipPending, let t = repeats.nextCommitTime else { return nil }
        if now() < t { return t }
        guard let shown = swapchain.onScreen else { repeats.done += 1; return nil }
        do {
            try output.flip(to: swapchain.buffers[shown].framebuffer, userData: Self.repeatTag)
            repeats.repeatCommit = now()
        } catch let e as DRMError {
            repeats.done += 1
            if e.errno.rawValue != 16 { _ = fail(e) }
        } catch {
            repeats.done += 1
        }
        return nil
    }

    /// A repeat flip completed: one more refresh of the frame on screen.
    func repeatCompleted(_ e: DRMEvent) {
        repeats.repeatCompleted(at: e.timestampNs)
        let vb = VBlank(sequence: widener.widen(UInt32(truncatingIfNeeded: e.sequence)), timestamp: e.timestampNs)
        if vb.sequence >= last.sequence { last = vb }
    }

    /// While a frame is drawn (``spin(until:)``) under VRR: commits the repeats of the frame on
    /// screen that fall due before `end`, as a panel's own LFC would go on repeating it. The
    /// pacing thread draws the frame, so without this no repeat was committed during a long
    /// render, and the late frame waited for a refresh the panel started by itself. Events read
    /// meanwhile are kept for the next wait.
    func keepRepeating(until end: Nanoseconds) {
        while now() < end {
            // A frame's flip in flight (latency 2-3: the frame before the one drawn) plans the
            // repeats when it completes: wait for it too.
            let next = repeatDue()
            guard next != nil || repeats.inFlight || inFlight != nil else { return }
            guard readForNextWait(until: min(end, next ?? end)) else { return }
        }
    }

    /// Reads the events that arrive until `deadline` outside a wait and keeps them for the next
    /// one (``immediate``); false when the device failed (recorded by `fail`).
    func readForNextWait(until deadline: Nanoseconds) -> Bool {
        drmEvents.removeAll(keepingCapacity: true)
        do { _ = try output.readEvents(until: deadline, into: &drmEvents) } catch let e as DRMError {
            _ = fail(e)
            return false
        } catch { return false }
        translate(received: now(), into: &immediate)
        return true
    }

    /// Before a frame's flip: waits (at most two of the panel's longest refreshes) for a repeat
    /// flip still in flight; other events read meanwhile are kept for the next wait.
    func awaitRepeat() {
        let deadline = now() &+ Int64(2e9 / (vrrRange?.lowerBound ?? 1))
        while output.flipPending && repeats.inFlight && now() < deadline {
            guard readForNextWait(until: deadline) else { return }
        }
    }
}
