import Foundation
import MQTT
import Testing
import TestSupport

/// Faults of the store and of the process, through the real binary: a store that is not a
/// database or is cut short stops the start with a clear error and leaves the file alone; a
/// SIGKILL in the middle of management changes leaves the store and the retained topics
/// consistent at the next start.
@Suite("store and process faults", .serialized)
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
}
