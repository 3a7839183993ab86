import CadenceCore
import CadenceMetrics
import CadenceReport
import DRM
import DRMTrace
import Foundation

/// `observe` with the CRTC's CRC: content changes per vblank read beside the flips, widened to
/// the flips' 64-bit sequences and judged per CRTC (``ObserveSession`` keeps the state).
extension ObserveSession {
    /// Checks the content of every flip on `crtcs` against the CRC lines given to
    /// ``addCRC(crtc:_:readNs:)`` (taken from `source`, e.g. `auto`): see CadenceCore's
    /// `ScanoutVerifier`.
    public func verifyContent(crtcs: [Int32], source: String) {
        contentSource = source
        for c in crtcs { contents[c] = ScanoutVerifier() }
    }

    /// CRC lines read for `crtc` (the line's frame counter as `sequence`, the folded CRC, when
    /// read), and the time the read took (the cost of the check). Only the low 32 bits of
    /// `sequence` count (the kernel's CRC frame counter is 32-bit): they are widened here against
    /// the CRTC's flips, so that a line and a flip of one vblank have one sequence across a wrap
    /// (0xFFFF_FFFF → 0). Lines read before the CRTC's first traced vblank or flip wait for it.
    public func addCRC(crtc: Int32, _ samples: [ScanoutVerifier.Sample], readNs: Int64 = 0) {
        crcReads += 1
        crcReadNs += readNs
        guard contents[crtc] != nil else { return }
        guard crcWideners[crtc] != nil else {
            var held = heldCRC[crtc] ?? []
            held.append(contentsOf: samples)
            if held.count > Self.heldCRCLimit { held.removeFirst(held.count - Self.heldCRCLimit) }
            heldCRC[crtc] = held
            return
        }
        for x in samples { addWidenedCRC(crtc: crtc, x) }
    }

    /// Adds one CRC sample of `crtc` with its frame counter widened (a line from before the
    /// epoch of the CRTC's first traced sequence is dropped: no flip of its vblank can be named).
    func addWidenedCRC(crtc: Int32, _ x: ScanoutVerifier.Sample) {
        guard let s = crcWideners[crtc]!.widenIfAfterZero(UInt32(truncatingIfNeeded: x.sequence)) else { return }
        contents[crtc]!.add(ScanoutVerifier.Sample(sequence: s, crc: x.crc, receivedAt: x.receivedAt))
    }

    /// A 64-bit sequence of `crtc` from the trace: the CRC lines are widened near it, and those
    /// held for want of one are added.
    func noteSequence(crtc: Int32, _ sequence: UInt64) {
        guard contents[crtc] != nil else { return }
        guard crcWideners[crtc] == nil else {
            crcWideners[crtc]!.note(sequence)
            return
        }
        crcWideners[crtc] = SequenceWidener(anchor: sequence)
        for x in heldCRC.removeValue(forKey: crtc) ?? [] { addWidenedCRC(crtc: crtc, x) }
    }
}
