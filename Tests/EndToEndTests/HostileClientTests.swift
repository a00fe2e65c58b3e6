import Foundation
import MQTT
import Testing
import TestSupport

/// A client that floods the gateway is contained: the gateway's memory stays bounded by its
/// limits (`mqtt.incoming_buffer` messages waiting, `gateway.queue_limit` commands per
/// characteristic), it answers the flood as it can, and other clients keep being served.
@Suite("hostile MQTT clients", .loadTest)
struct HostileClientTests {
    @Test("a client flooding .../set and $request/... at full speed: another client's sets are still acknowledged, the gateway stays within its memory bounds and answers afterwards")
    func floodIsContained() async throws {
        let fixture = try await GatewayFixture.demo()
        let flooder = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "flooder"))
        let polite = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "polite"))
        let outlet = "homegate/demo-home/living-room/tv-outlet/outlet/on"
        try await polite.subscribe("\(outlet)/set/result")
        try await polite.subscribe("homegate/$response/gateway/statistics")
        let lamp = try TopicName("homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/set")
        let request = try TopicName("homegate/$request/room/rename")
        let garbage = try TopicName("homegate/demo-home/living-room/floor-lamp/lightbulb/brightnes/set")
        // 60,000 messages as fast as the client hands them over (QoS 0: no waiting for the broker),
        // valid sets, refused requests and sets to a topic that does not exist, interleaved.
        let flood = Task {
            for index in 0..<20_000 {
                try flooder.client.send(Message(topic: lamp, payload: Array("\(index % 101)".utf8), qos: .atMostOnce))
                try flooder.client.send(Message(topic: request, payload: Array(#"{"room": "Nowhere", "newName": "X"}"#.utf8), qos: .atMostOnce))
                try flooder.client.send(Message(topic: garbage, payload: Array("\(index)".utf8), qos: .atMostOnce))
            }
        }
        // Meanwhile, and after: the polite client's sets, one at a time, each acknowledged.
        for index in 0..<10 {
            try await polite.publish("\(outlet)/set", index % 2 == 0 ? "false" : "true")
            let ack = try await polite.inbox.first(timeout: .seconds(60)) { $0.topic.string == "\(outlet)/set/result" && $0.payloadString.contains("\"value\":\(index % 2 == 0 ? "false" : "true")") }
            #expect(ack.payloadString.contains("\"ok\":true"), "\(ack.payloadString)")
        }
        try await flood.value
        // The flood is answered as far as the limits let it: sets (carried out or refused busy,
        // -70403) and refused requests, each answered on its own topic.
        _ = try await fixture.watcher.inbox.first(timeout: .seconds(60)) { $0.topic.string == "\(lamp.string)/result" }
        _ = try await fixture.watcher.inbox.first(timeout: .seconds(60)) {
            $0.topic.string == "homegate/$response/room/rename" && $0.payloadString.contains("not-found")
        }
        try await polite.publish("homegate/$request/gateway/statistics", "{}")
        let statistics = try await polite.inbox.first(on: "homegate/$response/gateway/statistics", timeout: .seconds(60))
        #expect(statistics.payloadString.contains("\"ok\":true"))
        let status = try String(contentsOfFile: "/proc/\(fixture.gateway.child.pid)/status", encoding: .utf8)
        let kilobytes = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } ?? 0
        // The bound: 65,536 waiting messages and 1,000 queued commands per characteristic, a few
        // hundred bytes each, on top of the demo's 45 MB.
        #expect(kilobytes > 0 && kilobytes < 200_000, "resident \(kilobytes) kB after the flood")
        print("resident after the flood: \(kilobytes) kB")
        await flooder.stop()
        await polite.stop()
        try await fixture.stop()
    }
}
