import SystemPackage

/// What the fake keeps for its CRTCs' CRC: the content latched at each vblank and the running
/// captures with their lines not yet read.
struct FakeCRCState {
    /// What a CRTC shows from a vblank on: a framebuffer's pixels as they are, or a checksum
    /// taken when a stale flip was committed (the content that stayed on screen).
    enum Content: Hashable {
        case buffer(FramebufferID)
        case fixed(UInt32)
    }
    struct Capture {
        var crtc: CRTCID
        var fd: Int32
        var source: String
        /// The next vblank whose line is still to be made.
        var nextFrame: UInt64
        var ready: [(readyAt: Int64, line: CRCLine)] = []
    }
    /// Per CRTC: (first vblank, content) in vblank order.
    var latches: [CRTCID: [(seq: UInt64, content: Content)]] = [:]
    /// Flips committed so far (``FakeDRMDevice/staleFlips`` counts them).
    var flips = 0
    /// The source written to each CRTC index's control file.
    var sources: [Int: String] = [:]
    /// Captures by CRTC index.
    var captures: [Int: Capture] = [:]
    /// Open debugfs files: descriptor → (CRTC index, is the data file).
    var files: [Int32: (crtcIndex: Int, data: Bool)] = [:]
    /// Control files open for reading, and how far each has been read.
    var controlReaders: Set<Int32> = []
    var controlOffsets: [Int32: Int] = [:]
    var nextFD: Int32 = 1000
    /// The kernel's CRC ring: lines beyond it are lost (drm_crtc_add_crc_entry's overflow).
    static let ringSize = 128
}

/// ``FakeDRMDevice``'s debugfs CRC files: `dri/<minor>/crtc-M/crc/{control,data}` with a
/// checksum of the latched framebuffer's visible pixels at every vblank, one line per read as
/// the kernel gives them, and the scripted faults (``FakeDRMDevice/crcSkippedFrames``,
/// ``FakeDRMDevice/crcCatchUps``, ``FakeDRMDevice/staleFlips``).
extension FakeDRMDevice {
    /// The 32-bit checksum the fake's CRC lines carry for a framebuffer's visible pixels (the
    /// X byte of XRGB8888 ignored), standing in for the hardware CRC: equal pixels give equal
    /// values. A framebuffer the fake did not create (fbcon's) gets a value of its id.
    public func contentChecksum(of fb: FramebufferID) -> UInt32 {
        guard let f = fbs[fb.rawValue] else { return 0x9E37_79B9 ^ fb.rawValue }
        let memory: UnsafeMutableRawPointer
        let pitch: Int
        if let d = dumbs[f.handle] {
            memory = d.memory; pitch = Int(d.pitch)
        } else if let b = gbmBOs.values.first(where: { $0.handle == f.handle }) {
            memory = b.memory; pitch = Int(b.stride)
        } else {
            return 0x9E37_79B9 ^ fb.rawValue
        }
        var h: UInt32 = 0x811C_9DC5
        for y in 0..<Int(f.height) {
            let row = (memory + y * pitch).assumingMemoryBound(to: UInt32.self)
            for x in 0..<Int(f.width) {
                h = (h ^ (row[x] & 0x00ff_ffff)) &* 0x0100_0193
            }
        }
        return h
    }

    func noteLatch(_ crtc: CRTCID, seq: UInt64, fb: FramebufferID) {
        var list = crc.latches[crtc] ?? []
        list.removeAll { $0.seq >= seq }
        list.append((seq, .buffer(fb)))
        crc.latches[crtc] = list
    }

    /// A flip committed to latch `fb` at `seq`; a stale flip latches the content on screen.
    func noteFlipLatch(_ crtc: CRTCID, seq: UInt64, fb: FramebufferID) {
        crc.flips += 1
        wb.flipSeqThisCommit[crtc] = seq
        if staleFlips.contains(crc.flips), let shown = crc.latches[crtc]?.last?.content {
            var list = crc.latches[crtc] ?? []
            list.append((seq, .fixed(checksum(shown))))
            crc.latches[crtc] = list
        } else {
            noteLatch(crtc, seq: seq, fb: fb)
        }
    }

