import CadenceCore
import DRM

/// The KMS implementation of CadenceCore's `DisplayBackend`: one connector and CRTC,
/// a 3-buffer swapchain (dumb or GBM), a cached shadow ``surface`` copied once into a free
/// scanout buffer at ``finish(frame:)``, page flips (atomic or legacy) completing at the next
/// vblank, vblank events from drmCrtcQueueSequence (drmWaitVBlank on older kernels), and the
/// original CRTC state restored by ``close()`` or deinit.
///
/// On drivers without vblank (bochs, virtio-gpu) flips complete when the commit does,
/// ``hasHardwareVBlank`` is false, and vblanks are synthesised on the mode's nominal grid
/// anchored at the last flip completion (a completion advances the sequence by the number of
/// nominal refreshes since the previous one, rounded, at least 1).
///
/// Use ``open(device:connector:mode:allocator:api:vrr:rate:source:)``; errors are ``OutputSelectionError``
/// with one clear line. Call it from one thread. To restore the console on SIGINT/SIGTERM,
/// hold a ``SignalStop`` while the display runs: ``waitForEvents(until:into:)`` returns early
/// when a signal arrives, the run loop's `shouldStop` checks ``SignalStop/isRequested``, and
/// ``close()`` restores the console.
public final class KMSDisplay: DisplayBackend, WorkSimulating {
    public let device: DRMDevice
    public let output: KMSOutput
    /// The connector and mode in use (and whether the mode was built).
    public let selection: OutputSelection
    public let swapchain: Swapchain
    let shadow: ShadowBuffer

    /// "kms", or the simulator's name on a fake DRM device used as one ("fake-drm").
    public var name: String { device.simulatorName ?? "kms" }
    public var crtcID: UInt32 { output.crtc.rawValue }
    /// The mode's refresh duration; under VRR the shortest refresh (1/max of ``vrrRange``).
    public let refreshInterval: Double
    /// The variable-refresh range in Hz while VRR runs (`VRR_ENABLED` = 1, see
    /// ``open(device:connector:mode:allocator:api:vrr:rate:source:)``), nil on fixed refresh.
    public let vrrRange: ClosedRange<Double>?
    /// The range VRR would use on this output (``VRRAvailability``), whether or not it runs.
    public let vrrAvailability: VRRAvailability
    /// One line when ``VRRPolicy/auto`` wanted VRR but the output cannot run it (the display
    /// then runs at the mode's fixed refresh), else nil.
    public let vrrNote: String?
    public let hasHardwareVBlank: Bool
    public let surface: PixelSurface?
    /// Buffers besides the one on screen and the one in flight.
    public var queueCapacity: Int { swapchain.buffers.count - 2 }

    var finished: [(frame: FrameID, buffer: Int)] = []
    var inFlight: (frame: FrameID, buffer: Int)?
    var widener: SequenceWidener
    var last: VBlank
    var requested: [UInt64] = []
    var softwareRequests: [UInt64] = []
    var immediate: [BackendEvent] = []
    var drmEvents: [DRMEvent] = []
    var lost: String?
    /// Low-framerate compensation under VRR (KMSDisplay+VRR.swift).
    var repeats = VRRRepeats()
    /// Set when the connector reported disconnected (KMSDisplay+Hotplug.swift).
    var unplugged: String?
    /// True between a seat's disable and its enable (KMSDisplay+Seat.swift): no flips.
    var sessionPaused = false
    /// The device's uevents this output has looked at, when several outputs share it.
    var ueventsSeen = 0
    /// Scanout verification from the CRTC's CRC, while it runs (KMSDisplay+Scanout.swift).
    var scanout: CRCLineReader?
    /// Writeback capture (KMSDisplay+Writeback.swift), nil unless started.
    var writeback: WritebackState?

    /// Tags sequence-event user data so it is never mistaken for a frame id.
    static let vblankTag: UInt64 = DRMDevice.routedVBlankTag

