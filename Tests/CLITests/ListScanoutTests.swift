import Foundation
import Testing

@testable import cadence

/// `list` shows each CRTC's CRC sources and the writeback connectors (text and `--json`).
@Suite(.serialized) struct ListScanoutTests {
    static let helper = FakeDRMBackendTests()

    @Test func vkmsHasWriteback1AndAutoBochsHasNeither() throws {
        let dir = try Self.helper.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let vkms = try Self.helper.listed("fake-drm", in: dir)
        // drm_info saw Writeback-1: listed apart from the connectors, with the formats vkms writes.
        #expect((vkms["connectors"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Virtual-1"])
        let wb = try #require((vkms["writebackConnectors"] as? [[String: Any]])?.first)
        #expect(wb["name"] as? String == "Writeback-1" && wb["id"] as? Int == 43 && wb["possibleCrtcs"] as? Int == 1)
        #expect(wb["crtc"] as? Int == 0 && (wb["formats"] as? [String])?.contains("XR24") == true)
        #expect(((vkms["crtcs"] as? [[String: Any]])?.first?["crcSources"] as? [String]) == ["auto"])

        let bochs = try Self.helper.listed("fake-drm:bochs", in: dir)
        #expect((bochs["writebackConnectors"] as? [Any])?.isEmpty == true)
        #expect(((bochs["crtcs"] as? [[String: Any]])?.first?["crcSources"] as? [String]) == [])

        let text = try cadence(["list", "--backend", "fake-drm"], in: dir)
        #expect(text.status == 0)
        #expect(
            text.out.contains(
                "  writeback connector Writeback-1 (id 43): CRTC 0, possible CRTCs 0x1, formats XR24 XR48 AR48 RG16\n"),
            "\(text.out)")
        #expect(text.out.contains("  CRTC 35 CRC: sources auto\n"), "\(text.out)")
        let plain = try cadence(["list", "--backend", "fake-drm:bochs"], in: dir)
        #expect(plain.out.contains("  writeback connectors: none\n"), "\(plain.out)")
        #expect(plain.out.contains("  CRTC 35 CRC: none (bochs-drm has no CRC for it)\n"), "\(plain.out)")
    }
}