    func checksum(_ content: FakeCRCState.Content) -> UInt32 {
        switch content {
        case .buffer(let fb): return contentChecksum(of: fb)
        case .fixed(let v): return v
        }
    }

    func content(_ crtc: CRTCID, at seq: UInt64) -> FakeCRCState.Content {
        crc.latches[crtc]?.last { $0.seq <= seq }?.content ?? .buffer(crtcState[crtc]?.fb ?? FramebufferID(0))
    }

    /// Makes the lines of every vblank passed since the last call (on every seam call, so that
    /// a buffer is checksummed before the code under test can reuse it).
    func advanceCRC() {
        guard !crc.captures.isEmpty else { return }
        for index in crc.captures.keys.sorted() {
            guard var cap = crc.captures[index], crtcState[cap.crtc]?.active == true else { continue }
            let now = vblank(cap.crtc, at: clock).seq
            var memo: [FakeCRCState.Content: UInt32] = [:]
            func value(_ c: FakeCRCState.Content) -> UInt32 {
                if let v = memo[c] { return v }
                let v = checksum(c)
                memo[c] = v
                return v
            }
            func add(_ frame: UInt64, _ v: UInt32, readyAt: Int64) {
                guard !crcSkippedFrames.contains(frame), cap.ready.count < FakeCRCState.ringSize else { return }
                cap.ready.append((readyAt, CRCLine(frame: UInt32(truncatingIfNeeded: frame), values: [v])))
            }
            while cap.nextFrame <= now {
                let f = cap.nextFrame
                if let r = crcCatchUps.first(where: { $0.contains(f) }) {
                    // The worker ran once, after the range's last vblank, for all of it.
                    guard r.upperBound <= now else { break }
                    let v = value(content(cap.crtc, at: r.upperBound))
                    let at = vblankTime(cap.crtc, seq: r.upperBound) + crcLatencyNs
                    for g in f...r.upperBound { add(g, v, readyAt: at) }
                    cap.nextFrame = r.upperBound + 1
                    continue
                }
                add(f, value(content(cap.crtc, at: f)), readyAt: vblankTime(cap.crtc, seq: f) + crcLatencyNs)
                cap.nextFrame = f + 1
            }
            crc.captures[index] = cap
            // Keep the latch in force at the next vblank to make and every later one.
            if var list = crc.latches[cap.crtc], let keep = list.lastIndex(where: { $0.seq <= cap.nextFrame }), keep > 0
            {
                list.removeFirst(keep)
                crc.latches[cap.crtc] = list
            }
        }
    }

    // MARK: debugfs paths

    var cardMinor: UInt32 {
        UInt32(String(path.reversed().prefix { $0.isNumber }.reversed())) ?? 0
    }

    enum DebugfsNode {
        case dri, card
        case crcDirectory(Int)
        case control(Int)
        case data(Int)
    }

    /// What `path` names under debugfs, or nil (ENOENT).
    func debugfsNode(_ path: String) -> DebugfsNode? {
        let parts = path.split(separator: "/")
        guard let d = parts.lastIndex(of: "dri") else { return nil }
        let rest = parts[(d + 1)...]
        if rest.isEmpty { return .dri }
        guard let first = rest.first, UInt32(first) == cardMinor else { return nil }
        let tail = Array(rest.dropFirst())
        if tail.isEmpty { return .card }
        guard tail[0].hasPrefix("crtc-"), let i = Int(tail[0].dropFirst(5)), i >= 0, i < crtcs.count,
            !crcSources.isEmpty, tail.count >= 2, tail[1] == "crc"
        else { return nil }
        switch tail.count {
        case 2: return .crcDirectory(i)
        case 3 where tail[2] == "control": return .control(i)
        case 3 where tail[2] == "data": return .data(i)
        default: return nil
        }
    }

    // MARK: DRMSystem

    func deviceMinor(_ fd: Int32) throws -> UInt32 {
        try record("fstat")
        guard openFDs.contains(fd) else { throw Errno.badFileDescriptor }
        return cardMinor
    }

    func isDirectory(_ path: String) throws -> Bool {
        try record("stat")
        if let debugfsError { throw debugfsError }
        switch debugfsNode(path) {
        case .dri?, .card?, .crcDirectory?: return true
        case .control?, .data?: return false
        case nil: throw Errno.noSuchFileOrDirectory
        }
    }

