import Testing
@testable import DRM

@Suite struct ModeTests {
    let vkms = ModeInfo(clock: 65000, hdisplay: 1024, hsyncStart: 1048, hsyncEnd: 1184, htotal: 1344,
                        vdisplay: 768, vsyncStart: 771, vsyncEnd: 777, vtotal: 806, type: [.preferred])

    @Test func vkmsRefreshIsExact() {
        #expect(abs(vkms.refreshHz - 60.003_840_3) < 1e-6)
        #expect(vkms.vrefresh == 60)
        #expect(vkms.description == "1024x768@60.0038")
        #expect(abs(vkms.refreshInterval - 16_665_599.99) < 1)
    }

    @Test func ntscRateIs5994() {
        // CEA 1080p59.94: 148.3516 MHz over 2200x1125.
        let m = ModeInfo(clock: 148_352, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                         vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125)
        #expect(abs(m.refreshHz - 59.9402) < 1e-4)
        #expect(ModeInfo.formatHz(m.refreshHz) == "59.9402")
        #expect(abs(m.refreshInterval - 16_683_333) < 200)
    }

    @Test func interlaceDoublesDoublescanHalvesVscanDivides() {
        let i = ModeInfo(clock: 74_250, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                         vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1094, vtotal: 1125, flags: [.interlace])
        #expect(abs(i.refreshHz - 60) < 1e-9)
        #expect(i.name == "1920x1080i")
        let d = ModeInfo(clock: 12_588, hdisplay: 320, hsyncStart: 328, hsyncEnd: 376, htotal: 400,
                         vdisplay: 200, vsyncStart: 206, vsyncEnd: 207, vtotal: 224, flags: [.doublescan])
        #expect(abs(d.refreshHz - 12_588_000.0 / (400 * 224 * 2)) < 1e-9)
        var v = d
        v.flags = []
        v.vscan = 3
        #expect(abs(v.refreshHz - 12_588_000.0 / (400 * 224 * 3)) < 1e-9)
        v.vscan = 1
        #expect(abs(v.refreshHz - 12_588_000.0 / (400 * 224)) < 1e-9)
    }

    @Test func extremeTimingsDoNotTrap() {
        let tiny = ModeInfo(clock: UInt32.max, hdisplay: 1, hsyncStart: 1, hsyncEnd: 1, htotal: 1,
                            vdisplay: 1, vsyncStart: 1, vsyncEnd: 1, vtotal: 1)
        #expect(tiny.vrefresh == UInt32.max)
        #expect(vkms.withClockScaled(toRefresh: 1e15).clock == UInt32.max)
    }

    @Test func degenerateModeIsZeroNotATrap() {
        let m = ModeInfo(clock: 0, hdisplay: 0, hsyncStart: 0, hsyncEnd: 0, htotal: 0,
                         vdisplay: 0, vsyncStart: 0, vsyncEnd: 0, vtotal: 0)
        #expect(m.refreshHz == 0 && m.refreshInterval == 0)
    }

    @Test func clockScaledTo144() {
        let m = vkms.withClockScaled(toRefresh: 144)
        #expect(m.clock == 155_990) // 144 × 1344 × 806 / 1000
        #expect(abs(m.refreshHz - 144) < 0.001)
        #expect(m.htotal == vkms.htotal && m.vtotal == vkms.vtotal)
        #expect(m.type.contains(.userdef) && !m.isPreferred)
    }

    @Test func cvtReducedBlanking() throws {
        let m = try #require(ModeInfo.cvtReducedBlanking(width: 1920, height: 1080, hz: 60))
        // CVT-RB 1920x1080@60: htotal 2080, vtotal 1111.
        #expect(m.htotal == 2080)
        #expect(m.vtotal == 1111)
        #expect(m.vsyncEnd - m.vsyncStart == 5)
        #expect(abs(m.refreshHz - 60) < 0.001)
        let r = try #require(ModeInfo.cvtReducedBlanking(width: 1280, height: 720, hz: 240))
        #expect(abs(r.refreshHz - 240) < 0.01)
        #expect(ModeInfo.cvtReducedBlanking(width: 0, height: 720, hz: 60) == nil)
        #expect(ModeInfo.cvtReducedBlanking(width: 640, height: 480, hz: 5000) == nil)
    }

    @Test func kernelBytesRoundTrip() throws {
        var m = vkms
        m.name = "1024x768"
        #expect(m.kernelBytes.count == 68)
        let back = try #require(ModeInfo(kernelBytes: m.kernelBytes))
        #expect(back == m)
        #expect(ModeInfo(kernelBytes: [1, 2, 3]) == nil)
    }

    @Test func connectorNames() {
        let c = Connector(id: ConnectorID(1), type: 15, typeID: 1, status: .connected, modes: [], encoders: [])
        #expect(c.name == "Virtual-1")
        var h = c
        h.type = 11; h.typeID = 2
        #expect(h.name == "HDMI-A-2")
        h.type = 14; h.typeID = 1
        #expect(h.name == "eDP-1")
        h.type = 99
        #expect(h.name == "Unknown99-1")
    }

    @Test func typedIDsDescribeThemselves() {
        #expect("\(CRTCID(41))" == "CRTC 41")
        #expect(ConnectorID(rawValue: 7) == ConnectorID(7))
        #expect(FramebufferID(0).isNone)
        #expect(PixelFormat.xrgb8888.rawValue == 0x3432_5258)
        #expect(PixelFormat.xrgb8888.description == "XR24")
    }

    @Test func widenAcrossWrap() {
        var w = SequenceWidener()
        #expect(w.widen(0xffff_fffe) == 0xffff_fffe)
        #expect(w.widen(0xffff_ffff) == 0xffff_ffff)
        #expect(w.widen(0) == 0x1_0000_0000)
        #expect(w.widen(3) == 0x1_0000_0003)
        // A late, older event does not move the base backwards.
        #expect(w.widen(2) == 0x1_0000_0002)
        #expect(w.widen(4) == 0x1_0000_0004)
    }

    /// A value from before the first one's epoch (no anchor) is told apart, not taken for 0; a
    /// 64-bit value noted from another stream of the counter places the next ones in its epoch.
    @Test func widenBeforeZeroAndNoted() {
        var w = SequenceWidener()
        #expect(w.widenIfAfterZero(2) == 2)
        #expect(w.widenIfAfterZero(0xffff_fff0) == nil)
        #expect(w.last == 2)
        #expect(w.widen(0xffff_fff0) == 0)
        var lines = SequenceWidener()
        lines.note(0x1_0000_0003)
        #expect(lines.widen(0xffff_fffe) == 0xffff_fffe)
        #expect(lines.widen(5) == 0x1_0000_0005)
        lines.note(0x1_0000_0001)  // an older value does not move it back
        #expect(lines.last == 0x1_0000_0005)
        var anchored = SequenceWidener(anchor: 0x2_ffff_fffd)
        #expect(anchored.widen(1) == 0x3_0000_0001)
        #expect(anchored.widenIfAfterZero(0xffff_fffc) == 0x2_ffff_fffc)
    }

    @Test func errorLineNamesCallObjectAndErrno() {
        let e = DRMError(call: "drmModeSetCrtc", object: "CRTC 41", errno: .resourceBusy)
        #expect(e.description.hasPrefix("drmModeSetCrtc(CRTC 41): "))
        #expect(e.description.hasSuffix("(EBUSY)"))
    }
}
