import Foundation
import MQTT
import Testing
import TestSupport

/// A first pass through the demo home: the fixture works and the main paths answer.
@Suite("gateway smoke test on the demo home", .startsProcesses)
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

@Suite("gateway: reloads and repeated retained commands", .startsProcesses)
struct GatewayReloadTests {
    @Test("SIGHUP: an accessory and a bridge added to the file appear at once (retained values, $layout, settable); one removed from the file disappears; all as at the next start")
    func addedAndRemovedBySIGHUP() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        let coffee = "homegate/demo-home/kitchen/coffee-machine"
        #expect(try await fixture.retained()["\(coffee)/outlet/on"] == "false")
        let text = try String(contentsOfFile: fixture.configFile, encoding: .utf8)
        let edited = try Self.edit(text, [
            // A lamp, new in the Kitchen.
            ("      - id: sim-tv-outlet\n", """
                  - id: sim-new-lamp
                    name: New Lamp
                    room: Kitchen
                    services:
                      - type: lightbulb
                        characteristics: {on: true}
                  - id: sim-tv-outlet

            """),
            // A bridge with one accessory behind it, new too.
            ("      - id: sim-hue-bridge\n", """
                  - id: sim-new-bridge
                    name: Strip Bridge
                    room: Garage
                    services: []
                    bridged:
                      - id: sim-new-strip
                        name: LED Strip
                        room: Garage
                        services:
                          - type: lightbulb
                            characteristics: {on: false, brightness: 25}
                  - id: sim-hue-bridge

            """),
            // The coffee machine, gone from the file.
            (try Self.entry("sim-coffee-machine", in: text), ""),
        ])
        try edited.write(toFile: fixture.configFile, atomically: true, encoding: .utf8)
        fixture.gateway.signal(SIGHUP)

        let lamp = "homegate/demo-home/kitchen/new-lamp/lightbulb/on"
        let strip = "homegate/demo-home/garage/led-strip/lightbulb"
        try await fixture.waitUntilRetained(lamp, equals: "true")
        try await fixture.waitUntilRetained("\(strip)/brightness", equals: "25")
        try await fixture.gateway.waitForOutput(containing: "accessory sim-new-lamp (New Lamp) is new in the configuration; it joins Demo Home, Kitchen")
        let layout = try await fixture.currentLayout { layout in
            TreeLayout.accessory("sim-new-strip", in: layout) != nil && TreeLayout.accessory("sim-coffee-machine", in: layout) == nil
        }
        #expect(TreeLayout.accessory("sim-new-lamp", in: layout)?["room"] as? String == "Kitchen")
        #expect(TreeLayout.accessory("sim-new-strip", in: layout)?["bridge"] as? String == "sim-new-bridge")
        let ack = try await fixture.command("\(lamp)/set", "off")
        #expect(ack["ok"] as? Bool == true, "\(ack)")
        try await fixture.waitUntilRetained(lamp, equals: "false")
        let stripAck = try await fixture.command("\(strip)/brightness/set", "80")
        #expect(stripAck["ok"] as? Bool == true, "\(stripAck)")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        #expect(retained.keys.filter { $0.hasPrefix(coffee + "/") }.sorted() == [], "the removed accessory's topics are cleared")
        #expect(Set(retained.keys) == GatewayFixture.retainedTopics(of: try await fixture.layout(), base: "homegate", values: retained))
        let removed = try await fixture.waitForEvent("accessory-removed") { $0["accessory"] as? String == "sim-coffee-machine" }
        #expect(removed["name"] as? String == "Coffee Machine")
        try await fixture.waitForEvent("accessory-added") { $0["accessory"] as? String == "sim-new-strip" }
        try await fixture.stop(keepBroker: true)

        // The next start has the same accessories.
        let restarted = try await GatewayFixture.start(config: edited, broker: fixture.broker, folder: fixture.folder)
        let again = try await restarted.command("\(lamp)/set", "on")
        #expect(again["ok"] as? Bool == true, "\(again)")
        let restartedLayout = try await restarted.layout()
        #expect(TreeLayout.accessory("sim-new-strip", in: restartedLayout) != nil)
        #expect(TreeLayout.accessory("sim-coffee-machine", in: restartedLayout) == nil)
        try await restarted.stop()
    }

    /// `text` with each replacement made; each must find its text.
    static func edit(_ text: String, _ replacements: [(String, String)]) throws -> String {
        var result = text
        for (old, new) in replacements {
            guard let range = result.range(of: old) else { throw FixtureError("the demo configuration has no \(old.debugDescription)") }
            result.replaceSubrange(range, with: new)
        }
        return result
    }

    /// An accessory's whole entry in the demo's configuration: from its `- id:` line to the next
    /// accessory's.
    static func entry(_ id: String, in text: String) throws -> String {
        guard let start = text.range(of: "      - id: \(id)\n") else { throw FixtureError("no accessory \(id) in the demo configuration") }
        let end = text.range(of: "\n      - id: ", range: start.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        return String(text[start.lowerBound...end])
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
@Suite("online means ready", .startsProcesses)
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
        _ = try await client.inbox.first(on: "homegate/$state", payload: "online", timeout: HangGuard.standard)
        var properties = Message.Properties()
        properties.responseTopic = try TopicName("eager/replies")
        properties.correlationData = Array("attempt \(attempt)".utf8)
        try await client.publish("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set", "77", properties: properties)
        let reply = try await client.inbox.first(on: "eager/replies", timeout: HangGuard.standard)
        #expect(reply.payloadString.contains("\"ok\":true"))
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit()
        await client.stop()
        await broker.stop()
    }
}