    func openFile(_ path: String, writeOnly: Bool) throws -> Int32 {
        try record(path.hasSuffix("/control") || writeOnly ? "open(crc/control)" : "open(crc/data)")
        if let debugfsError { throw debugfsError }
        let fd = crc.nextFD
        switch debugfsNode(path) {
        case .control(let i)?:
            crc.files[fd] = (i, false)
            if !writeOnly { crc.controlReaders.insert(fd) }
        case .data(let i)?:
            guard !writeOnly else { throw Errno.invalidArgument }
            guard crc.captures[i] == nil else { throw Errno.resourceBusy }
            let crtc = crtcs[i].id
            // drm_debugfs_crc.c: no capture on an inactive CRTC.
            guard crtcState[crtc]?.active == true else { throw Errno.ioError }
            let source = crc.sources[i] ?? crcSources[0]
            crc.captures[i] = FakeCRCState.Capture(
                crtc: crtc, fd: fd, source: source,
                nextFrame: vblank(crtc, at: clock).seq + 1)
            crc.files[fd] = (i, true)
        case .dri?, .card?, .crcDirectory?: throw Errno.isDirectory
        case nil: throw Errno.noSuchFileOrDirectory
        }
        crc.nextFD += 1
        return fd
    }

    func writeFile(_ fd: Int32, _ bytes: [UInt8]) throws -> Int {
        try record("write(crc/control)")
        guard let f = crc.files[fd], !f.data, !crc.controlReaders.contains(fd) else { throw Errno.badFileDescriptor }
        var source = String(decoding: bytes, as: UTF8.self)
        while source.hasSuffix("\n") { source.removeLast() }
        // The control file cannot change while the data file is open.
        guard crc.captures[f.crtcIndex] == nil else { throw Errno.resourceBusy }
        guard crcSources.contains(source) else { throw Errno.invalidArgument }
        crc.sources[f.crtcIndex] = source
        return bytes.count
    }

    func readFile(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if crc.controlReaders.contains(fd), let f = crc.files[fd] {
            try record("read(crc/control)")
            // As crc_control_show: the sources the CRTC offers, one a line, the selected one with a `*`.
            let selected = crc.sources[f.crtcIndex]
            let text = crcSources.map { $0 == selected ? $0 + "*\n" : $0 + "\n" }.joined()
            let bytes = Array(text.utf8)
            let offset = crc.controlOffsets[fd] ?? 0
            let n = min(buffer.count, bytes.count - offset)
            buffer.copyBytes(from: bytes[offset..<(offset + n)])
            crc.controlOffsets[fd] = offset + n
            return n
        }
        try record("read(crc/data)")
        guard let f = crc.files[fd], f.data, var cap = crc.captures[f.crtcIndex] else { throw Errno.badFileDescriptor }
        guard buffer.count >= CRCLine.maximumLength else { throw Errno.invalidArgument }
        guard let first = cap.ready.first, first.readyAt <= clock else { throw Errno.resourceTemporarilyUnavailable }
        cap.ready.removeFirst()
        crc.captures[f.crtcIndex] = cap
        // As the kernel: the line, a newline and a NUL (drm_debugfs_crc.c's LINE_LEN).
        let bytes = Array((first.line.description + "\n\0").utf8)
        buffer.copyBytes(from: bytes)
        return bytes.count
    }

    func closeFile(_ fd: Int32) {
        calls.append("close(debugfs)")
        if wb.fences.removeValue(forKey: fd) != nil { return }
        crc.controlReaders.remove(fd)
        crc.controlOffsets[fd] = nil
        guard let f = crc.files.removeValue(forKey: fd) else { return }
        if f.data { crc.captures[f.crtcIndex] = nil }
    }

    /// Page flips committed so far (what ``staleFlips`` counts).
    public var committedFlips: Int { crc.flips }

    /// Lines made for the capture on the CRTC at `crtcIndex` and not read yet, ready or not.
    public func pendingCRCLines(crtcIndex: Int = 0) -> Int { crc.captures[crtcIndex]?.ready.count ?? 0 }
}
