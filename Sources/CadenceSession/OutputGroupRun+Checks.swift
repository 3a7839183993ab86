import CadenceCore
import KMSDisplay
import Scenes

/// What each output of an ``OutputGroupRun`` draws, and the scanout checks around its run:
/// starting the CRC and writeback captures, and their results in the summary.
extension OutputGroupRun {
    /// Draws `scene` (with the HUD, the frame identity), or plain colours without a scene; the
    /// stale frame draws the previous frame's content again.
    static func makeRenderer(
        scene: (any Scene)?, hud: HUDSink?, captures: WritebackCaptures, staleFrame: Int?, identity: Bool
    ) -> FrameRenderer {
        guard let scene else {
            let colours: [UInt32] = [0x00C0_3030, 0x0030_C030, 0x0030_30C0, 0x00C0_C030]
            return { surface, ctx in
                let index = ctx.frameIndex == staleFrame && ctx.frameIndex > 0 ? ctx.frameIndex - 1 : ctx.frameIndex
                captures.rendered(ctx.frameIndex)
                surface.fill(colours[index & 3])
                if identity {
                    FrameIdentity.draw(
                        index, base: surface.base, width: surface.width, height: surface.height, stride: surface.stride)
                }
            }
        }
        let sr = SceneRenderer(scene: scene)
        return { surface, ctx in
            let index = ctx.frameIndex == staleFrame && ctx.frameIndex > 0 ? ctx.frameIndex - 1 : ctx.frameIndex
            captures.rendered(ctx.frameIndex)
            var c = SceneContext(ctx)
            c.frameIndex = index
            if let h = hud {
                if h.stats == nil { h.stats = HUDStats(refreshHz: ctx.refreshHz, effectiveRateHz: ctx.effectiveRateHz) }
                h.stats!.effectiveRateHz = ctx.effectiveRateHz
            }
            sr.render(
                base: surface.base, width: surface.width, height: surface.height, stride: surface.stride, context: c,
                hud: hud?.stats, identity: identity)
        }
    }

    static func startCRC(_ display: any DisplayBackend) throws {
        guard let k = display as? KMSDisplay else { throw Refusal.checkNeedsKMS(check: "crc", display: display.name) }
        do { try k.verifyScanout() } catch { throw Refusal.crcUnavailable(error) }
    }

    /// Capturing on a mismatch without the CRC check, which flags the frames.
    struct OnMismatchNeedsCRC: Error, CustomStringConvertible {
        var description: String { "capturing on a mismatch needs the CRC check too (the CRC flags the frames)" }
    }

    static func startWriteback(
        _ display: any DisplayBackend, captures: WritebackCaptures, onMismatch: Bool
    ) throws {
        guard let k = display as? KMSDisplay else {
            throw Refusal.checkNeedsKMS(check: "writeback", display: display.name)
        }
        do {
            try k.startWriteback(
                onMismatch: onMismatch,
                request: { captures.take() },
                deliver: { c in
                    captures.check(
                        label: c.label, width: c.width, height: c.height, rendered: c.rendered, captured: c.captured,
                        reason: c.reason, changeVBlank: c.changeVBlank)
                })
        } catch {
            throw Refusal.writebackUnavailable(error)
        }
    }

    /// The scanout checks' results in the summary: the CRC's (its stale frames as indexes)
    /// and the writeback captures'. Capturing on a mismatch, the stale frames the full verdict
    /// found and the early one did not flag count as skipped too (their signal came too late).
    static func amendChecks(_ summary: inout RunSummary, _ o: Output) {
        guard let k = o.display as? KMSDisplay else { return }
        if let indexes = o.indexes, var scanout = k.finishScanoutVerification() {
            scanout.staleFrames = scanout.staleFrames.map { FrameID(indexes.indexes[$0] ?? Int($0)) }
            summary.scanout = scanout
        }
        if let stats = k.finishWriteback() {
            var scanout = summary.scanout ?? ScanoutSummary()
            var skipped = stats.skipped
            if stats.onMismatch != nil { skipped += max(0, scanout.stale - stats.earlyStaleFlags) }
            scanout.writeback = o.captures.finish(
                skipped: skipped, timedOut: stats.timedOut, readMicroseconds: stats.readMicroseconds,
                onMismatch: stats.onMismatch)
            summary.scanout = scanout
        }
    }
}
