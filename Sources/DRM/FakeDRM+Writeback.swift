import SystemPackage

/// A scripted writeback connector (``FakeDRMDevice/writebackConnectors``).
public struct FakeWritebackConnector: Sendable {
    /// Its object id.
    public var id: ConnectorID
    /// 1-based index among writeback connectors (`Writeback-<typeID>`).
    public var typeID: UInt32
    /// Its encoders (their possible CRTCs are the connector's).
    public var encoders: [EncoderID]
    /// The formats it writes (`WRITEBACK_PIXEL_FORMATS`); vkms 6.1: XRGB8888.
    public var formats: [PixelFormat]

    public init(id: ConnectorID, typeID: UInt32 = 1, encoders: [EncoderID], formats: [PixelFormat] = [.xrgb8888]) {
        self.id = id
        self.typeID = typeID
        self.encoders = encoders
        self.formats = formats
    }
}

/// What the fake keeps for its writeback connectors.
struct FakeWritebackState {
    struct Job {
        var number: Int
        var connector: ConnectorID
        var crtc: CRTCID
        var framebuffer: FramebufferID
        /// The vblank whose composition is written.
        var sequence: UInt64
        /// The buffer shown before it (what a stale flip keeps on screen).
        var previous: FramebufferID?
    }
    struct Plan {
        var connector: ConnectorID
        var crtc: CRTCID
        var framebuffer: FramebufferID
        var fencePointer: UInt64
    }
    /// Files that enabled the writeback client cap.
    var enabledFDs: Set<Int32> = []
    /// Writeback connector → the CRTC it is attached to.
    var attached: [ConnectorID: CRTCID] = [:]
    var jobs: [Job] = []
    var jobCount = 0
    /// Open out fences → when they signal.
    var fences: [Int32: Int64] = [:]
    var nextFence: Int32 = 3000
    /// Framebuffer → its format (writeback checks it).
    var fbFormats: [UInt32: PixelFormat] = [:]
    /// The vblank each flip of the commit being made latches at, by CRTC.
    var flipSeqThisCommit: [CRTCID: UInt64] = [:]
    var completions: [FakeDRMDevice.WritebackCompletion] = []
}

/// ``FakeDRMDevice``'s writeback connectors: hidden without the client cap, attached to a CRTC
/// by a modeset, and for each commit that sets `WRITEBACK_FB_ID` a job that copies the content
/// latched at the commit's vblank into that framebuffer once the vblank has passed, its out
/// fence signalling ``FakeDRMDevice/writebackLatencyNs`` later (as vkms' composer does).
extension FakeDRMDevice {
    /// One writeback job done: the vblank it wrote and where.
    public struct WritebackCompletion: Equatable, Sendable {
        public var connector: ConnectorID
        public var crtc: CRTCID
        public var framebuffer: FramebufferID
        /// The vblank whose composed content was written.
        public var sequence: UInt64
        /// False for a job ``FakeDRMDevice/writebackDroppedJobs`` made signal without writing.
        public var written: Bool
    }

    /// Every writeback job completed so far, in order.
    public var writebackCompletions: [WritebackCompletion] { wb.completions }

    /// Out fences handed out and not closed yet.
    public var openWritebackFences: Int { wb.fences.count }

    func writebackConnector(_ w: FakeWritebackConnector) -> Connector {
        let enc = wb.attached[w.id].map { $0.rawValue != 0 } == true ? w.encoders.first ?? EncoderID(0) : EncoderID(0)
        return Connector(
            id: w.id, encoderID: enc, type: WritebackConnector.connectorType, typeID: w.typeID, status: .unknown,
            modes: [], encoders: w.encoders, properties: writebackProps(w))
    }