    /// A vblank request's user data: the tag, this output's CRTC index (to route it when several
    /// outputs share the device) and the sequence.
    func vblankUserData(_ sequence: UInt64) -> UInt64 {
        DRMDevice.routingTag(crtcIndex: output.crtcIndex) | (sequence & ((1 << 56) - 1))
    }

    // MARK: Opening

    /// Opens `device` (default: the first card node of `source`, /dev/dri/card*, or the card a
    /// `cardN-NAME` connector names: ``OutputAddress``), picks `connector` by name (default:
    /// the first connected) and `mode` as "WxH[@HZ]" (default: preferred; a rate with no listed
    /// mode builds one, see ``OutputSelection/note``), allocates 3 buffers with `allocator`,
    /// sets the mode with `api` and shows black. Throws ``OutputSelectionError``.
    /// `vrr` and `rate` choose variable refresh (``VRRPolicy``): `rate` is the range the display
    /// link will ask for, which ``VRRPolicy/auto`` looks at.
    public static func open(device path: String? = nil, connector: String? = nil, mode: String? = nil,
                            allocator: BufferAllocator = .dumb, api: ModesetAPI = .auto,
                            vrr: VRRPolicy = .off, rate: FrameRateRange = .default,
                            source: DeviceSource = .live) throws -> KMSDisplay {
        // `cardN-NAME` names its card (see ``OutputAddress``).
        let address = connector.map(OutputAddress.init)
        if let a = address, let own = a.devicePath, let path, path != own {
            throw OutputSelectionError("connector \(a) is on \(own), not on the device given (\(path))")
        }
        let p = try OutputSelection.devicePath(path ?? address?.devicePath, discovered: source.discover())
        let dev = try OutputSelection.open(p, source: source)
        return try open(on: dev, connector: address?.connector, mode: mode, allocator: allocator, api: api, vrr: vrr, rate: rate)
    }

    /// Like ``open(device:connector:mode:allocator:api:vrr:rate:source:)`` on an already open
    /// device (e.g. `DRMDevice.open(fake:)`).
    public static func open(on dev: DRMDevice, connector: String? = nil, mode: String? = nil,
                            allocator: BufferAllocator = .dumb, api: ModesetAPI = .auto,
                            vrr: VRRPolicy = .off, rate: FrameRateRange = .default) throws -> KMSDisplay {
        try OutputSelection.check(dev)
        let selection = try OutputSelection.select(device: dev, connector: connector, mode: mode)
        do {
            return try KMSDisplay(device: dev, selection: selection, allocator: allocator, api: api, vrr: vrr, rate: rate)
        } catch let e as DRMError {
            throw OutputSelection.failure(e, path: dev.path)
        }
    }

    init(device: DRMDevice, selection: OutputSelection, allocator: BufferAllocator, api: ModesetAPI,
         vrr: VRRPolicy, rate: FrameRateRange, crtc: CRTCID? = nil) throws {
        self.device = device
        self.selection = selection
        let mode = selection.mode
        output = try KMSOutput(device: device, connector: selection.connector, mode: mode, api: api, crtc: crtc)
        vrrAvailability = VRRAvailability(device: device, output: output, modeHz: mode.refreshHz)
        let choice = try vrrAvailability.decide(vrr, rate: rate, modeHz: mode.refreshHz)
        vrrRange = choice.range
        vrrNote = choice.note
        swapchain = try Swapchain(device: device, width: Int(mode.hdisplay), height: Int(mode.vdisplay), count: 3, allocator: allocator)
        shadow = ShadowBuffer(width: Int(mode.hdisplay), height: Int(mode.vdisplay))
        surface = PixelSurface(base: shadow.pixels, width: shadow.width, height: shadow.height, stride: shadow.stride)
        refreshInterval = vrrRange.map { 1e9 / $0.upperBound } ?? mode.refreshInterval
        shadow.copy(to: swapchain.buffers[0])
        try output.modeset(framebuffer: swapchain.buffers[0].framebuffer, vrr: vrrRange != nil)
        swapchain.markOnScreen(0)
        hasHardwareVBlank = output.probeVBlank() == .hardware
        if hasHardwareVBlank, let v = try? output.currentVBlank() {
            last = VBlank(sequence: v.sequence, timestamp: v.timestampNs)
            widener = SequenceWidener(anchor: v.sequence)
        } else {
            last = VBlank(sequence: 0, timestamp: device.monotonicNow())
            widener = SequenceWidener()
        }
        finished.reserveCapacity(4)
        requested.reserveCapacity(8)
        softwareRequests.reserveCapacity(8)
        immediate.reserveCapacity(8)
        drmEvents.reserveCapacity(64)
        // Under VRR the run starts at the probes' last refresh, the panel's last before it.
        learnPanelResponse()
        // Without a uevent monitor (no netlink here) the display works; an unplug goes unseen.
        try? device.watchHotplug()
    }

