import Foundation
import MQTT
import Testing
import TestSupport

/// `mqtt.url` as a list: the gateway moves to the next broker when its broker goes away, makes
/// the new broker hold everything it asserts, and goes back to the first broker after a loss.
@Suite("broker list and failover", .startsProcesses)
struct BrokerFailoverTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"

    /// A fresh client on `broker` finds `topic` retained with `payload`.
    static func retained(_ topic: String, _ payload: String, on broker: Mosquitto) async throws {
        let reader = try await TestClient.connect(TestClient.configuration(broker.url, id: "reader"))
        try await reader.subscribe(topic, retainAsPublished: true) // also a retained message published right now
        let message = try await reader.inbox.first(on: topic, timeout: HangGuard.standard)
        #expect(message.retain && message.payloadString == payload, "\(topic) on \(broker.url): \(message.payloadString)")
        await reader.stop()
    }

    @Test("node A goes away: the gateway moves to node B, which then holds every retained topic; sets there are acknowledged once; after B goes away it is back on A")
    func failoverAndBack() async throws {
        let nodeA = try await Mosquitto.start()
        let nodeB = try await Mosquitto.start()
        let folder = try TemporaryDirectory.make(prefix: "failover")
        let config = try GatewayFixture.demoText().replacingOccurrences(of: "url: mqtt://127.0.0.1:1883",
                                                                      with: "url: [mqtt://127.0.0.1:\(nodeA.port), mqtt://127.0.0.1:\(nodeB.port)]")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let gateway = try HomeGateProcess(["run", "--config", configFile, "--data-dir", folder.appendingPathComponent("data").path])
        _ = try await gateway.waitForOutput(containing: "connected to the MQTT broker at mqtt://127.0.0.1:\(nodeA.port)")
        _ = try await gateway.waitForOutput(containing: "synchronised with the broker")
        try await Self.retained("homegate/$state", "online", on: nodeA)

        // A goes away; the clients of B see the gateway arrive with everything it asserts.
        await nodeA.stop()
        _ = try await gateway.waitForOutput(containing: "connected to the MQTT broker at mqtt://127.0.0.1:\(nodeB.port)", timeout: .seconds(30))
        let onB = try await TestClient.connect(TestClient.configuration(nodeB.url, id: "client-b"))
        try await onB.subscribe("failover/replies", qos: .exactlyOnce)
        try await Self.retained("homegate/$state", "online", on: nodeB)
        try await Self.retained(Self.lamp, "40", on: nodeB)
        try await onB.setExactlyOnce(Self.lamp, value: 61, replies: "failover/replies")
        try await Self.retained(Self.lamp, "62", on: nodeB)
        await onB.stop()

        // A is back, B goes away: after the loss the list is tried from the first, A.
        try await nodeA.restart()
        await nodeB.stop()
        _ = try await gateway.waitForOutput(containing: "lost the connection to the MQTT broker at mqtt://127.0.0.1:\(nodeB.port)", timeout: .seconds(30))
        let onA = try await TestClient.connect(TestClient.configuration(nodeA.url, id: "client-a"))
        try await onA.subscribe("failover/replies", qos: .exactlyOnce)
        try await Self.retained(Self.lamp, "62", on: nodeA)
        try await onA.setExactlyOnce(Self.lamp, value: 30, replies: "failover/replies")
        await onA.stop()
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        await nodeA.stop()
    }
}