    func writebackProps(_ w: FakeWritebackConnector) -> [(id: PropertyID, value: UInt64)] {
        // The formats blob, as the kernel keeps it: u32 fourccs.
        let blob = UInt32(w.id.rawValue) + 600
        blobs[blob] = w.formats.flatMap { f in (0..<4).map { UInt8(truncatingIfNeeded: f.rawValue >> (8 * UInt32($0))) }
        }
        return [
            (prop("DPMS"), 0),
            (prop("CRTC_ID"), UInt64(wb.attached[w.id]?.rawValue ?? 0)),
            (prop("WRITEBACK_OUT_FENCE_PTR"), 0),
            (prop("WRITEBACK_FB_ID"), 0),
            (prop("WRITEBACK_PIXEL_FORMATS"), UInt64(blob))
        ]
    }

    /// `possible_clones` of encoder `id` as the kernel reports it: the encoder's own, with its
    /// own bit set (drm_mode_config_validate's fixup); 0 for an encoder the card lacks.
    func possibleClones(of id: EncoderID) -> UInt32 {
        guard let i = encoders.firstIndex(where: { $0.id == id }), i < 32 else { return 0 }
        return encoders[i].possibleClones | 1 << UInt32(i)
    }

    /// The kernel's clone check (drm_atomic_helper_check_modeset, "failed valid clone check"):
    /// the encoders that would drive `crtc`, those of the connectors it drives and writeback
    /// connector `w`'s, must each list all of them in `possible_clones`.
    func clonesAllowed(_ w: FakeWritebackConnector, on crtc: CRTCID) -> Bool {
        var ids = (crtcState[crtc]?.connectors ?? []).compactMap { c in
            connectors.first { $0.id == c }?.encoders.first
        }
        if let e = w.encoders.first { ids.append(e) }
        let mask = ids.reduce(UInt32(0)) { m, id in
            m | (encoders.firstIndex { $0.id == id }.map { $0 < 32 ? 1 << UInt32($0) : 0 } ?? 0)
        }
        return ids.allSatisfy { possibleClones(of: $0) & mask == mask }
    }

    /// Checks a commit's writeback properties as the kernel does (drm_atomic.c,
    /// drm_writeback.c, vkms_writeback.c): attaching needs ALLOW_MODESET, a possible CRTC and
    /// encoders that clone those of the connectors the CRTC drives (`clonesAllowed(_:on:)`); an
    /// FB needs an attached, active CRTC, the mode's size and a listed format; a fence pointer
    /// needs an FB.
    func planWriteback(_ byObject: [UInt32: [String: UInt64]], flags: AtomicFlags) throws -> [FakeWritebackState.Plan] {
        var plans: [FakeWritebackState.Plan] = []
        for w in writebackConnectors {
            guard let props = byObject[w.id.rawValue] else { continue }
            let current = wb.attached[w.id] ?? CRTCID(0)
            var crtc = current
            if let c = props["CRTC_ID"] {
                crtc = CRTCID(UInt32(truncatingIfNeeded: c))
                if crtc != current {
                    guard flags.contains(.allowModeset) else { throw Errno.invalidArgument }
                    if crtc.rawValue != 0 {
                        guard let i = crtcIndex(crtc) else { throw Errno.noSuchFileOrDirectory }
                        let possible = encoders.filter { w.encoders.contains($0.id) }.reduce(UInt32(0)) {
                            $0 | $1.possibleCRTCs
                        }
                        guard possible & (1 << UInt32(i)) != 0 else { throw Errno.invalidArgument }
                        guard clonesAllowed(w, on: crtc) else { throw Errno.invalidArgument }
                    }
                }
            }
            let fb = FramebufferID(UInt32(truncatingIfNeeded: props["WRITEBACK_FB_ID"] ?? 0))
            let fence = props["WRITEBACK_OUT_FENCE_PTR"] ?? 0
            if fb.rawValue == 0 {
                guard fence == 0 else { throw Errno.invalidArgument }
            } else {
                guard crtc.rawValue != 0 else { throw Errno.invalidArgument }
                let activating = byObject[crtc.rawValue]?["ACTIVE"].map { $0 != 0 }
                guard activating ?? (crtcState[crtc]?.active == true) else { throw Errno.invalidArgument }
                guard let f = fbs[fb.rawValue] else { throw Errno.noSuchFileOrDirectory }
                if let mode = crtcState[crtc]?.mode, activating == nil {
                    guard f.width == UInt32(mode.hdisplay), f.height == UInt32(mode.vdisplay) else {
                        throw Errno.invalidArgument
                    }
                }
                guard let format = wb.fbFormats[fb.rawValue], w.formats.contains(format) else {
                    throw Errno.invalidArgument
                }
            }
            plans.append(.init(connector: w.id, crtc: crtc, framebuffer: fb, fencePointer: fence))
        }
        return plans
    }