    /// Restores the CRTC before the buffers go away: removing a framebuffer that is on screen
    /// would make the kernel switch the CRTC off first.
    deinit { try? output.restore() }

    /// Restores what the CRTC showed before (waiting for a pending flip). Also done in deinit.
    public func close() throws {
        scanout = nil
        stopWriteback()
        if sessionPaused { output.sessionLost() }
        do { try output.restore() } catch let e as DRMError { throw Self.failure(e) }
    }

    // MARK: DisplayBackend

    public func now() -> Nanoseconds { device.monotonicNow() }

    public func lastVBlank() throws -> VBlank {
        try checkUsable()
        if hasHardwareVBlank && !sessionPaused {
            do {
                let v = try output.currentVBlank()
                let seq = v.sequence > 0xffff_ffff ? v.sequence : widener.widen(UInt32(truncatingIfNeeded: v.sequence))
                if seq >= last.sequence { last = VBlank(sequence: seq, timestamp: v.timestampNs) }
            } catch let e as DRMError {
                throw fail(e)
            }
            return last
        }
        return softwareVBlank(at: now())
    }

    public func finish(frame: FrameID) throws {
        try checkUsable()
        var index = swapchain.acquire()
        if index == nil, !finished.isEmpty {
            // Reuse the oldest finished frame's buffer: that frame can no longer be shown.
            index = finished.removeFirst().buffer
        }
        guard let i = index else { throw BackendFailure.busy }
        shadow.copy(to: swapchain.buffers[i])
        if writeback != nil { keepForCapture(frame) }
        swapchain.markQueued(i)
        finished.append((frame, i))
    }

    public func submit(frame: FrameID) throws {
        try checkUsable()
        if repeats.inFlight && output.flipPending && inFlight == nil { awaitRepeat() }
        if output.flipPending || inFlight != nil || sessionPaused { throw BackendFailure.busy }
        guard let k = finished.firstIndex(where: { $0.frame == frame }) else {
            throw BackendFailure.other("frame \(frame) was submitted without finish(frame:)")
        }
        let entry = finished[k]
        if scanout != nil { readScanout() }
        do {
            let extra = writeback != nil ? captureProperties(frame) : []
            try output.flip(to: swapchain.buffers[entry.buffer].framebuffer, userData: frame, extra: extra)
            scanout?.flipInFlight = true
            if writeback != nil { captureCommitted(frame) }
        } catch let e as DRMError {
            // The seat took DRM master away before telling us: a pause, reported by the next wait.
            if e.errno.rawValue == 13 || e.errno.rawValue == 1, let seat = device.seat, seat.disablePending() {
                throw BackendFailure.busy
            }
            throw fail(e)
        }
        // Frames finished before this one will never be shown: free their buffers.
        for old in finished[..<k] { swapchain.markFree(old.buffer) }
        finished.removeFirst(k + 1)
        inFlight = entry
        repeats.frameCommitted(at: now())
    }

