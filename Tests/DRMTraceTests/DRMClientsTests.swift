import Foundation
import Testing
@testable import DRMTrace

@Suite struct DRMClientsTests {
    /// `/sys/kernel/debug/dri/0/clients` captured in the VM (Debian 6.1, vkms) while
    /// `cadence run --backend kms` (pid 123) was flipping.
    static let vkmsSample: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/vkms-clients.txt")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test func realSample() {
        #expect(Self.vkmsSample.hasPrefix("             command   pid dev master a   uid      magic"))
        let clients = DRMClients.parse(Self.vkmsSample)
        #expect(clients == [DRMClient(command: "cadence", pid: 123, minor: 0, master: true, authenticated: true, uid: 0, magic: 0)])
    }

    @Test func commandsWithSpacesAndSeveralFiles() {
        // The kernel's format ("%20s %5d %3d   %c    %c %5d %10u"): a comm with spaces, a
        // non-master unauthenticated file, a gone process, a long uid and magic.
        let text = Self.vkmsSample
            + "        my kiosk-app   201   0   n    n  1000 4294967295\n"
            + "        my kiosk-app   201   0   y    y  1000          0\n"
            + "           <unknown>   300 128   n    y     0          7\n"
        let c = DRMClients.parse(text)
        #expect(c.count == 4)
        #expect(c[1] == DRMClient(command: "my kiosk-app", pid: 201, minor: 0, master: false, authenticated: false, uid: 1000, magic: 4_294_967_295))
        #expect(c[3].command == "<unknown>" && c[3].minor == 128 && !c[3].master && c[3].authenticated)
        // By pid, the master file first.
        #expect(DRMClients.match(pid: 201, tgid: nil, in: c)?.master == true)
        // A thread of the process: by its thread group.
        #expect(DRMClients.match(pid: 205, tgid: 201, in: c)?.command == "my kiosk-app")
        #expect(DRMClients.match(pid: 205, tgid: 999, in: c) == nil)
        #expect(DRMClients.match(pid: 205, tgid: nil, in: c) == nil)
    }

    @Test func malformedLinesAreSkipped() {
        let text = """
                         command   pid dev master a   uid      magic
                         cadence   12x   0   y    y     0          0
                         cadence   123   0   maybe y     0          0
                         cadence   123   0   y    y     0
            y y 1 2 3 4
                         cadence   124   0   y    y     0          0
            """
        // A non-number pid, a bad flag, a missing column, six fields with no command: skipped.
        #expect(DRMClients.parse(text).map(\.pid) == [124])
        #expect(DRMClients.parse("").isEmpty)
    }

    @Test func readsEveryMinorUnderARoot() throws {
        let root = NSTemporaryDirectory() + "dri-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/0", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/128", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/not-a-minor", withIntermediateDirectories: true)
        try Self.vkmsSample.write(toFile: root + "/0/clients", atomically: true, encoding: .utf8)
        try "   command   pid dev master a   uid      magic\n   weston    77 128   n    y     0          0\n"
            .write(toFile: root + "/128/clients", atomically: true, encoding: .utf8)
        try Self.vkmsSample.write(toFile: root + "/not-a-minor/clients", atomically: true, encoding: .utf8)
        #expect(DRMClients.read(root: root).map(\.pid) == [123, 77])
        #expect(DRMClients.read(root: root + "/missing").isEmpty)
    }

    @Test func threadGroupFromProc() {
        let me = getpid()
        #expect(DRMClients.threadGroup(of: me) == me)
        #expect(DRMClients.threadGroup(of: 0x7fff_fff0) == nil)
    }
}
