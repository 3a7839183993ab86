import SystemPackage

/// ``FakeDRMDevice``'s display calls: modesets, page flips, atomic commits, vblank sequences and
/// queued events, on the virtual clock.
extension FakeDRMDevice {
    func checkFB(_ fb: FramebufferID) throws {
        guard fb.rawValue == 0 || fbs[fb.rawValue] != nil || foreignFBs.contains(fb.rawValue) else { throw Errno.noSuchFileOrDirectory }
    }

    func modeset(_ crtc: CRTCID, fb: FramebufferID, connectors: [ConnectorID], mode: ModeInfo?) throws {
        guard var rt = crtcState[crtc] else { throw Errno.noSuchFileOrDirectory }
        try checkFB(fb)
        if let mode {
            guard mode.refreshHz > 0 else { throw Errno.invalidArgument }
            for id in connectors {
                guard let c = self.connectors.first(where: { $0.id == id }) else { throw Errno.noSuchFileOrDirectory }
                guard c.status != .disconnected else { throw Errno.invalidArgument }
            }
        }
        let now = vblank(crtc, at: clock)
        rt.baseSeq = now.seq
        rt.baseTime = clock
        rt.mode = mode
        rt.fb = mode == nil ? FramebufferID(0) : fb
        rt.connectors = mode == nil ? [] : connectors
        crtcState[crtc] = rt
        if mode != nil { noteLatch(crtc, seq: now.seq + 1, fb: fb) }
    }

    func setCRTC(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, x: UInt32, y: UInt32, connectors: [ConnectorID], mode: ModeInfo?) throws {
        try record("drmModeSetCrtc")
        guard masters.contains(fd) else { throw Errno.permissionDenied }
        if crtcState[crtc]?.pendingFlip == true { throw Errno.resourceBusy }
        try modeset(crtc, fb: framebuffer, connectors: connectors, mode: mode)
    }

    func scheduleFlip(_ crtc: CRTCID, fb: FramebufferID, userData: UInt64) {
        crtcState[crtc]?.pendingFlip = true
        var event: DRMEvent
        var at: Int64
        if hasVBlank, let r = scheduleVRRRefresh(crtc) {
            at = r.time
            noteFlipLatch(crtc, seq: r.seq, fb: fb)
            let stamp = at + jitter(crtc, r.seq)
            event = DRMEvent(kind: .flipComplete, crtcID: crtc, sequence: r.seq & 0xffff_ffff, timestampNs: stamp / 1000 * 1000, userData: userData)
            at = max(at, stamp)
        } else if hasVBlank {
            let delay = flipDelays.isEmpty ? 0 : flipDelays.removeFirst()
            let seq = vblank(crtc, at: clock).seq + 1 + UInt64(delay)
            at = vblankTime(crtc, seq: seq)
            noteFlipLatch(crtc, seq: seq, fb: fb)
            let stamp = at + jitter(crtc, seq)
            event = DRMEvent(kind: .flipComplete, crtcID: crtc, sequence: seq & 0xffff_ffff, timestampNs: stamp / 1000 * 1000, userData: userData)
            at = max(at, stamp)
        } else {
            at = clock + commitLatencyNs
            event = DRMEvent(kind: .flipComplete, crtcID: crtc, sequence: 0, timestampNs: at / 1000 * 1000, userData: userData)
        }
        pending.append(PendingEvent(readyAt: at + receiptLatencyNs, event: event, fb: fb, crtc: crtc))
    }

    func pageFlip(_ fd: Int32, _ crtc: CRTCID, framebuffer: FramebufferID, flags: PageFlipFlags, userData: UInt64) throws {
        try record("drmModePageFlip")
        guard masters.contains(fd) else { throw Errno.permissionDenied }
        guard let rt = crtcState[crtc], rt.active else { throw Errno.invalidArgument }
        guard !rt.pendingFlip else { throw Errno.resourceBusy }
        try checkFB(framebuffer)
        guard framebuffer.rawValue != 0 else { throw Errno.invalidArgument }
        if flags.contains(.event) {
            scheduleFlip(crtc, fb: framebuffer, userData: userData)
        } else {
            crtcState[crtc]?.fb = framebuffer
            noteLatch(crtc, seq: vblank(crtc, at: clock).seq + 1, fb: framebuffer)
        }
    }

