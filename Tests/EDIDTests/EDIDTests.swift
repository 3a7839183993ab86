import Testing
@testable import EDID

@Suite struct BaseBlockTests {
    @Test func identityFields() throws {
        let e = try EDID(EDIDBuilder.monitor().bytes())
        #expect(e.version == 1 && e.revision == 4)
        #expect(e.manufacturer == "DEL")
        #expect(e.productCode == 0x4321)
        #expect(e.serialNumber == 123_456)
        #expect(e.serialString == "7XK2L13")
        #expect(e.name == "DELL S2721DGF")
        #expect(e.week == 12 && e.year == 2021 && e.modelYear == nil)
        #expect(e.isDigital && e.digitalInterface == .displayPort && e.bitsPerColor == 10)
        #expect(e.sizeCM?.width == 60 && e.sizeCM?.height == 34)
        #expect(abs((e.diagonalInches ?? 0) - 27.15) < 0.01)
        #expect(e.warnings.isEmpty)
    }

    @Test func preferredTimingRefreshIsExact() throws {
        let e = try EDID(EDIDBuilder.monitor().bytes())
        let p = try #require(e.preferredTiming)
        #expect(p.hActive == 2560 && p.vActive == 1440 && p.hTotal == 2720 && p.vTotalPerField == 1481)
        #expect(p.refreshHz == 580_080_000.0 / (2720.0 * 1481.0))
        #expect(p.imageSizeMM.width == 597 && p.hSyncPositive && p.vSyncPositive)
        #expect(p.source == .detailed(block: 0, number: 1))
        #expect(p.native)  // the CTA block declares one native DTD
    }

    @Test func modelYearZeroSerialAndEDID13WithoutPreferredBit() throws {
        var b = EDIDBuilder.monitor()
        b.week = 0xFF; b.year = 2019; b.serial = 0; b.revision = 3; b.features = 0
        b.extensions = []
        let e = try EDID(b.bytes())
        #expect(e.modelYear == 2019 && e.year == nil && e.week == nil)
        #expect(e.serialNumber == nil)
        #expect(e.digitalInterface == nil && e.bitsPerColor == nil)  // EDID 1.3 has neither
        #expect(e.preferredTiming == nil)  // 1.3 without byte 0x18 bit 1
        #expect(e.timings.count == 1)
    }

    @Test func nameSplitOverTwoDescriptorsIsJoined() throws {
        var b = EDIDBuilder()
        b.descriptors = [EDIDBuilder.text(0xFC, "Studioworks N"), EDIDBuilder.text(0xFC, "2200P"), EDIDBuilder.text(0xFE, "note  ")]
        let e = try EDID(b.bytes())
        #expect(e.name == "Studioworks N2200P")
        #expect(e.strings == ["note"])
    }

    @Test func rangeLimitsWithEDID14Offsets() throws {
        var b = EDIDBuilder()
        b.features = 0x01
        // 48–300 Hz: max vertical + 255 (byte 4 bit 1); 30–600 kHz: max horizontal + 255 (bit 3).
        b.descriptors = [EDIDBuilder.rangeLimits(vmin: 48, vmax: 45, hmin: 30, hmax: 90, clockMHz: 1200, offsets: 0x0A, kind: 0x04)]
        let e = try EDID(b.bytes())
        let r = try #require(e.rangeLimits)
        #expect(r.minVerticalHz == 48 && r.maxVerticalHz == 300)
        #expect(r.minHorizontalKHz == 30 && r.maxHorizontalKHz == 345)
        #expect(r.maxPixelClockMHz == 1200 && r.kind == "CVT")
        #expect(e.vrrRanges == [VRRRange(minHz: 48, maxHz: 300, source: .rangeLimits)])
        #expect(e.adaptiveSyncRange?.source == .rangeLimits)  // continuous frequency, EDID 1.4
    }

    @Test func fixedRateRangeLimitsAreNotAnAdaptiveSyncRange() throws {
        var b = EDIDBuilder()
        b.features = 0x02  // not continuous frequency
        b.descriptors = [EDIDBuilder.rangeLimits(vmin: 56, vmax: 76, hmin: 30, hmax: 83, clockMHz: 170)]
        let e = try EDID(b.bytes())
        #expect(e.vrrRanges.count == 1)
        #expect(e.adaptiveSyncRange == nil)
    }

