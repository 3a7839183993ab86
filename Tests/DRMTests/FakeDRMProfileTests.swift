import Testing
@testable import DRM

/// `FakeDRMProfile(json:)`: drm_info -j JSON (already decoded) into a fake device, and its
/// one-line errors at each edge (the CLI's file, JSON and shipped-profile cases are in
/// CLITests/FakeDRMBackendTests).
@Suite struct FakeDRMProfileTests {
    typealias J = FakeDRMProfile.JSON

    static let mode: J = .object([
        "clock": .integer(25175), "hdisplay": .integer(640), "hsync_start": .integer(656), "hsync_end": .integer(752),
        "htotal": .integer(800), "vdisplay": .integer(480), "vsync_start": .integer(490), "vsync_end": .integer(492),
        "vtotal": .integer(525), "type": .integer(72), "name": .string("640x480"),
    ])

    /// A small valid card; `change` edits the device object.
    static func card(cadence: [String: J]? = nil, _ change: (inout [String: J]) -> Void = { _ in }) -> J {
        var dev: [String: J] = [
            "driver": .object(["name": .string("tiny"), "caps": .object(["DUMB_BUFFER": .integer(1)]),
                               "client_caps": .object(["ATOMIC": .bool(false)])]),
            "connectors": .array([.object(["id": .integer(10), "type": .integer(11), "status": .integer(1), "encoder_id": .integer(20),
                                           "encoders": .array([.integer(20)]), "modes": .array([mode])])]),
            "encoders": .array([.object(["id": .integer(20), "possible_crtcs": .integer(1), "crtc_id": .integer(30)])]),
            "crtcs": .array([.object(["id": .integer(30), "fb_id": .integer(7), "mode": mode])]),
            "planes": .array([.object(["id": .integer(40), "properties": .object(["type": .object(["value": .integer(1)])])])]),
        ]
        change(&dev)
        var root: [String: J] = ["/dev/dri/card1": .object(dev)]
        if let cadence { root["cadence"] = .object(cadence) }
        return .object(root)
    }

    func error(_ json: J) -> String? {
        do { _ = try FakeDRMProfile(json: json); return nil } catch { return (error as? FakeDRMProfileError)?.message ?? "\(error)" }
    }

    @Test func aSmallCardPlaysItsObjects() throws {
        let p = try FakeDRMProfile(json: Self.card(cadence: ["vblank": .bool(false), "description": .string("tiny card")]))
        #expect(p.node == "/dev/dri/card1" && p.description == "tiny card")
        let fake = p.makeDevice(wallClock: false, seed: 0)
        #expect(fake.simulatorName == "fake-drm" && !fake.hasVBlank && !fake.supportsAtomic)
        let dev = try DRMDevice.open(path: "/dev/dri/card1", fake: fake)
        let c = try dev.connectors()
        #expect(c.map(\.name) == ["HDMI-A-1"] && c[0].modes.count == 1)
        let crtc = try dev.crtc(CRTCID(30))
        #expect(crtc.mode?.hdisplay == 640, "the captured CRTC shows its mode")
    }

    @Test(arguments: [
        (J.array([]), "not a drm_info -j object (expected {\"/dev/dri/card0\": {…}})"),
        (J.object(["cadence": .object([:])]), "no device object (drm_info -j gives one per node, e.g. \"/dev/dri/card0\": {…})"),
        (card { $0["driver"] = .object([:]) }, "/dev/dri/card1: no driver.name"),
        (card { $0["connectors"] = .array([.integer(1)]) }, "/dev/dri/card1: no connectors array"),
        (card { $0["connectors"] = .array([]) }, "/dev/dri/card1: no connectors"),
        (card { $0["connectors"] = .array([.object(["id": .integer(1), "type": .integer(18)])]) },
         "/dev/dri/card1: no connectors (besides writeback ones)"),
        (card { $0["connectors"] = .array([.object(["id": .integer(-1), "type": .integer(11)])]) }, "connector 0: no id or type"),
        (card { $0["connectors"] = .array([.object(["id": .number(1.5), "type": .integer(11)])]) }, "connector 0: no id or type"),
        (card { $0["connectors"] = .array([.object(["id": .bool(true), "type": .integer(11)])]) }, "connector 0: no id or type"),
        (card { $0["encoders"] = .array([]) }, "/dev/dri/card1: no encoders"),
        (card { $0["crtcs"] = .null }, "/dev/dri/card1: no crtcs"),
        (card { $0["planes"] = .array([.object(["id": .integer(40)])]) }, "/dev/dri/card1: no primary plane"),
        (card { $0["crtcs"] = .array([.object(["id": .integer(30), "fb_id": .integer(7), "mode": .object(["clock": .integer(1)])])]) },
         "crtc 30 mode: no hdisplay"),
        (card { $0["crtcs"] = .array([.object(["id": .integer(30), "fb_id": .integer(7), "mode": .object(["clock": .integer(0)])])]) },
         "crtc 30 mode: no clock"),
    ]) func wrongShapesSayWhatAndWhere(json: J, message: String) {
        #expect(error(json) == message)
    }