    public func requestVBlank(after sequence: UInt64) throws {
        try checkUsable()
        if sessionPaused { return }
        guard hasHardwareVBlank else {
            let current = softwareVBlank(at: now())
            if current.sequence > sequence {
                immediate.append(.vblank(current))
            } else if !softwareRequests.contains(sequence) {
                softwareRequests.append(sequence)
            }
            return
        }
        let current = try lastVBlank()
        if current.sequence > sequence {
            immediate.append(.vblank(current))
            return
        }
        guard !requested.contains(sequence) else { return }
        do {
            do {
                try device.queueSequence(output.crtc, sequence + 1, flags: .nextOnMiss, userData: vblankUserData(sequence + 1))
            } catch let e as DRMError where e.errno == .eopnotsupp || e.errno == .invalidArgument || e.errno == .enotty {
                try device.waitVBlankEvent(crtcIndex: output.crtcIndex, sequence: UInt32(truncatingIfNeeded: sequence + 1),
                                           userData: vblankUserData(sequence + 1))
            }
        } catch let e as DRMError {
            throw fail(e)
        }
        requested.append(sequence)
    }

    /// Events kept for this output: translated ones not yet returned, or DRM events another
    /// output's wait read from the shared device for this CRTC (see `DRMDevice.readEvents(for:until:into:)`).
    public var hasEventsReady: Bool {
        !immediate.isEmpty || (!sessionPaused && device.routesEvents && device.hasRoutedEvents(for: output.crtc))
    }

    public func waitForEvents(until deadline: Nanoseconds, into events: inout [BackendEvent]) throws {
        while true {
            if !immediate.isEmpty {
                events.append(contentsOf: immediate)
                immediate.removeAll(keepingCapacity: true)
                return
            }
            try checkUsable()
            if let seat = device.seat {
                if serviceSeat(seat, into: &events) { return }
                if sessionPaused {
                    waitForSeat(seat, until: deadline, into: &events)
                    return
                }
            }
            var wake = deadline
            // A seat's messages are read between waits: wake at least every 10 ms for them.
            if device.seat != nil { wake = min(wake, now() &+ Self.seatPollNs) }
            if !hasHardwareVBlank, let r = softwareRequests.min() {
                wake = min(wake, softwareVBlankTime(r + 1))
            }
            if vrrRange != nil, let t = repeatDue() { wake = min(wake, t) }
            drmEvents.removeAll(keepingCapacity: true)
            var interrupted = false
            do {
                interrupted = try output.readEvents(until: wake, into: &drmEvents)
            } catch let e as DRMError {
                let failure = fail(e)
                events.append(.failed(frame: inFlight?.frame, failure))
                inFlight = nil
                return
            }
            let received = now()
            let before = events.count
            translate(received: received, into: &events)
            if scanout != nil { readScanout() }
            if writeback != nil { pollCaptures() }
            if device.hotplugPending || (device.routesEvents && device.sharedUeventCount != ueventsSeen),
               serviceHotplug(into: &events) { return }
            if !hasHardwareVBlank && !softwareRequests.isEmpty {
                let current = softwareVBlank(at: received)
                var due = false
                softwareRequests.removeAll { r in
                    if current.sequence > r { due = true; return true }
                    return false
                }
                if due { events.append(.vblank(current)) }
            }
            // Sharing the device with other outputs: return after every read so that the loop
            // driving them all can serve the one whose events were read.
            if events.count > before || received >= deadline || interrupted || device.routesEvents { return }
        }
    }

