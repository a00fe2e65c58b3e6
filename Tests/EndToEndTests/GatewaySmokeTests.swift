import Foundation
import MQTT
import Testing
import TestSupport

/// A first pass through the demo home: the fixture works and the main paths answer.
@Suite("gateway smoke test on the demo home")
struct GatewaySmokeTests {
    @Test("a set turns the lamp on: acknowledgement and retained value; the retained topics are exactly the layout's")
    func setAndHygiene() async throws {
        let fixture = try await GatewayFixture.demo()
        let ack = try await fixture.command("homegate/demo-home/living-room/floor-lamp/lightbulb/on/set", "on")
        #expect(ack["ok"] as? Bool == true)
        #expect(ack["value"] as? Bool == true)
        let retained = try await fixture.retained()
        #expect(retained["homegate/demo-home/living-room/floor-lamp/lightbulb/on"] == "true")
        let layout = try await fixture.layout()
        #expect(Set(retained.keys) == GatewayFixture.retainedTopics(of: layout, base: "homegate", values: retained))
        try await fixture.stop()
    }
}

@Suite("gateway: reloads and repeated retained commands")
struct GatewayReloadTests {
    @Test("an accessory added by SIGHUP appears at the next start")
    func addedBySIGHUPAppearsAtNextStart() async throws {
        let fixture = try await GatewayFixture.demo()
        let text = try String(contentsOfFile: fixture.configFile, encoding: .utf8)
        let added = text.replacingOccurrences(of: "      - id: sim-tv-outlet\n", with: """
              - id: sim-new-lamp
                name: New Lamp
                room: Kitchen
                services:
                  - type: lightbulb
                    characteristics: {on: true}
              - id: sim-tv-outlet

        """)
        #expect(added != text)
        try added.write(toFile: fixture.configFile, atomically: true, encoding: .utf8)
        fixture.gateway.signal(SIGHUP)
        try await fixture.gateway.waitForOutput(containing: "accessory sim-new-lamp is new in the configuration; it appears at the next start")
        try await fixture.gateway.waitForOutput(containing: "configuration reloaded")
        try await fixture.stop(keepBroker: true)

        let restarted = try await GatewayFixture.start(config: added, broker: fixture.broker, folder: fixture.folder)
        let ack = try await restarted.command("homegate/demo-home/kitchen/new-lamp/lightbulb/on/set", "off")
        #expect(ack["ok"] as? Bool == true, "\(ack)")
        try await restarted.stop()
    }

    @Test("a retained set published twice with the same payload runs twice")
    func retainedTwice() async throws {
        let fixture = try await GatewayFixture.demo()
        let topic = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set"
        let first = try await fixture.command(topic, "70", retain: true)
        #expect(first["retained"] as? Bool == true && first["ok"] as? Bool == true)
        _ = try await fixture.command("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set", "30")
        let second = try await fixture.command(topic, "70", retain: true)
        #expect(second["retained"] as? Bool == true && second["ok"] as? Bool == true, "\(second)")
        #expect(try await fixture.retained()["homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"] == "70")
        try await fixture.stop()
    }
}

/// `online` means commands reach the engine.
@Suite("online means ready")
struct OnlineMeansReadyTests {
    @Test("a set sent the moment $state says online, at a first start (no session kept yet), is acknowledged", arguments: 1...4)
    func aSetSentOnOnlineIsAcknowledged(_ attempt: Int) async throws {
        let broker = try await Mosquitto.start()
        let folder = try TemporaryDirectory.make(prefix: "online-ready")
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "eager"))
        try await client.subscribe("homegate/$state")
        try await client.subscribe("eager/replies")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try GatewayFixture.demoText().write(toFile: configFile, atomically: true, encoding: .utf8)
        let gateway = try HomeGateProcess(["run", "--config", configFile, "--mqtt-url", broker.url.description,
                                           "--data-dir", folder.appendingPathComponent("data").path])
        _ = try await client.inbox.first(on: "homegate/$state", payload: "online", timeout: .seconds(20))
        var properties = Message.Properties()
        properties.responseTopic = try TopicName("eager/replies")
        properties.correlationData = Array("attempt \(attempt)".utf8)
        try await client.publish("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set", "77", properties: properties)
        let reply = try await client.inbox.first(on: "eager/replies", timeout: .seconds(10))
        #expect(reply.payloadString.contains("\"ok\":true"))
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit()
        await client.stop()
        await broker.stop()
    }
}
