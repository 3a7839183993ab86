import CadenceCore
import CadenceReport
import DRM
import Foundation
import Testing
@testable import cadence

/// Stop signals and lost devices at the CLI (the VM versions, with the CRTC checked in debugfs,
/// are tools/vm/faults.sh).
@Suite struct SignalFaultTests {
    /// SIGTERM (a service manager) and SIGHUP (the terminal went away) end a run as SIGINT does:
    /// exit 0, the log's end line with endReason "stopped", every frame logged.
    @Test(arguments: [SIGTERM, SIGHUP])
    func stopSignalsEndTheRunCleanly(sig: Int32) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try CadenceProcess(["run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "60",
                                    "--log", "run.jsonl", "--json", "--quiet"], in: dir)
        try waitForLines(dir + "/run.jsonl", 20)
        p.signal(sig)
        let r = p.finish(timeout: 20)
        #expect(r.status == 0, "signal \(sig): \(r.err)")
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.end?.summary.endReason == "stopped")
        #expect(log.end?.summary.frames == log.records.count && log.records.count >= 10)
    }

    /// Started under nohup (SIGHUP ignored), a hangup does not stop the run: it completes.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nohup")))
    func sighupStaysIgnoredUnderNohup() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/nohup")
        p.arguments = [cadenceBinary(), "run", "--backend", "fake", "--fake-clock", "wall", "--scene", "solid", "--duration", "1.5",
                       "--log", "run.jsonl", "--quiet"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        try waitForLines(dir + "/run.jsonl", 20)
        kill(p.processIdentifier, SIGHUP)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0)
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.end?.summary.endReason == "completed")
    }

    /// `cadence run` over the fake DRM device that disappears mid-run (ENODEV from every commit,
    /// as a removed PCI device gives): the run ends with endReason device-lost, the frame in flight
    /// failed with cause device-lost, and the log has its end line.
    @Test func runOnALostDRMDeviceEndsDeviceLost() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fake = FakeDRMDevice()
        let cmd = try RunCommand.parse(["--backend", "kms", "--scene", "solid", "--frames", "600", "--quiet", "--log", dir + "/run.jsonl"])
        var shown = 0
        let s = try cmd.pace(source: .fake(fake), onRun: { run, _ in
            let log = run.onFrame
            run.onFrame = { r in
                log?(r)
                shown += 1
                if shown == 30 { fake.inject(.enodev, into: "drmModeAtomicCommit", times: 1000) }
            }
        })
        #expect(s.endReason.hasPrefix("device-lost"), "\(s.endReason)")
        #expect(s.frames < 600 && s.presented >= 29)
        #expect((s.causes["device-lost"] ?? 0) >= 1, "\(s.causes)")
        let log = try RunLog.read(path: dir + "/run.jsonl")
        #expect(log.end?.summary.endReason == s.endReason)
        #expect(log.records.last?.cause == .deviceLost)
    }
}