    /// Turns the DRM events read into ``drmEvents`` into backend events.
    func translate(received: Nanoseconds, into events: inout [BackendEvent]) {
            for e in drmEvents {
                switch e.kind {
                case .flipComplete:
                    if e.userData == Self.repeatTag {
                        repeatCompleted(e)
                        continue
                    }
                    guard let f = inFlight, e.userData == f.frame else { continue }
                    let vb: VBlank
                    if hasHardwareVBlank {
                        vb = VBlank(sequence: widener.widen(UInt32(truncatingIfNeeded: e.sequence)), timestamp: e.timestampNs)
                    } else {
                        // No vblank counter: count nominal refreshes since the last completion
                        // (at least one), so sequences stay on the synthetic grid.
                        let refreshes = refreshInterval > 0 ? (Double(e.timestampNs - last.timestamp) / refreshInterval).rounded() : 1
                        let step = refreshes.isFinite && refreshes > 1 ? UInt64(min(refreshes, 1e9)) : 1
                        vb = VBlank(sequence: last.sequence &+ step, timestamp: e.timestampNs)
                    }
                    if vb.sequence >= last.sequence { last = vb }
                    scanoutFlip(f.frame, vb)
                    swapchain.markOnScreen(f.buffer)
                    inFlight = nil
                    if let r = vrrRange { repeats.framePresented(at: e.timestampNs, range: r) }
                    events.append(.presented(frame: f.frame, vblank: vb, receivedAt: received))
                case .sequence, .vblank:
                    guard e.userData & Self.vblankTag != 0 else { continue }
                    let seq = e.kind == .sequence ? e.sequence : widener.widen(UInt32(truncatingIfNeeded: e.sequence))
                    let vb = VBlank(sequence: seq, timestamp: e.timestampNs)
                    if vb.sequence >= last.sequence { last = vb }
                    requested.removeAll { $0 < seq }
                    events.append(.vblank(vb))
                }
            }
    }

    /// Takes the time until `deadline` as a frame's rendering work (an injected late frame,
    /// a configured render cost), but holds the CPU only for its last ``spinTail``: it sleeps before that
    /// (under VRR it commits the LFC repeats due meanwhile, ``keepRepeating(until:)``).
    /// On a one-core board (or the one-vCPU VM) a busy wait of three refreshes held the other
    /// card's pacing thread off the CPU and made it drop refreshes that were not its own.
    package func spin(until deadline: Nanoseconds) {
        let wake = deadline &- Self.spinTail
        if vrrRange != nil { keepRepeating(until: wake) }
        if wake > device.monotonicNow() { device.sleep(until: wake) }
        device.busyWait(until: deadline)
    }

    /// How much of ``spin(until:)`` is a busy wait: more than a sleep's wake-up latency
    /// (tens of µs on a native kernel), so the work still ends on time.
    static let spinTail: Nanoseconds = 1_000_000

    // MARK: Helpers

    /// The synthetic vblank at `t` on a driver without vblank: the mode's grid anchored at the
    /// last flip completion.
    /// The last software vblank at or before `t`: vblank `last.sequence + k` has happened
    /// exactly when `t` ≥ ``softwareVBlankTime(_:)`` of it (the same rounding both ways: a
    /// floor of the quotient alone put `t` = that time one vblank short, and a wait for it
    /// returned at once, forever: the bochs profile on the fake DRM device hung at latency 2).
    private func softwareVBlank(at t: Nanoseconds) -> VBlank {
        let period = refreshInterval
        guard period > 0, t > last.timestamp else { return last }
        var k = UInt64((Double(t - last.timestamp) / period).rounded(.down))
        while softwareVBlankTime(last.sequence &+ k &+ 1) <= t { k += 1 }
        while k > 0 && softwareVBlankTime(last.sequence &+ k) > t { k -= 1 }
        return VBlank(sequence: last.sequence &+ k, timestamp: softwareVBlankTime(last.sequence &+ k))
    }

    private func softwareVBlankTime(_ sequence: UInt64) -> Nanoseconds {
        guard sequence > last.sequence else { return last.timestamp }
        return last.timestamp + Int64((Double(sequence - last.sequence) * refreshInterval).rounded())
    }

    /// Maps a DRM error to a ``BackendFailure``; a lost device stays lost.
    func fail(_ e: DRMError) -> BackendFailure {
        let f = Self.failure(e)
        if case .deviceLost(let why) = f { lost = why }
        return f
    }

    /// EBUSY → busy; ENODEV → device lost; EACCES/EPERM → device lost (DRM master taken);
    /// anything else → other, with the DRM error's line.
    public static func failure(_ e: DRMError) -> BackendFailure {
        switch e.errno.rawValue {
        case 16: return .busy
        case 19: return .deviceLost("\(e)")
        case 13, 1: return .deviceLost("lost DRM master: \(e)")
        default: return .other("\(e)")
        }
    }
}
