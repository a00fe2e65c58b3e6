import Foundation
import MQTT
import Testing
import TestSupport

/// HomeKit accessories paired with `homegate pair` and driven from `mosquitto_pub`, through the
/// real broker, the real `homegate` binary and HAP-python as the accessory.
@Suite(.serialized, .startsProcesses) struct HAPEndToEndTests {
    static let config = """
        base_topic: hgtest
        log_level: info
        mqtt:
          url: mqtt://127.0.0.1:1883
        homes:
          - name: Test Home
            primary: true
            rooms: [Office]
        """

    static let lamp = "hgtest/test-home/default-room/desk-lamp"
    static let lampOn = "\(lamp)/lightbulb/on"
    static let temperature = "hgtest/test-home/default-room/outdoor-sensor/temperature-sensor/current-temperature"

    /// `homegate pair` into the folder's data directory; retried on the HAP-python padding quirk
    /// (about 1 pair-setup in 85 fails against a correct controller, field notes).
    static func pair(_ peer: HAPPeer, folder: URL, room: String? = "Office") async throws -> String {
        try await pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, room: room)
    }

    static func pair(host: String, port: Int, code: String, folder: URL, room: String? = "Office", config: String = config, transport: String = "ip") async throws -> String {
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        var output = ""
        for _ in 0..<5 {
            var arguments = ["pair", "--config", configFile, "--data-dir", folder.appendingPathComponent("data").path,
                             "--host", host, "--port", String(port), "--code", code]
            if let room { arguments += ["--room", room] }
            if transport != "ip" { arguments += ["--transport", transport] }
            let process = try HomeGateProcess(arguments)
            let status = try await process.waitForExit(timeout: .seconds(30))
            output = process.output
            if status == 0 { return output }
            guard output.contains("refused the setup code") else { break }
        }
        throw FixtureError("homegate pair failed: \(output)")
    }

    static func mosquittoPub(_ broker: Mosquitto, _ topic: String, _ payload: String) async throws {
        let pub = try Executable.locate("mosquitto_pub", install: "scripts/setup (apt-get install mosquitto-clients)")
        let child = try ChildProcess(pub, ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", topic, "-m", payload])
        let status = try await child.waitForExit()
        #expect(status == 0, "mosquitto_pub: \(child.output.value)")
    }

    @Test func aPairedLightbulbIsDrivenFromMosquittoPubAndTheSensorFollows() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0.5)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "hap-e2e")
        let paired = try await Self.pair(peer, folder: folder)
        #expect(paired.contains("paired with"))
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "results"))
        try await results.subscribe("\(Self.lampOn)/set/result")
        try await Self.mosquittoPub(fixture.broker, "\(Self.lampOn)/set", "true")
        let received = try await peer.waitForWrite { $0.aid == 2 && $0.characteristic == "On" }
        #expect(received.valueJSON == "true")
        let ack = try GatewayFixture.decode(try await results.inbox.first(on: "\(Self.lampOn)/set/result").payload)
        #expect(ack["ok"] as? Bool == true)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == Self.lampOn && $0.payloadString == "true" }
        #expect(try await fixture.retained()[Self.lampOn] == "true")

        // The sensor changes by itself on the device: the retained value follows.
        let first = try await fixture.watcher.inbox.first(on: Self.temperature)
        let firstValue = first.payloadString
        _ = try await fixture.watcher.inbox.first { $0.topic.string == Self.temperature && $0.payloadString != firstValue }
        await results.stop()
        try await fixture.stop()
    }

    @Test func theBridgeIsInItsRoomAndTheAccessoriesBehindItInTheDefaultRoomAcrossRestarts() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "hap-e2e")
        _ = try await Self.pair(peer, folder: folder)
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let placement = try await Self.rooms(fixture)
        #expect(placement[peer.name] == "Office")
        #expect(placement["Desk Lamp"] == "Default Room")
        #expect(placement["Outdoor Sensor"] == "Default Room")
        #expect(placement["Front Door"] == "Default Room")
        let ids = try await Self.ids(fixture)
        try await fixture.stop(keepBroker: true)

        let restarted = try await GatewayFixture.start(config: Self.config, broker: fixture.broker, folder: folder)
        #expect(try await Self.rooms(restarted) == placement)
        #expect(try await Self.ids(restarted) == ids)
        #expect(try await restarted.retained()["\(Self.lamp)/$reachable"] == "true")
        try await restarted.stop()
    }

    @Test func aRunningGatewayTakesANewPairingOnSIGHUPAndDropsAnUnpairedOne() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "hap-e2e")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let events = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "events"))
        try await events.subscribe("hgtest/$events")
        _ = try await Self.pair(peer, folder: folder)
        fixture.gateway.signal(SIGHUP)
        let added = try await events.inbox.first(timeout: HangGuard.standard) { $0.payloadString.contains("accessory-added") && $0.payloadString.contains("Desk Lamp") }
        #expect(added.payloadString.contains("\"home\":\"Test Home\""))
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "\(Self.lamp)/$reachable" && $0.payloadString == "true" }

        let pairings = try HomeGateProcess(["pairings", "--config", fixture.configFile, "--data-dir", folder.appendingPathComponent("data").path])
        #expect(try await pairings.waitForExit() == 0)
        #expect(pairings.output.contains(peer.deviceID))

        let unpair = try HomeGateProcess(["unpair", "--config", fixture.configFile, "--data-dir", folder.appendingPathComponent("data").path, peer.deviceID])
        #expect(try await unpair.waitForExit(timeout: .seconds(30)) == 0, "\(unpair.output)")
        _ = try await peer.waitForLine { $0.contains("\"unpaired\"") }
        fixture.gateway.signal(SIGHUP)
        _ = try await events.inbox.first { $0.payloadString.contains("accessory-removed") && $0.payloadString.contains("Desk Lamp") }
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "\(Self.lamp)/$reachable" && $0.payload.isEmpty }
        try await fixture.roundTrip() // every clearing the gateway sent before is with the broker
        let retained = try await fixture.retained()
        #expect(!retained.keys.contains { $0.contains("desk-lamp") }, "no stale retained topic: \(retained.keys.sorted())")
        await events.stop()
        try await fixture.stop()
    }

    @Test func pairingAndUnpairingOverMQTTBringTheAccessoriesInAndTakeThemOut() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "hap-e2e")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        #expect(try await fixture.request("accessory/pair", #"{"host": "127.0.0.1", "port": \#(peer.port), "code": "12-34"}"#)["error"] as? String == "invalid-request")
        var answer: [String: Any] = [:]
        for _ in 0..<5 { // HAP-python's padding quirk refuses about 1 correct pair-setup in 256
            answer = try await fixture.request("accessory/pair", #"{"host": "127.0.0.1", "port": \#(peer.port), "code": "\#(peer.pincode)", "room": "Office", "transaction": "p1"}"#)
            if answer["ok"] as? Bool == true || !((answer["message"] as? String)?.contains("refused the setup code") ?? false) { break }
        }
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        #expect(answer["transaction"] as? String == "p1")
        let ids = (answer["data"] as? [String: Any])?["accessories"] as? [String]
        #expect(ids?.count == 4)
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == "\(Self.lamp)/$reachable" && $0.payloadString == "true" }
        // `$layout` follows within a second: read it once it names the bridge.
        let bridgeName = peer.name
        try await fixture.currentLayout(containing: bridgeName, timeout: HangGuard.standard)
        #expect(try await Self.rooms(fixture)[peer.name] == "Office")

        // Pairing it again: the accessory answers that it is paired already.
        let again = try await fixture.request("accessory/pair", #"{"host": "127.0.0.1", "port": \#(peer.port), "code": "\#(peer.pincode)"}"#)
        #expect(again["error"] as? String == "device-error")
        // Removing a paired device's accessory is refused: it is unpaired instead.
        #expect(try await fixture.request("accessory/remove", #"{"accessory": "Desk Lamp"}"#)["error"] as? String == "not-allowed")

        let unpaired = try await fixture.request("accessory/unpair", #"{"accessory": "Desk Lamp"}"#)
        #expect(unpaired["ok"] as? Bool == true, "\(unpaired)")
        _ = try await peer.waitForLine { $0.contains("\"unpaired\"") }
        // Its retained topics are cleared (an empty retained message on each).
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == "\(Self.lamp)/$reachable" && $0.payload.isEmpty }
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == "\(Self.lampOn)" && $0.payload.isEmpty }
        let retained = try await fixture.retained()
        #expect(!retained.keys.contains { $0.contains("desk-lamp") }, "no stale retained topic: \(retained.keys.sorted())")
        try await fixture.stop()
    }

    /// Accessory name -> room name, from `$layout`.
    static func rooms(_ fixture: GatewayFixture) async throws -> [String: String] {
        var rooms: [String: String] = [:]
        for home in try await fixture.layout()["homes"] as? [[String: Any]] ?? [] {
            for accessory in home["accessories"] as? [[String: Any]] ?? [] {
                if let name = accessory["name"] as? String { rooms[name] = accessory["room"] as? String }
            }
        }
        return rooms
    }

    static func ids(_ fixture: GatewayFixture) async throws -> [String] {
        var ids: [String] = []
        for home in try await fixture.layout()["homes"] as? [[String: Any]] ?? [] {
            for accessory in home["accessories"] as? [[String: Any]] ?? [] { ids.append(accessory["id"] as? String ?? "") }
        }
        return ids.sorted()
    }
}