    func atomicCommit(_ fd: Int32, _ properties: [AtomicProperty], flags: AtomicFlags, userData: UInt64) throws {
        try record(flags.contains(.testOnly) ? "drmModeAtomicCommit(TEST_ONLY)" : "drmModeAtomicCommit")
        guard atomicEnabled.contains(fd) else { throw Errno.invalidArgument }
        guard masters.contains(fd) || flags.contains(.testOnly) else { throw Errno.permissionDenied }
        let name = { (id: PropertyID) in self.propNames.first { $0.value == id }?.key ?? "?" }
        var byObject: [UInt32: [String: UInt64]] = [:]
        for p in properties { byObject[p.object, default: [:]][name(p.property)] = p.value }
        let writeback = try planWriteback(byObject, flags: flags)
        wb.flipSeqThisCommit = [:]
        // Work out the new state of each CRTC touched.
        var succeeded = false
        defer {
            if succeeded && !flags.contains(.testOnly) {
                for (object, props) in byObject {
                    if let c = props["CRTC_ID"], planes.contains(where: { $0.plane.id.rawValue == object }) {
                        planeBinding[object] = CRTCID(UInt32(c))
                    }
                }
            }
        }
        for crtc in crtcs.map(\.id) {
            let crtcProps = byObject[crtc.rawValue] ?? [:]
            let primary = planes.first { p in
                guard p.kind == .primary, let props = byObject[p.plane.id.rawValue] else { return false }
                if let bound = props["CRTC_ID"] { return bound == UInt64(crtc.rawValue) }
                return props["FB_ID"] != nil && planeBinding[p.plane.id.rawValue] == crtc
            }
            let planeFB = primary.flatMap { byObject[$0.plane.id.rawValue]?["FB_ID"] }.map { FramebufferID(UInt32($0)) }
            let conns = connectors.filter { byObject[$0.id.rawValue]?["CRTC_ID"] == UInt64(crtc.rawValue) }.map(\.id)
            guard let rt = crtcState[crtc] else { continue }
            let modeChange = crtcProps["MODE_ID"] != nil || crtcProps["ACTIVE"] != nil
            if modeChange {
                guard flags.contains(.allowModeset) else { throw Errno.invalidArgument }
                if rt.pendingFlip { throw Errno.resourceBusy }
                var mode: ModeInfo?
                if crtcProps["ACTIVE"] != 0, let blob = crtcProps["MODE_ID"], blob != 0 {
                    guard let bytes = blobs[UInt32(blob)], let m = ModeInfo(kernelBytes: bytes) else { throw Errno.invalidArgument }
                    mode = m
                }
                if mode != nil { guard let fb = planeFB, fb.rawValue != 0, !conns.isEmpty else { throw Errno.invalidArgument } }
                if flags.contains(.testOnly) {
                    if let fb = planeFB { try checkFB(fb) }
                    continue
                }
                try modeset(crtc, fb: planeFB ?? FramebufferID(0), connectors: mode == nil ? [] : conns, mode: mode)
                if let v = crtcProps["VRR_ENABLED"] { setVRR(crtc, v != 0) } else if mode == nil { setVRR(crtc, false) }
                if flags.contains(.pageFlipEvent), mode != nil {
                    // The modeset's completion event fires at the new timing's first vblank.
                    scheduleFlip(crtc, fb: planeFB!, userData: userData)
                }
            } else if let v = crtcProps["VRR_ENABLED"], planeFB == nil {
                // VRR_ENABLED alone needs no modeset.
                if !flags.contains(.testOnly) { setVRR(crtc, v != 0) }
            } else if let fb = planeFB {
                guard rt.active else { throw Errno.invalidArgument }
                if let v = crtcProps["VRR_ENABLED"], !flags.contains(.testOnly) { setVRR(crtc, v != 0) }
                try checkFB(fb)
                if flags.contains(.testOnly) { continue }
                guard !rt.pendingFlip else { throw Errno.resourceBusy }
                if flags.contains(.pageFlipEvent) { scheduleFlip(crtc, fb: fb, userData: userData) } else {
                    crtcState[crtc]?.fb = fb
                    noteLatch(crtc, seq: vblank(crtc, at: clock).seq + 1, fb: fb)
                }
            }
        }
        succeeded = true
        if !flags.contains(.testOnly) { applyWriteback(writeback) }
    }

    func crtcGetSequence(_ fd: Int32, _ crtc: CRTCID) throws -> VBlankReading {
        try record("drmCrtcGetSequence")
        guard hasVBlank else { throw Errno.eopnotsupp }
        guard crtcState[crtc]?.active == true else { throw Errno.invalidArgument }
        let v = vblank(crtc, at: clock)
        return VBlankReading(sequence: v.seq, timestampNs: v.time + jitter(crtc, v.seq))
    }

