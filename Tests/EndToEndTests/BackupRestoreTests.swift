import Foundation
import Testing
import TestSupport

/// `homegate backup` and `homegate restore` through the real binary: a paired device keeps
/// working from a restored data directory without pairing again; damaged backups and non-empty
/// directories are refused and nothing is written.
@Suite(.serialized, .startsProcesses) struct BackupRestoreTests {
    static let config = HAPEndToEndTests.config

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// The entries of a directory, sorted (hidden ones included).
    static func listing(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test("a zoo device paired, backed up while the gateway runs, the data directory wiped, restored into a new one: the same device answers a set without pairing again")
    func pairBackUpWipeRestore() async throws {
        let peer = try await ZooPeer.start(database: "eve_energy")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "backup-source")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder)
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let entries = try await DeviceZooTests.entries(fixture, database: "eve_energy", deviceID: peer.deviceID)
        let on = try #require(entries.first { $0.topic.hasSuffix("/outlet/on") })
        let first = try #require(DeviceZooTests.newValue(for: on))
        let second = first == "true" ? "false" : "true"
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "backup-results"))
        try await results.subscribe("\(on.topic)/set/result")
        try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(on.topic)/set", first)
        #expect(try GatewayFixture.decode(try await results.inbox.first(on: "\(on.topic)/set/result").payload)["ok"] as? Bool == true)
        // Options set over MQTT are in the store, so in the backup.
        let accessory = "hap-\(peer.deviceID.replacingOccurrences(of: ":", with: "").lowercased())-\(on.aid)"
        let options = try await fixture.request("accessory/options", #"{"accessory": "\#(accessory)", "options": {"throttle": 60000}}"#)
        #expect(options["ok"] as? Bool == true, "\(options)")

        // The backup, while the gateway runs (and holds the database open in WAL mode).
        let backups = try TemporaryDirectory.make(prefix: "backups")
        let file = backups.appendingPathComponent("homegate.backup").path
        let data = folder.appendingPathComponent("data").path
        let backup = try HomeGateProcess(["backup", "--data-dir", data, "--config", fixture.configFile, file])
        #expect(try await backup.waitForExit(timeout: .seconds(30)) == 0, "\(backup.output)")
        #expect(backup.output.contains("backed up \(data)"), "\(backup.output)")
        #expect(try Self.mode(file) == 0o600)
        #expect(Self.listing(backups.path) == ["homegate.backup"], "no scratch files left beside the backup")
        #expect(fixture.gateway.child.exit.value == nil, "the gateway ran through the backup")
        await results.stop()
        try await fixture.stop(keepBroker: true)

        // The data directory is lost.
        try FileManager.default.removeItem(atPath: data)

        let restoredFolder = try TemporaryDirectory.make(prefix: "backup-restored")
        let restoredData = restoredFolder.appendingPathComponent("data").path
        let restoredConfig = restoredFolder.appendingPathComponent("restored.yml").path
        let restore = try HomeGateProcess(["restore", file, "--data-dir", restoredData, "--config-out", restoredConfig])
        #expect(try await restore.waitForExit(timeout: .seconds(30)) == 0, "\(restore.output)")
        #expect(restore.output.contains("restored 1 file into \(restoredData)"), "\(restore.output)")
        #expect(try String(contentsOfFile: restoredConfig, encoding: .utf8) == Self.config)
        #expect(try Self.mode(restoredData) == 0o700)
        #expect(try Self.mode(restoredData + "/homegate.sqlite") == 0o600)
        #expect(Self.listing(restoredFolder.path) == ["data", "restored.yml"], "no temporary folder left")

        let restarted = try await GatewayFixture.start(config: Self.config, broker: fixture.broker, folder: restoredFolder)
        let reachable = on.topic.split(separator: "/").prefix(4).joined(separator: "/") + "/$reachable"
        _ = try await restarted.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == reachable && $0.payloadString == "true" }
        let again = try await TestClient.connect(TestClient.configuration(restarted.broker.url, id: "restored-results"))
        try await again.subscribe("\(on.topic)/set/result")
        try await HAPEndToEndTests.mosquittoPub(restarted.broker, "\(on.topic)/set", second)
        let ack = try GatewayFixture.decode(try await again.inbox.first(on: "\(on.topic)/set/result").payload)
        #expect(ack["ok"] as? Bool == true, "\(ack)")
        let kept = try await restarted.request("accessory/options", #"{"accessory": "\#(accessory)"}"#)
        #expect(((kept["data"] as? [String: Any])?["options"] as? [String: Any])?["throttle"] as? Int == 60000, "the options restored: \(kept)")
        let aid = on.aid, iid = on.iid
        _ = try await peer.waitForLine { $0.contains("\"event\": \"write\", \"aid\": \(aid), \"iid\": \(iid), \"value\": \(second)") }
        #expect(peer.logText().components(separatedBy: "\"event\": \"paired\"").count == 2, "paired once, never again:\n\(peer.logText())")
        await again.stop()
        try await restarted.stop()
    }

    /// A small backup of a fresh store (made by `homegate pairings`), with the configuration.
    static func smallBackup() async throws -> (folder: URL, file: String) {
        let folder = try TemporaryDirectory.make(prefix: "backup-small")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let data = folder.appendingPathComponent("data").path
        let pairings = try HomeGateProcess(["pairings", "--config", configFile, "--data-dir", data])
        #expect(try await pairings.waitForExit() == 0, "\(pairings.output)")
        try "kept\n".write(toFile: data + "/notes.txt", atomically: false, encoding: .utf8)
        let file = folder.appendingPathComponent("small.backup").path
        let backup = try HomeGateProcess(["backup", "--data-dir", data, "--config", configFile, file])
        #expect(try await backup.waitForExit() == 0, "\(backup.output)")
        #expect(backup.output.contains("(2 files, the configuration file homegate.yml)"), "\(backup.output)")
        #expect(try mode(file) == 0o600)
        return (folder, file)
    }

    @Test("restore refuses a non-empty data directory without --force and changes nothing; with --force it replaces it")
    func nonEmptyDirectory() async throws {
        let (folder, file) = try await Self.smallBackup()
        let target = folder.appendingPathComponent("occupied").path
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try "mine\n".write(toFile: target + "/keep.txt", atomically: false, encoding: .utf8)
        let configOut = folder.appendingPathComponent("out.yml").path
        let before = Self.listing(folder.path)

        let refused = try HomeGateProcess(["restore", file, "--data-dir", target, "--config-out", configOut])
        #expect(try await refused.waitForExit() == 73)
        #expect(refused.output.contains("homegate: error: \(target): not empty"), "\(refused.output)")
        #expect(refused.output.contains("--force"), "\(refused.output)")
        #expect(Self.listing(target) == ["keep.txt"])
        #expect(try String(contentsOfFile: target + "/keep.txt", encoding: .utf8) == "mine\n")
        #expect(Self.listing(folder.path) == before, "nothing written beside it (no config, no temporary folder)")

        let forced = try HomeGateProcess(["restore", file, "--data-dir", target, "--force"])
        #expect(try await forced.waitForExit() == 0, "\(forced.output)")
        #expect(forced.output.contains("--config-out FILE writes it"), "\(forced.output)")
        #expect(Self.listing(target) == ["homegate.sqlite", "notes.txt"])
        #expect(try String(contentsOfFile: target + "/notes.txt", encoding: .utf8) == "kept\n")
        #expect(Self.listing(folder.path) == before, "the old directory is gone, no temporary folder left")
        let pairings = try HomeGateProcess(["pairings", "--config", folder.appendingPathComponent("homegate.yml").path, "--data-dir", target])
        #expect(try await pairings.waitForExit() == 0, "the restored store opens: \(pairings.output)")
    }

    @Test("a data directory a gateway runs on: a second gateway exits 75 naming the first, restore --force exits 75 and changes nothing; once it stopped (even by SIGKILL), both work")
    func dataDirectoryInUse() async throws {
        let (folder, file) = try await Self.smallBackup()
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let data = folder.appendingPathComponent("data").path
        let pid = fixture.gateway.child.pid
        #expect(try String(contentsOfFile: data + "/homegate.lock", encoding: .utf8) == "\(pid)\n")

        let second = try HomeGateProcess(["run", "--config", fixture.configFile, "--mqtt-url", fixture.broker.url.description, "--data-dir", data])
        #expect(try await second.waitForExit() == 75)
        #expect(second.output.contains("homegate: error: \(data) is in use by a running gateway (process \(pid) holds homegate.lock); stop it first"),
                "\(second.output)")
        #expect(!second.output.contains("online"), "the second gateway never connected: \(second.output)")

        let before = Self.listing(data)
        let store = try Data(contentsOf: URL(fileURLWithPath: data + "/homegate.sqlite"))
        let restore = try HomeGateProcess(["restore", file, "--data-dir", data, "--force"])
        #expect(try await restore.waitForExit() == 75)
        #expect(restore.output.contains("is in use by a running gateway (process \(pid) holds homegate.lock); stop it first; nothing was restored"),
                "\(restore.output)")
        #expect(Self.listing(data) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: data + "/homegate.sqlite")) == store)
        #expect(fixture.gateway.child.exit.value == nil, "the running gateway goes on")

        // SIGKILL: the kernel lets the lock go with the process.
        fixture.gateway.signal(SIGKILL)
        #expect(try await fixture.gateway.waitForExit() == -SIGKILL)
        let forced = try HomeGateProcess(["restore", file, "--data-dir", data, "--force"])
        #expect(try await forced.waitForExit() == 0, "\(forced.output)")
        #expect(Self.listing(data) == ["homegate.sqlite", "notes.txt"], "the lock file went with the old directory")
        let again = try await GatewayFixture.start(config: Self.config, broker: fixture.broker, folder: folder)
        try await again.stop()
        await fixture.watcher.stop()
    }

    @Test("a damaged backup (a byte flipped, truncated, not a backup, from a newer HomeGate) is refused naming the file and the problem; nothing is written")
    func damagedBackups() async throws {
        let (folder, file) = try await Self.smallBackup()
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        var flipped = good
        flipped[good.count - 200] ^= 0x01 // inside the database
        var flippedManifest = good
        flippedManifest[60] ^= 0x20
        var newer = good
        newer[19] = 2
        let cases: [(String, [UInt8], String)] = [
            ("flipped", flipped, "the backup is damaged (wrong checksum): the SHA-256 of database homegate.sqlite does not match"),
            ("flipped-manifest", flippedManifest, "the backup is damaged (wrong checksum): the manifest's SHA-256 does not match"),
            ("truncated", Array(good.dropLast(100)), "the backup is truncated"),
            ("cut-in-header", Array(good.prefix(30)), "the backup is truncated"),
            ("not-a-backup", Array("base_topic: hg\n".utf8), "not a HomeGate backup"),
            ("newer", newer, "the backup is from a newer HomeGate: it has format version 2"),
        ]
        for (name, bytes, message) in cases {
            let damaged = folder.appendingPathComponent("\(name).backup").path
            try Data(bytes).write(to: URL(fileURLWithPath: damaged))
            let target = folder.appendingPathComponent("restore-\(name)").path
            let configOut = folder.appendingPathComponent("\(name).yml").path
            let before = Self.listing(folder.path)
            let restore = try HomeGateProcess(["restore", damaged, "--data-dir", target, "--config-out", configOut])
            #expect(try await restore.waitForExit() == 65, "\(name): \(restore.output)")
            #expect(restore.output.contains("homegate: error: \(damaged): \(message)"), "\(name): \(restore.output)")
            #expect(Self.listing(folder.path) == before, "\(name): nothing written")
        }
        let missing = try HomeGateProcess(["restore", folder.appendingPathComponent("none.backup").path, "--data-dir", folder.appendingPathComponent("x").path])
        #expect(try await missing.waitForExit() == 66)
        #expect(missing.output.contains("none.backup: no such file"), "\(missing.output)")
        let noStore = try HomeGateProcess(["backup", "--data-dir", folder.appendingPathComponent("nothing").path, folder.appendingPathComponent("n.backup").path])
        #expect(try await noStore.waitForExit() == 66)
        #expect(noStore.output.contains("no such data directory"), "\(noStore.output)")
    }
}
