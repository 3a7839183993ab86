import SystemPackage
import Testing
@testable import DRM

/// The fake device's timing knobs that `--backend fake-drm` profiles set: timestamp jitter,
/// a refresh override, two CRTCs each on its own mode's grid, connector properties and sizes.
@Suite struct FakeDRMTimingTests {
    /// A 2-CRTC device: CRTC 70 at `slow`, CRTC 71 at `fast`, each driving its connector.
    func twoCRTCs(slow: ModeInfo, fast: ModeInfo) -> FakeDRMDevice {
        let d = FakeDRMDevice()
        d.connectors = [
            .init(id: ConnectorID(50), type: 14, modes: [slow], encoders: [EncoderID(52)], sizeMM: (344, 194)),
            .init(id: ConnectorID(51), type: 10, modes: [fast], encoders: [EncoderID(53)], properties: ["vrr_capable": 1]),
        ]
        d.encoders = [Encoder(id: EncoderID(52), possibleCRTCs: 3), Encoder(id: EncoderID(53), possibleCRTCs: 3)]
        d.crtcs = [CRTCState(id: CRTCID(70)), CRTCState(id: CRTCID(71))]
        d.planes = [(Plane(id: PlaneID(40), possibleCRTCs: 1, formats: [.xrgb8888]), .primary),
                    (Plane(id: PlaneID(41), possibleCRTCs: 2, formats: [.xrgb8888]), .primary)]
        d.preset(crtcIndex: 0, mode: slow, framebuffer: FramebufferID(90), connectors: [ConnectorID(50)])
        d.preset(crtcIndex: 1, mode: fast, framebuffer: FramebufferID(91), connectors: [ConnectorID(51)])
        return d
    }

    let mode60 = ModeInfo(clock: 148500, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                          vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125, type: [.preferred])
    let mode144 = ModeInfo(clock: 586345, hdisplay: 2560, hsyncStart: 2608, hsyncEnd: 2640, htotal: 2720,
                           vdisplay: 1440, vsyncStart: 1443, vsyncEnd: 1448, vtotal: 1497, type: [.preferred])

    @Test func twoCRTCsTickAtTheirOwnModes() throws {
        let fake = twoCRTCs(slow: mode60, fast: mode144)
        let dev = try DRMDevice.open(fake: fake)
        let a0 = try dev.crtcSequence(CRTCID(70)), b0 = try dev.crtcSequence(CRTCID(71))
        fake.advance(by: 1_001_000_000) // 1 s and a little: the periods are whole nanoseconds
        let a1 = try dev.crtcSequence(CRTCID(70)), b1 = try dev.crtcSequence(CRTCID(71))
        #expect(a1.sequence - a0.sequence == 60)
        #expect(b1.sequence - b0.sequence == 144)
        // Each connector is driven by its own CRTC; the primary planes report theirs.
        #expect(try dev.encoder(EncoderID(53)).crtcID == CRTCID(71))
        #expect(try dev.plane(PlaneID(41)).crtcID == CRTCID(71) && dev.plane(PlaneID(41)).framebufferID == FramebufferID(91))
        let dp = try dev.connector(ConnectorID(51))
        #expect(dp.name == "DP-1" && dp.widthMM == 260)
        #expect(try dev.connector(ConnectorID(50)).widthMM == 344)
        #expect(try dev.properties(of: ConnectorID(51), type: .connector).contains { $0.info.name == "vrr_capable" && $0.value == 1 })
        #expect(try !dev.properties(of: ConnectorID(50), type: .connector).contains { $0.info.name == "vrr_capable" })
    }

    @Test func jitterIsBoundedSeededAndStable() throws {
        func stamps(seed: UInt64) throws -> [Int64] {
            let fake = FakeDRMDevice()
            fake.preset(mode: fake.connectors[0].modes[0])
            fake.vblankJitterNs = 200_000
            fake.jitterSeed = seed
            let dev = try DRMDevice.open(fake: fake)
            var out: [Int64] = []
            for _ in 0..<200 {
                let v = try dev.crtcSequence(fake.crtcs[0].id)
                // Read twice: one vblank has one timestamp.
                #expect(try dev.crtcSequence(fake.crtcs[0].id) == v)
                let grid = fake.vblankTime(fake.crtcs[0].id, seq: v.sequence)
                out.append(v.timestampNs - grid)
                fake.advance(by: 16_666_667)
            }
            return out
        }
        let a = try stamps(seed: 1), b = try stamps(seed: 1), c = try stamps(seed: 2)
        #expect(a == b && a != c)
        #expect(a.allSatisfy { abs($0) <= 200_000 })
        #expect(a.filter { abs($0) > 100_000 }.count > 20, "spread over the range: \(a.prefix(8))")
    }

    @Test func refreshOverrideSetsThePeriod() throws {
        let fake = FakeDRMDevice()
        fake.preset(mode: fake.connectors[0].modes[0])
        fake.refreshOverrideHz = 50
        let dev = try DRMDevice.open(fake: fake)
        let v0 = try dev.crtcSequence(fake.crtcs[0].id)
        fake.advance(by: 2_000_000_000)
        #expect(try dev.crtcSequence(fake.crtcs[0].id).sequence - v0.sequence == 100)
    }
}