    func crtcQueueSequence(_ fd: Int32, _ crtc: CRTCID, flags: SequenceFlags, sequence: UInt64, userData: UInt64) throws -> UInt64 {
        try record("drmCrtcQueueSequence")
        guard hasVBlank else { throw Errno.eopnotsupp }
        guard crtcState[crtc]?.active == true else { throw Errno.invalidArgument }
        let now = vblank(crtc, at: clock).seq
        var target = flags.contains(.relative) ? now + sequence : sequence
        if target <= now && flags.contains(.nextOnMiss) { target = now + 1 }
        let at = max(vblankTime(crtc, seq: target), clock)
        let stamp = at + jitter(crtc, target)
        pending.append(PendingEvent(readyAt: max(at, stamp) + receiptLatencyNs,
                                    event: DRMEvent(kind: .sequence, sequence: target, timestampNs: stamp, userData: userData),
                                    fb: nil, crtc: crtc))
        return target
    }

    func waitVBlankQuery(_ fd: Int32, crtcIndex: Int) throws -> VBlankReading {
        try record("drmWaitVBlank")
        guard hasVBlank else { throw Errno.eopnotsupp }
        guard crtcIndex < crtcs.count, crtcState[crtcs[crtcIndex].id]?.active == true else { throw Errno.invalidArgument }
        let v = vblank(crtcs[crtcIndex].id, at: clock)
        return VBlankReading(sequence: v.seq & 0xffff_ffff, timestampNs: (v.time + jitter(crtcs[crtcIndex].id, v.seq)) / 1000 * 1000)
    }

    func waitVBlankEvent(_ fd: Int32, crtcIndex: Int, absoluteSequence: UInt32, userData: UInt64) throws -> UInt32 {
        try record("drmWaitVBlank(EVENT)")
        guard hasVBlank else { throw Errno.eopnotsupp }
        guard crtcIndex < crtcs.count, crtcState[crtcs[crtcIndex].id]?.active == true else { throw Errno.invalidArgument }
        let crtc = crtcs[crtcIndex].id
        let now = vblank(crtc, at: clock).seq
        let high = now & ~0xffff_ffff
        var target = high | UInt64(absoluteSequence)
        if Int64(bitPattern: target &- now) < 0 { target = now + 1 }
        if target <= now { target = now + 1 }
        let at = vblankTime(crtc, seq: target)
        let stamp = at + jitter(crtc, target)
        pending.append(PendingEvent(readyAt: max(at, stamp) + receiptLatencyNs,
                                    event: DRMEvent(kind: .vblank, sequence: target & 0xffff_ffff, timestampNs: stamp / 1000 * 1000, userData: userData),
                                    fb: nil, crtc: crtc))
        return UInt32(truncatingIfNeeded: target)
    }

    func poll(_ fd: Int32, timeoutNs: Int64) throws -> Bool {
        try record("poll")
        let deadline = clock + max(0, timeoutNs)
        if usesWallClock { return try wallPoll(until: deadline) }
        guard let first = pending.map(\.readyAt).min(), first <= deadline else {
            clock = deadline
            return false
        }
        clock = max(clock, first)
        return true
    }

    func handleEvents(_ fd: Int32, into events: inout [DRMEvent]) throws {
        try record("drmHandleEvent")
        let ready = pending.filter { $0.readyAt <= clock }.sorted { $0.readyAt < $1.readyAt }
        pending.removeAll { $0.readyAt <= clock }
        for p in ready where p.event.kind == .flipComplete {
            crtcState[p.crtc]?.pendingFlip = false
            flipCompletions.append(FlipCompletion(crtc: p.crtc, sequence: p.event.sequence, timestampNs: p.event.timestampNs))
            if let fb = p.fb {
                crtcState[p.crtc]?.fb = fb
                presented.append(fb)
            }
        }
        for p in ready { events.append(p.event) }
    }

    func monotonicNow() -> Int64 {
        syncWallClock()
        return clock
    }

    func busyWait(until deadline: Int64) {
        busyWaitNanoseconds &+= max(0, deadline &- monotonicNow())
        passTime(until: deadline)
    }

    func sleep(until deadline: Int64) {
        sleptNanoseconds &+= max(0, deadline &- monotonicNow())
        passTime(until: deadline)
    }

    /// The clock reaches `deadline`: a real sleep on a wall clock, a jump on a virtual one.
    private func passTime(until deadline: Int64) {
        if usesWallClock {
            while !wallSleep(until: deadline) {}
            return
        }
        clock = max(clock, deadline)
    }
}