    @Test func establishedAndStandardTimingsAreDMTExact() throws {
        var b = EDIDBuilder()
        b.established = [0x20, 0x08, 0x80]  // 640x480@60, 1024x768@60, 1152x870@75
        b.standard = [(0x81, 0xC0), (0xD1, 0xC0), (0x81, 0x8F)]  // 1280x720@60, 1920x1080@60, 1280x1024@75 is 0x818F
        let e = try EDID(b.bytes())
        let est = e.timings.filter { $0.source == .established }
        #expect(est.map(\.hActive) == [640, 1024, 1152])
        #expect(abs(est[0].refreshHz - 59.940476) < 1e-6)
        #expect(abs(est[2].refreshHz - 75.061550) < 1e-6)
        let std = e.timings.filter { $0.source == .standard }
        #expect(std.map { "\($0.hActive)x\($0.vActive)" } == ["1280x720", "1920x1080", "1280x1024"])
        #expect(std[1].refreshHz == 60)
    }

    @Test func interlacedDTDGivesTheFieldRate() throws {
        var b = EDIDBuilder()
        b.descriptors = [EDIDBuilder.dtd(clockKHz: 74_250, h: 1920, hblank: 280, hfp: 88, hsync: 44, v: 540, vblank: 22, vfp: 2, vsync: 5, flags: 0x9E)]
        let t = try #require(try EDID(b.bytes()).preferredTiming)
        #expect(t.interlaced && t.vActive == 1080)
        #expect(t.vTotalPerField == 562.5)
        #expect(t.refreshHz == 60)
    }

    @Test func tinyPixelClockDTDIsSkippedWithAWarning() throws {
        var b = EDIDBuilder()
        b.descriptors = [[0x01, 0x00] + [UInt8](repeating: 0x10, count: 16)]
        let e = try EDID(b.bytes())
        #expect(e.timings.isEmpty)
        #expect(e.warnings.contains { $0.contains("below 10 MHz") })
    }
}

@Suite struct CTATests {
    static func tv() -> [UInt8] {
        var b = EDIDBuilder()
        b.manufacturer = "SAM"; b.input = 0x80; b.revision = 3
        b.descriptors = [EDIDBuilder.dtd(clockKHz: 594_000, h: 3840, hblank: 560, hfp: 176, hsync: 88, v: 2160, vblank: 90, vfp: 8, vsync: 10)]
        let hdmi: [UInt8] = [0x03, 0x0C, 0x00, 0x10, 0x00, 0x80, 0x3C, 0x20, 0x00, 0x20, 0x01, 0x02]
        let hf: [UInt8] = [0xD8, 0x5D, 0xC4, 0x01, 0x78, 0x80, 0x00, 0x02, 0x28 | 0x40, 0x20]  // VRR 40–(1<<8|0x20)=288
        let hdr: [UInt8] = [0x06, 0x0D, 0x01, 0x60, 0x50, 0x10]
        b.extensions = [EDIDBuilder.cta([
            EDIDBuilder.dataBlock(2, [0x80 | 16, 5, 39, 97, 4]),
            EDIDBuilder.dataBlock(3, hdmi), EDIDBuilder.dataBlock(3, hf), EDIDBuilder.dataBlock(7, hdr),
        ], dtds: [EDIDBuilder.dtd(clockKHz: 148_500, h: 1920, hblank: 280, hfp: 88, hsync: 44, v: 1080, vblank: 45, vfp: 4, vsync: 5)])]
        return b.bytes()
    }

    @Test func vicsWithExactAndFractionalRates() throws {
        let e = try EDID(Self.tv())
        let c = try #require(e.cta)
        #expect(c.vics == [16, 5, 39, 97, 4] && c.nativeVICs == [16])
        let v16 = try #require(e.timings.first { $0.source == .vic(16) })
        #expect(v16.refreshHz == 60 && v16.native)
        #expect(v16.fractionalRefreshHz == 60.0 * 1000 / 1001)
        let v5 = try #require(e.timings.first { $0.source == .vic(5) })
        #expect(v5.interlaced && v5.refreshHz == 60)
        let v39 = try #require(e.timings.first { $0.source == .vic(39) })
        #expect(v39.evenVTotal && v39.refreshHz == 50 && v39.fractionalRefreshHz == nil)
        let v97 = try #require(e.timings.first { $0.source == .vic(97) })
        #expect(v97.hActive == 3840 && v97.refreshHz == 60)
    }

    @Test func hdmiAndHDMIForumVSDBs() throws {
        let e = try EDID(Self.tv())
        let c = try #require(e.cta)
        #expect(c.hdmi == HDMIVSDB(physicalAddress: "1.0.0.0", maxTMDSClockMHz: 300))
        #expect(e.timings.contains { $0.source == .hdmiVIC(1) && $0.hActive == 3840 && $0.refreshHz == 30 })
        let hf = try #require(c.hdmiForum)
        #expect(hf.maxTMDSRateMHz == 600 && hf.allm)
        #expect(hf.vrrMinHz == 40 && hf.vrrMaxHz == 288)
        #expect(e.vrrRanges == [VRRRange(minHz: 40, maxHz: 288, source: .hdmiForum)])
        #expect(e.adaptiveSyncRange?.source == .hdmiForum)
    }