    /// Applies a committed plan: attachments, and a job (with its fence written where the
    /// pointer points) for each FB.
    func applyWriteback(_ plans: [FakeWritebackState.Plan]) {
        for p in plans {
            wb.attached[p.connector] = p.crtc
            guard p.framebuffer.rawValue != 0 else { continue }
            wb.jobCount += 1
            let seq = wb.flipSeqThisCommit[p.crtc] ?? vblank(p.crtc, at: clock).seq + 1
            var previous: FramebufferID?
            if seq > 0, case .buffer(let fb) = content(p.crtc, at: seq - 1) { previous = fb }
            wb.jobs.append(
                .init(
                    number: wb.jobCount, connector: p.connector, crtc: p.crtc, framebuffer: p.framebuffer,
                    sequence: seq, previous: previous))
            if p.fencePointer != 0, let slot = UnsafeMutablePointer<Int32>(bitPattern: UInt(p.fencePointer)) {
                let fd = wb.nextFence
                wb.nextFence += 1
                wb.fences[fd] = vblankTime(p.crtc, seq: seq) + writebackLatencyNs
                slot.pointee = fd
            }
        }
    }

    /// Runs the jobs whose vblank has passed: copies the content latched there (XRGB8888) into
    /// the job's framebuffer.
    func advanceWriteback() {
        guard !wb.jobs.isEmpty else { return }
        var kept: [FakeWritebackState.Job] = []
        for job in wb.jobs {
            guard crtcState[job.crtc]?.active == true, vblank(job.crtc, at: clock).seq >= job.sequence else {
                kept.append(job)
                continue
            }
            let dropped = writebackDroppedJobs.contains(job.number)
            if !dropped {
                var source: FramebufferID?
                switch content(job.crtc, at: job.sequence) {
                case .buffer(let fb): source = fb
                case .fixed: source = job.previous
                }
                if let s = source { copyPixels(from: s, to: job.framebuffer) }
            }
            wb.completions.append(
                WritebackCompletion(
                    connector: job.connector, crtc: job.crtc, framebuffer: job.framebuffer, sequence: job.sequence,
                    written: !dropped))
        }
        wb.jobs = kept
    }

    /// The pixels and row pitch of a framebuffer the fake made.
    func pixels(of fb: FramebufferID) -> (memory: UnsafeMutableRawPointer, pitch: Int, width: Int, height: Int)? {
        guard let f = fbs[fb.rawValue] else { return nil }
        if let d = dumbs[f.handle] { return (d.memory, Int(d.pitch), Int(f.width), Int(f.height)) }
        if let b = gbmBOs.values.first(where: { $0.handle == f.handle }) {
            return (b.memory, Int(b.stride), Int(f.width), Int(f.height))
        }
        return nil
    }

    func copyPixels(from source: FramebufferID, to target: FramebufferID) {
        guard let s = pixels(of: source), let t = pixels(of: target) else { return }
        let rows = min(s.height, t.height)
        let bytes = min(s.width, t.width) * 4
        for y in 0..<rows { (t.memory + y * t.pitch).copyMemory(from: s.memory + y * s.pitch, byteCount: bytes) }
    }

    func pollFence(_ fd: Int32, timeoutNs: Int64) throws -> Bool {
        try record("poll(fence)")
        guard let at = wb.fences[fd] else { throw Errno.badFileDescriptor }
        if at <= clock { return true }
        let deadline = clock + max(0, timeoutNs)
        if usesWallClock {
            _ = wallSleep(until: min(at, deadline))
        } else {
            clock = min(at, deadline)
        }
        advanceWriteback()
        return at <= clock
    }
}
