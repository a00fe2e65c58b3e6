import Foundation
import MQTT
import Testing
import TestSupport

/// Faults of the store and of the process, through the real binary: a store that is not a
/// database or is cut short stops the start with a clear error and leaves the file alone; a
/// SIGKILL in the middle of management changes leaves the store and the retained topics
/// consistent at the next start.
@Suite("store and process faults", .serialized, .startsProcesses)
struct StoreFaultTests {
    /// Runs the gateway once on the demo so the folder has a store; returns the folder.
    static func folderWithAStore() async throws -> (URL, Mosquitto) {
        let fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: ""))
        try await fixture.stop(keepBroker: true)
        return (fixture.folder, fixture.broker)
    }

    @Test("a store file that is not a database, or is cut short: homegate run says which file and what, exits 78, and leaves the file as it was", arguments: ["garbage", "truncated"])
    func damagedStore(_ damage: String) async throws {
        let (folder, broker) = try await Self.folderWithAStore()
        defer { Task { await broker.stop() } }
        let database = folder.appendingPathComponent("data/homegate.sqlite")
        var bytes = try Data(contentsOf: database)
        switch damage {
        case "garbage": bytes = Data(String(repeating: "this is not a database\n", count: 200).utf8)
        default: bytes = bytes.prefix(100) // cut short inside its header
        }
        for sidecar in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + sidecar) }
        try bytes.write(to: database)
        let run = try HomeGateProcess(["run", "--config", folder.appendingPathComponent("homegate.yml").path, "--mqtt-url", broker.url.description,
                                       "--data-dir", folder.appendingPathComponent("data").path])
        #expect(try await run.waitForExit(timeout: .seconds(30)) == 78, "\(run.output)")
        #expect(run.output.contains("homegate: error: ") && run.output.contains("homegate.sqlite"), "\(run.output)")
        #expect(try Data(contentsOf: database) == bytes, "the damaged file is left for the user to look at")
    }

    @Test("SIGKILL while management changes arrive: the next start's store and retained topics agree with each other")
    func killedInTheMiddle() async throws {
        let fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: ""))
        let client = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "burst"))
        try await client.subscribe("homegate/$response/room/add")
        for index in 0..<40 {
            try await client.publish("homegate/$request/room/add", "{\"name\": \"Burst \(index)\"}")
        }
        _ = try await client.inbox.first(on: "homegate/$response/room/add")
        fixture.gateway.signal(SIGKILL)
        _ = try await fixture.gateway.waitForExit()
        await client.stop()
        await fixture.watcher.stop()

        let restarted = try await GatewayFixture.start(config: try String(contentsOfFile: fixture.configFile, encoding: .utf8),
                                                      broker: fixture.broker, folder: fixture.folder)
        try await restarted.waitUntilRetained("homegate/$state", equals: "online")
        let retained = try await restarted.retained()
        let layout = try TreeContractTests.expectExactlyTheLayoutsTopics(retained)
        let rooms = TreeLayout.homes(layout).flatMap { ($0["rooms"] as? [[String: Any]]) ?? [] }.compactMap { $0["name"] as? String }
        let burst = rooms.filter { $0.hasPrefix("Burst ") }
        #expect(!burst.isEmpty && Set(burst).count == burst.count, "the rooms added before the kill, each once: \(burst)")
        try await restarted.stop()
    }

    /// Runs `homegate run` in a mount namespace of its own where `mountpoint` is a fresh tmpfs of
    /// `size` (or, with `readOnly`, the folder it is, made read-only) holding a copy of `store`.
    /// Its files are reachable from here through `/proc/<pid>/root`.
    static func runOnOwnFileSystem(folder: URL, broker: Mosquitto, mountpoint: URL, size: String?, store: URL) throws -> ChildProcess {
        guard geteuid() == 0 else {
            throw FixtureError("the store fault tests need root to mount a small or read-only file system in a mount namespace (unshare -m); run them as root")
        }
        let unshare = try Executable.locate("unshare", extraFolders: ["/usr/bin", "/bin"], install: "apt-get install util-linux")
        try FileManager.default.createDirectory(at: mountpoint, withIntermediateDirectories: true)
        let target = mountpoint.path
        let mount = size.map { "mount -t tmpfs -o size=\($0),mode=0700 tmpfs '\(target)' && cp '\(store.path)' '\(target)/'" }
            ?? "cp '\(store.path)' '\(target)/' && mount --bind '\(target)' '\(target)' && mount -o remount,ro,bind '\(target)'"
        let command = "\(mount) && exec '\(try HomeGateProcess.binary())' run --config '\(folder.appendingPathComponent("homegate.yml").path)' "
            + "--mqtt-url '\(broker.url.description)' --data-dir '\(target)'"
        return try ChildProcess(unshare, ["-m", "--propagation", "private", "sh", "-c", command])
    }

    @Test("a data directory on a read-only or a full file system: homegate run says so, names the file, exits 78, and the store is left as it was", arguments: ["read-only", "full"])
    func unwritableFileSystem(_ fault: String) async throws {
        let (folder, broker) = try await Self.folderWithAStore()
        defer { Task { await broker.stop() } }
        let store = folder.appendingPathComponent("data/homegate.sqlite")
        let original = try Data(contentsOf: store)
        let mountpoint = folder.appendingPathComponent(fault)
        if fault == "full" {
            // The tmpfs holds the store and as much filler as fits before the gateway starts.
            let filled = try Self.runOnOwnFileSystem(folder: folder, broker: broker, mountpoint: mountpoint, size: "\(original.count / 1024 + 16)k", store: store)
            #expect(try await filled.waitForExit(timeout: .seconds(30)) == 78, "\(filled.output.value)")
            #expect(filled.output.value.contains("homegate.sqlite: cannot open the database"), "\(filled.output.value)")
            #expect(filled.output.value.contains("is full"), "\(filled.output.value)")
        } else {
            let run = try Self.runOnOwnFileSystem(folder: folder, broker: broker, mountpoint: mountpoint, size: nil, store: store)
            #expect(try await run.waitForExit(timeout: .seconds(30)) == 78, "\(run.output.value)")
            #expect(run.output.value.contains("homegate.sqlite: cannot open the database"), "\(run.output.value)")
            #expect(run.output.value.contains("is read-only"), "\(run.output.value)")
            #expect(try Data(contentsOf: mountpoint.appendingPathComponent("homegate.sqlite")) == original, "the store is as it was")
        }
    }

    @Test("the disk fills up while the gateway runs: a management change is answered store-failed, sets go on; once there is room again the next change is stored")
    func diskFillsWhileRunning() async throws {
        let (folder, broker) = try await Self.folderWithAStore()
        defer { Task { await broker.stop() } }
        let mountpoint = folder.appendingPathComponent("small")
        let gateway = try Self.runOnOwnFileSystem(folder: folder, broker: broker, mountpoint: mountpoint, size: "4m",
                                                  store: folder.appendingPathComponent("data/homegate.sqlite"))
        _ = try await gateway.output.wait(timeout: .seconds(30), for: "the gateway to synchronise") { $0.contains("synchronised with the broker") ? true : nil }
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "filler"))
        try await client.subscribe("homegate/$response/room/add")
        try await client.subscribe("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set/result")

        // Fill the gateway's file system, seen from here through its /proc root.
        let filler = "/proc/\(gateway.pid)/root\(mountpoint.path)/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let chunk = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()

        try await client.publish("homegate/$request/room/add", #"{"name": "Attic"}"#)
        let refused = try await client.inbox.first(on: "homegate/$response/room/add", timeout: HangGuard.standard)
        #expect(refused.payloadString.contains(#""error":"store-failed""#), "\(refused.payloadString)")
        #expect(refused.payloadString.contains("is full"), "\(refused.payloadString)")
        try await client.publish("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set", "66")
        let ack = try await client.inbox.first(on: "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set/result", timeout: HangGuard.standard)
        #expect(ack.payloadString.contains(#""ok":true"#), "sets go on: \(ack.payloadString)")

        try FileManager.default.removeItem(atPath: filler)
        try await client.publish("homegate/$request/room/add", #"{"name": "Cellar"}"#)
        let stored = try await client.inbox.first(timeout: HangGuard.standard) { $0.topic.string == "homegate/$response/room/add" && $0.payloadString.contains("Cellar") }
        #expect(stored.payloadString.contains(#""ok":true"#), "\(stored.payloadString)")
        #expect(!gateway.output.value.contains("Fatal error"), "no crash")
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit(timeout: .seconds(30)) == 0)
        await client.stop()
    }
}