    @Test func hdrStaticMetadata() throws {
        let h = try #require(try EDID(Self.tv()).cta?.hdr)
        #expect(h.eotfs == ["SDR", "PQ", "HLG"])
        #expect(abs((h.maxLuminance ?? 0) - 400) < 1e-9)  // 50·2^(96/32)
        #expect(abs((h.maxFrameAverageLuminance ?? 0) - 50 * pow2(2.5)) < 1e-9)
        #expect(abs(pow2(2.5) - 5.656854249) < 1e-8)
    }

    @Test func ctaDTDsAreNumberedAfterTheBaseBlock() throws {
        let e = try EDID(Self.tv())
        let d = e.timings.filter { if case .detailed = $0.source { return true } else { return false } }
        #expect(d.map(\.source) == [.detailed(block: 0, number: 1), .detailed(block: 1, number: 2)])
        #expect(d[0].native && !d[1].native)
    }

    @Test func freeSyncVSDB() throws {
        let e = try EDID(EDIDBuilder.monitor().bytes())
        #expect(e.cta?.amdFreeSync == AMDFreeSync(version: "1.1", minHz: 48, maxHz: 144))
        #expect(e.vrrRanges.map(\.source) == [.rangeLimits, .amdFreeSync])
        #expect(e.adaptiveSyncRange == VRRRange(minHz: 48, maxHz: 144, source: .amdFreeSync))
    }

    @Test func dataBlockPastTheDTDOffsetIsReported() throws {
        var b = EDIDBuilder()
        var cta = EDIDBuilder.cta([EDIDBuilder.dataBlock(2, [16, 4])])
        cta[4] = 2 << 5 | 20  // claims 20 bytes; the DTD offset is 7
        EDIDBuilder.seal(&cta)
        b.extensions = [cta]
        let e = try EDID(b.bytes())
        #expect(e.warnings.contains { $0.contains("runs past") })
        #expect(e.cta?.vics == [])
    }
}

@Suite struct DisplayIDTests {
    /// A tile of a 2x1 5K monitor, DisplayID 1.2: type 1 timing (preferred), tiles, range limits.
    static func tile() -> [UInt8] {
        let t1: [UInt8] = [0x03, 0x00, 20,
                           0xBF, 0x5D, 0x00, 0x84,  // 240 MHz = (23999+1)·10 kHz, 16:9, preferred
                           0xFF, 0x09, 0x9F, 0x00, 0x2F, 0x80, 0x1F, 0x00,  // 2560, hbl 160, hfp 48 (+), hsync 32
                           0x3F, 0x0B, 0x28, 0x00, 0x02, 0x80, 0x04, 0x00]  // 2880, vbl 41, vfp 3 (+), vsync 5
        let tiles: [UInt8] = [0x12, 0x00, 22, 0x82, 0x10, 0x10, 0x00, 0xFF, 0x09, 0x3F, 0x0B, 0, 0, 0, 0, 0,
                              0x41, 0x50, 0x50, 0x13, 0xAE, 0x7F, 0x96, 0x63, 0x59]
        let range: [UInt8] = [0x09, 0x00, 15, 0x0F, 0x27, 0x00, 0xBF, 0x5D, 0x00, 30, 200, 0x50, 0x00, 24, 60, 0x29, 0x00, 0x00]
        var b = EDIDBuilder()
        b.manufacturer = "APP"
        b.extensions = [EDIDBuilder.displayID(version: 0x12, productType: 0, [t1, tiles, range])]
        return b.bytes()
    }