    /// drm_info's `possible_clones` is what the fake's encoders report (the kernel's own bit
    /// added); `cadence.possibleClones` replaces it per encoder id, and is checked.
    @Test func possibleClonesFromDrmInfoOrTheCadenceSection() throws {
        func encoder(_ cadence: [String: J]?, clones: Int?) throws -> Encoder {
            let json = Self.card(cadence: cadence) { dev in
                var e: [String: J] = ["id": .integer(20), "possible_crtcs": .integer(1), "crtc_id": .integer(30)]
                if let clones { e["possible_clones"] = .integer(clones) }
                dev["encoders"] = .array([.object(e)])
            }
            let dev = try DRMDevice.open(fake: try FakeDRMProfile(json: json).makeDevice(wallClock: false, seed: 0))
            return try dev.encoder(EncoderID(20))
        }
        #expect(try encoder(nil, clones: nil).possibleClones == 0x1)
        #expect(try encoder(nil, clones: 0x5).possibleClones == 0x5)
        #expect(try encoder(["possibleClones": .object(["20": .integer(0x3)])], clones: 0x1).possibleClones == 0x3)
        #expect(
            error(Self.card(cadence: ["possibleClones": .object(["21": .integer(3)])]))
                == "/dev/dri/card1: cadence.possibleClones: 21 is not an encoder id with a mask")
        #expect(
            error(Self.card(cadence: ["possibleClones": .array([])]))
                == "/dev/dri/card1: cadence.possibleClones must be an object of encoder ids to masks")
    }

    @Test func modeEdges() {
        func withMode(_ change: (inout [String: J]) -> Void) -> String? {
            guard case .object(var m) = Self.mode else { return "?" }
            change(&m)
            return error(Self.card { $0["connectors"] = .array([.object(["id": .integer(10), "type": .integer(11), "modes": .array([.object(m)])])]) })
        }
        #expect(withMode { $0["htotal"] = .integer(0) } == "connector HDMI-A-1 mode 0: htotal and vtotal must be > 0")
        #expect(withMode { $0["vtotal"] = .integer(65536) } == "connector HDMI-A-1 mode 0: no vtotal")
        #expect(withMode { $0["vtotal"] = .integer(65535) } == nil, "UInt16.max is a valid total")
        #expect(withMode { $0["clock"] = .integer(4_294_967_296) } == "connector HDMI-A-1 mode 0: no clock")
        #expect(withMode { $0["hdisplay"] = .number(1e300) } == "connector HDMI-A-1 mode 0: no hdisplay")
        #expect(withMode { $0["hdisplay"] = .number(640) } == nil, "an integral double is an integer")
        #expect(withMode { $0["hskew"] = .string("x") } == nil, "hskew and vscan are optional")
    }

    @Test func edidAsHexOrBytes() throws {
        func edid(_ v: J) throws -> [UInt8]? {
            let p = try FakeDRMProfile(json: Self.card(cadence: ["edid": .object(["HDMI-A-1": v])]))
            let dev = try DRMDevice.open(path: p.node, fake: p.makeDevice(wallClock: false, seed: 0))
            return try dev.edid(of: ConnectorID(10))
        }
        #expect(try edid(.string("00ff FF\n0a")) == [0x00, 0xFF, 0xFF, 0x0A])
        #expect(try edid(.array([.integer(0), .integer(255)])) == [0, 255])
        for (v, message) in [(J.string("0"), "cadence.edid: odd-length or empty hex"), (.string(" "), "cadence.edid: odd-length or empty hex"),
                             (.string("0g"), "cadence.edid: not hex"), (.string("+f"), "cadence.edid: not hex"),
                             (.array([.integer(256)]), "cadence.edid: expected bytes 0–255"), (.array([]), "cadence.edid: expected bytes 0–255"),
                             (.array([.bool(true)]), "cadence.edid: expected bytes 0–255"),
                             (.integer(3), "cadence.edid: expected a hex string or an array of bytes")] {
            #expect(error(Self.card(cadence: ["edid": .object(["HDMI-A-1": v])])) == message)
        }
    }

    @Test func timingKeysAndTheirRanges() throws {
        let p = try FakeDRMProfile(json: Self.card(cadence: ["refreshOverrideHz": .number(59.94), "vblankJitterUs": .integer(100_000),
                                                              "eventLatencyUs": .integer(0), "commitLatencyUs": .number(2.5)]))
        let d = p.makeDevice(wallClock: true, seed: 3)
        #expect(d.refreshOverrideHz == 59.94 && d.vblankJitterNs == 100_000_000 && d.receiptLatencyNs == 0 && d.commitLatencyNs == 2500)
        #expect(d.usesWallClock && d.jitterSeed == 3 && d.simulatorName == "fake-drm-wall")
        #expect(error(Self.card(cadence: ["vblank": .integer(1)])) == "cadence.vblank must be true or false")
        #expect(error(Self.card(cadence: ["refreshOverrideHz": .integer(0)])) == "cadence.refreshOverrideHz must be > 0")
        #expect(error(Self.card(cadence: ["refreshOverrideHz": .number(1000.5)])) == "cadence.refreshOverrideHz must be a number from 0 to 1000")
        #expect(error(Self.card(cadence: ["vblankJitterUs": .number(-1)])) == "cadence.vblankJitterUs must be a number from 0 to 100000")
        #expect(error(Self.card(cadence: ["eventLatencyUs": .bool(true)])) == "cadence.eventLatencyUs must be a number from 0 to 1000000")
        #expect(error(Self.card(cadence: ["commitLatencyUs": .number(.infinity)])) == "cadence.commitLatencyUs must be a number from 0 to 1000000")
    }
}
