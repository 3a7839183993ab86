import Testing
import DRM
@testable import KMSDisplay

/// Mode requests ("WxH[@HZ]") and how they are resolved against a connector's modes.
@Suite struct ModeRequestTests {
    let vkms = ModeInfo(clock: 65000, hdisplay: 1024, hsyncStart: 1048, hsyncEnd: 1184, htotal: 1344,
                        vdisplay: 768, vsyncStart: 771, vsyncEnd: 777, vtotal: 806, type: [.preferred])

    @Test func parseModeRequests() {
        #expect(ModeRequest(parsing: "1024x768") == ModeRequest(width: 1024, height: 768))
        #expect(ModeRequest(parsing: "1024x768@59.94") == ModeRequest(width: 1024, height: 768, hz: 59.94))
        #expect(ModeRequest(parsing: "1024X768@144") == ModeRequest(width: 1024, height: 768, hz: 144))
        for bad in ["", "1024", "x768", "1024x", "1024x768@", "1024x768@abc", "-5x10", "10x10@-3", "1x2x3", "1x2@3@4",
                    "1024x768@1e12", "1024x768@inf", "1024x768@nan", "99999x768", "1024x768@0.5"] {
            #expect(ModeRequest(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func resolveModeRequests() throws {
        let fhd = ModeInfo(clock: 148_500, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                           vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125)
        let modes = [vkms, fhd]
        #expect(ModeRequest(width: 1024, height: 768).resolve(in: modes) == .listed(vkms))
        #expect(ModeRequest(width: 1024, height: 768, hz: 60).resolve(in: modes) == .listed(vkms))
        let scaled = try #require(ModeRequest(width: 1024, height: 768, hz: 144).resolve(in: modes))
        guard case .scaled(let m, let from) = scaled else { Issue.record("expected scaled"); return }
        #expect(from == vkms && abs(m.refreshHz - 144) < 0.001)
        // 59.94 is not 60.0038: a timing is built rather than silently using 60.
        if case .scaled(let m2, _) = ModeRequest(width: 1024, height: 768, hz: 59.94).resolve(in: modes) {
            #expect(abs(m2.refreshHz - 59.94) < 0.0005)
        } else { Issue.record("expected scaled 59.94") }
        // No listed 1280x720: CVT-RB.
        if case .cvt(let c) = ModeRequest(width: 1280, height: 720, hz: 75).resolve(in: modes) {
            #expect(c.hdisplay == 1280 && abs(c.refreshHz - 75) < 0.01)
        } else { Issue.record("expected cvt") }
        // Without a rate an unlisted size is unknown.
        #expect(ModeRequest(width: 1280, height: 720).resolve(in: modes) == nil)
    }
}

@Suite struct NamingAndSequenceTests {
}