    @Test func typeOneTimingTilesAndRangeLimits() throws {
        let e = try EDID(Self.tile())
        #expect(e.warnings.isEmpty)
        let d = try #require(e.displayID)
        #expect(d.version == 0x12)
        let t = try #require(e.timings.first { $0.source == .displayID(type: 1, block: 1) })
        #expect(t.hActive == 2560 && t.vActive == 2880 && t.hTotal == 2720 && t.vTotalPerField == 2921)
        #expect(t.pixelClockHz == 240_000_000 && t.preferred && t.hSyncPositive && t.vSyncPositive)
        #expect(t.refreshHz == 240_000_000.0 / (2720.0 * 2921.0))
        #expect(d.tiles == TiledTopology(horizontalTiles: 2, verticalTiles: 1, column: 1, row: 0, tileWidth: 2560, tileHeight: 2880,
                                         singleEnclosure: true, vendor: "APP", productCode: 0xAE13, serialNumber: 0x5963_967F))
        #expect(d.rangeLimits == DisplayIDRangeLimits(minHz: 24, maxHz: 60, minPixelClockKHz: 100_000, maxPixelClockKHz: 240_000))
        #expect(e.vrrRanges.contains(VRRRange(minHz: 24, maxHz: 60, source: .displayIDRangeLimits)))
    }

    /// DisplayID 2.0: product id (OUI), type 7 timing, adaptive sync 48–144 Hz, dynamic range.
    static func v2() -> [UInt8] {
        let product: [UInt8] = [0x20, 0x00, 17, 0x00, 0x1A, 0x2B, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 10, 30, 5] + Array("KIOSK".utf8)
        let t7: [UInt8] = [0x22, 0x00, 20,
                           0x9F, 0x5D, 0x09, 0x04,  // (0x095D9F+1) kHz = 613 792 kHz, 16:9
                           0xFF, 0x09, 0x9F, 0x00, 0x2F, 0x80, 0x1F, 0x00,
                           0x9F, 0x05, 0x28, 0x00, 0x02, 0x80, 0x04, 0x00]
        let async: [UInt8] = [0x2B, 0x00, 6, 0x01, 0x10, 48, 143, 0x00, 0x08]
        let dyn: [UInt8] = [0x25, 0x01, 9, 0x0F, 0x27, 0x00, 0x9F, 0x5D, 0x09, 48, 0x2C, 0x01]
        var b = EDIDBuilder()
        b.extensions = [EDIDBuilder.displayID(version: 0x20, productType: 3, [product, t7, async, dyn])]
        return b.bytes()
    }

    @Test func productIDAdaptiveSyncTypeSevenAndDynamicRange() throws {
        let e = try EDID(Self.v2())
        #expect(e.warnings.isEmpty)
        let d = try #require(e.displayID)
        #expect(d.version == 0x20 && d.productType == 3)
        #expect(d.product == DisplayIDProduct(vendor: "00-1A-2B", productCode: 0x1234, serialNumber: 0x1234_5678, week: 10,
                                              year: 2030, isModelYear: false, productName: "KIOSK"))
        let t = try #require(e.timings.first { $0.source == .displayID(type: 7, block: 1) })
        #expect(t.pixelClockHz == 613_792_000 && t.vActive == 1440 && !t.preferred)
        #expect(d.adaptiveSync == [AdaptiveSyncRange(minHz: 48, maxHz: 144, native: true)])
        #expect(d.rangeLimits?.maxHz == 300 && d.rangeLimits?.minHz == 48)
        #expect(e.adaptiveSyncRange == VRRRange(minHz: 48, maxHz: 144, source: .displayIDAdaptiveSync))
    }

    @Test func blockRunningPastItsSectionIsReported() throws {
        var b = EDIDBuilder()
        var ext = EDIDBuilder.displayID(version: 0x20, [[0x2B, 0x00, 6, 0x01, 0x10, 48, 143, 0x00, 0x08]])
        ext[7] = 60  // the adaptive-sync block now claims 60 bytes
        EDIDBuilder.seal(&ext)
        b.extensions = [ext]
        let e = try EDID(b.bytes())
        #expect(e.warnings.contains { $0.contains("runs past its section") })
        #expect(e.warnings.contains { $0.contains("DisplayID section checksum") })
        #expect(e.displayID?.adaptiveSync == [])
    }
}

@Suite struct DamagedInputTests {
    @Test func tooShortAndNoHeaderThrow() {
        #expect(throws: EDIDError.self) { try EDID([]) }
        #expect(throws: EDIDError.self) { try EDID(Array(EDIDBuilder().bytes().prefix(127))) }
        var b = EDIDBuilder().bytes()
        b[1] = 0
        #expect(throws: EDIDError("no EDID header (00 FF FF FF FF FF FF 00)")) { try EDID(b) }
    }

    @Test func badChecksumsAreWarnings() throws {
        var b = EDIDBuilder.monitor().bytes()
        b[127] &+= 1
        b[255] &+= 1
        let e = try EDID(b)
        #expect(e.warnings == ["block 0: bad checksum", "block 1: bad checksum"])
        #expect(e.name == "DELL S2721DGF")
    }

    @Test func truncatedAndOverlongInputs() throws {
        var m = EDIDBuilder.monitor()
        m.announcedExtensions = 2
        let e = try EDID(m.bytes())
        #expect(e.warnings.contains("the base block announces 2 extension blocks, 1 present (truncated)"))
        let odd = try EDID(EDIDBuilder.monitor().bytes() + [1, 2, 3])
        #expect(odd.warnings.contains { $0.contains("not a multiple of 128: the last 3 bytes are ignored") })
        #expect(odd.cta != nil)
    }

    @Test func hexText() {
        #expect(EDID.bytes(fromHex: "00 ff\n0x10,AB:cd") == [0x00, 0xFF, 0x10, 0xAB, 0xCD])
        #expect(EDID.bytes(fromHex: "00 f") == nil)
        #expect(EDID.bytes(fromHex: "EDID: 00") == nil)
        #expect(EDID.bytes(fromHex: "") == [])
    }
}
