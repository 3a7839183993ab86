import CadenceCore
import CadenceSession
import DRM
import KMSDisplay
import Testing
@testable import cadence

/// docs/privileges.md on the fake DRM device: `list` and `edid --connector` open the card
/// read-only, so a node with read permission only (mode 0604, a read ACL) lists; `run`,
/// `measure` and `validate` open it read-write and are refused there in one line with the hint.
@Suite struct LeastPrivilegeTests {
    @Test func listingOpensReadOnlyAndWorksOnAReadOnlyNode() throws {
        let fake = FakeDRMDevice()
        fake.writeDenied = true
        let dev = try openDevice(fake.path, source: .fake(fake))
        #expect(dev.isReadOnly)
        #expect(fake.calls.first == "open(O_RDONLY)" && !fake.calls.contains("open"))
        let report = try DeviceInventory(dev)
        #expect(report.text.contains("Virtual-1"))
        #expect(!fake.calls.contains("drmSetMaster"), "listing never asks for DRM master")
    }

    @Test func displayingNeedsReadWriteAndIsRefusedInOneLine() throws {
        for purpose in [BackendChoice.Purpose.run, .validate] {
            let fake = FakeDRMDevice()
            fake.writeDenied = true
            do {
                _ = try BackendChoice.open(backend: "kms", device: nil, connector: nil, mode: nil,
                                           fake: FakeDisplayConfiguration(), source: .fake(fake), purpose: purpose)
                Issue.record("\(purpose): opened a node without write permission")
            } catch {
                let line = String(describing: error)
                #expect(line == "permission denied opening /dev/dri/card0: \(OutputSelection.permissionHint)", "\(line)")
                #expect(!line.contains("\n"))
            }
            #expect(!fake.calls.contains("open(O_RDONLY)"), "run and validate open read-write")
        }
        // measure's open: OutputSelection.open read-write.
        let fake = FakeDRMDevice()
        fake.writeDenied = true
        let e = #expect(throws: OutputSelectionError.self) { try OutputSelection.open(fake.path, source: .fake(fake)) }
        #expect(e?.kind == .permissionDenied)
    }

    @Test func aSessionSourceListsReadOnlyWhenItFallsBackToDirect() throws {
        // `--session direct` is the live source; its read-only open is O_RDONLY (a missing node
        // shows the path taken without a card: ENOENT from open, not from a seat).
        let e = #expect(throws: DRMError.self) { try DeviceSource.live.openReadOnly("/nonexistent/card0") }
        #expect(e?.errno == .noSuchFileOrDirectory && e?.call == "open")
    }
}
