import Foundation
import MQTT
import Testing
import TestSupport

/// Flooded beyond what it can take at once, the gateway reads from the broker only as fast as the
/// engine handles what it read (it takes each message on the network thread as it is read), so
/// the broker holds the rest, and every set it read is answered (carried out, or refused busy,
/// -70403), exactly once. Real `mosquitto_pub -l` clients at full speed against the real binary,
/// with the `mqtt.incoming_buffer: 100` that used to lose most of such a flood.
@Suite("overload: backpressure, never a silent drop", .serialized, .loadTest)
struct OverloadTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb/on/set"
    static let clients = 3
    static let setsPerClient = 20_000

    /// The demo with a 100-message incoming buffer and the metrics endpoint on `port`.
    static func config(metricsPort port: Int) throws -> String {
        let demo = try GatewayFixture.demoText(appending: "metrics:\n  port: \(port)\n")
        let small = demo.replacingOccurrences(of: "mqtt:\n  url: mqtt://127.0.0.1:1883\n", with: "mqtt:\n  url: mqtt://127.0.0.1:1883\n  incoming_buffer: 100\n")
        guard small != demo else { throw FixtureError("config/demo.yml's mqtt section changed; update OverloadTests.config") }
        return small
    }

    @Test("three clients sending 20,000 QoS 1 sets each with response topics and correlation data, incoming_buffer 100: all 60,000 answered exactly once")
    func qos1Flood() async throws {
        let port = try FreePort.next()
        // The broker may have 1,000 QoS 1 messages in flight to the gateway, ten times its buffer.
        let broker = try await Mosquitto.start(extraConfiguration: ["max_inflight_messages 1000"])
        let fixture = try await GatewayFixture.start(config: Self.config(metricsPort: port), broker: broker)
        let listener = try await TestClient.connect(TestClient.configuration(broker.url, id: "replies"))
        try await listener.subscribe("overload/+/replies")
        let publishers = try (1...Self.clients).map { client in
            try Self.mosquittoPub(broker: broker, qos: 1, client: client, extra: ["-D", "publish", "response-topic", "overload/c\(client)/replies",
                                                                               "-D", "publish", "correlation-data", "c\(client)"])
        }
        for publisher in publishers {
            #expect(try await publisher.waitForExit(timeout: .seconds(600)) == 0, "mosquitto_pub: \(publisher.output.value)")
        }
        let total = Self.clients * Self.setsPerClient
        _ = try await listener.inbox.wait(timeout: .seconds(600), for: "\(total) replies") { $0.count >= total ? true : nil }
        // A last set after the flood: the gateway answers in order, so once its reply is here every
        // reply to the flood is too, and a duplicate would have been counted.
        try await listener.publish(Self.lamp, #"{"value": true, "id": "marker"}"#, properties: .init(responseTopic: try TopicName("overload/marker/replies")))
        _ = try await listener.inbox.first(on: "overload/marker/replies", timeout: .seconds(120))
        let replies = listener.inbox.all.filter { $0.topic.string != "overload/marker/replies" }
        var ids: [String: Int] = [:]
        var outcomes: [String: Int] = [:]
        for reply in replies {
            let body = try GatewayFixture.decode(reply.payload)
            let id = body["id"] as? String ?? "none"
            ids[id, default: 0] += 1
            // Each reply goes to its sender's response topic with its correlation data.
            let client = reply.topic.string.split(separator: "/")[1]
            #expect(id.hasPrefix("\(client)-") && reply.properties.correlationData == Array(client.utf8), "\(reply.topic) \(id)")
            outcomes[(body["ok"] as? Bool == true) ? "ok" : (body["error"] as? String ?? "?"), default: 0] += 1
        }
        #expect(replies.count == total, "\(replies.count) replies for \(total) sets")
        #expect(ids.count == total, "\(ids.count) distinct sets answered of \(total)")
        #expect(ids.values.allSatisfy { $0 == 1 }, "answered more than once: \(ids.filter { $0.value > 1 }.prefix(5))")
        #expect(Set(outcomes.keys).isSubset(of: ["ok", "busy"]), "\(outcomes)")
        print("QoS 1 flood: \(outcomes)")
        // The engine took every set once.
        let metrics = try await Self.metrics(port: port)
        #expect(metrics[#"homegate_commands_total{kind="set"}"#] == Double(total + 1), "\(metrics)")
        try await Self.expectBoundedMemory(fixture)
        await listener.stop()
        try await fixture.stop()
    }

    @Test("three clients flooding QoS 0 sets, incoming_buffer 100: every set the gateway received is answered")
    func qos0Flood() async throws {
        let port = try FreePort.next()
        let fixture = try await GatewayFixture.start(config: Self.config(metricsPort: port))
        let listener = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "results"))
        try await listener.subscribe("\(Self.lamp)/result")
        let before = try await Self.metrics(port: port)
        let publishers = try (1...Self.clients).map { try Self.mosquittoPub(broker: fixture.broker, qos: 0, client: $0, extra: [], endMarker: true) }
        for publisher in publishers {
            #expect(try await publisher.waitForExit(timeout: .seconds(600)) == 0, "mosquitto_pub: \(publisher.output.value)")
        }
        // Each client's last set (`c<n>-end`) is answered after all its others: the broker keeps
        // one publisher's order and the gateway answers in order.
        for client in 1...Self.clients {
            _ = try await listener.inbox.first(timeout: .seconds(300)) { $0.payloadString.contains(#""id":"c\#(client)-end""#) }
        }
        let after = try await Self.metrics(port: port)
        let results = listener.inbox.all
        var ids = Set<String>()
        for result in results { ids.insert(try GatewayFixture.decode(result.payload)["id"] as? String ?? "none") }
        // What the gateway's broker connection received while the flood ran: the flood's sets (a
        // broker may drop QoS 0 messages it cannot deliver; the shipped Mosquitto configuration
        // queues up to 1,000,000 per client, so here it keeps them while the gateway is not reading).
        let received = Int((after["homegate_mqtt_messages_received_total"] ?? 0) - (before["homegate_mqtt_messages_received_total"] ?? 0))
        let sets = Int((after[#"homegate_commands_total{kind="set"}"#] ?? 0) - (before[#"homegate_commands_total{kind="set"}"#] ?? 0))
        let sent = Self.clients * (Self.setsPerClient + 1)
        let reconnects = Int((after["homegate_mqtt_reconnects_total"] ?? 0) - (before["homegate_mqtt_reconnects_total"] ?? 0))
        print("QoS 0 flood: \(received) of \(sent) sets reached the gateway, \(results.count) answered, \(reconnects) reconnects")
        // A reconnect would bring the broker's retained messages again, and they count as received.
        #expect(reconnects == 0, "the gateway reconnected during the flood: \(after)")
        #expect(received > 0 && received <= sent)
        #expect(sets == received, "\(sets) sets taken by the engine, \(received) received")
        #expect(results.count == received, "\(results.count) answers for \(received) sets received")
        #expect(ids.count == received, "\(ids.count) distinct sets answered")
        try await Self.expectBoundedMemory(fixture)
        await listener.stop()
        try await fixture.stop()
    }

    /// A `mosquitto_pub -l` sending ``setsPerClient`` sets to the lamp, each with an `id`
    /// (`c<client>-<n>`), as fast as it can; with `endMarker`, one more, `c<client>-end`.
    static func mosquittoPub(broker: Mosquitto, qos: Int, client: Int, extra: [String], endMarker: Bool = false) throws -> ChildProcess {
        let pub = try Executable.locate("mosquitto_pub", install: "scripts/setup (apt-get install mosquitto-clients)")
        let folder = try TemporaryDirectory.make(prefix: "flood")
        let file = folder.appendingPathComponent("sets.txt").path
        var lines = (0..<setsPerClient).map { #"{"value": \#($0 % 2 == 0), "id": "c\#(client)-\#($0)"}"# }
        if endMarker { lines.append(#"{"value": true, "id": "c\#(client)-end"}"#) }
        let text = lines.joined(separator: "\n") + "\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let arguments = [pub, "-h", broker.url.host, "-p", "\(broker.url.port)", "-V", "mqttv5", "-q", "\(qos)", "-t", lamp, "-l"] + extra
        let command = "exec " + arguments.map { "'\($0)'" }.joined(separator: " ") + " < '\(file)'"
        return try ChildProcess("/bin/sh", ["-c", command])
    }

    /// The gateway's metrics as name (with labels) -> value.
    static func metrics(port: Int) async throws -> [String: Double] {
        let curl = try Executable.locate("curl", install: "apt-get install curl")
        let scrape = try ChildProcess(curl, ["-s", "http://127.0.0.1:\(port)/metrics"])
        #expect(try await scrape.waitForExit() == 0)
        var values: [String: Double] = [:]
        for line in scrape.output.value.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// The bound: nothing waits between the network and the engine, and at most 1,000 commands
    /// wait per characteristic, on top of the demo's own memory.
    static func expectBoundedMemory(_ fixture: GatewayFixture) async throws {
        let status = try String(contentsOfFile: "/proc/\(fixture.gateway.child.pid)/status", encoding: .utf8)
        let kilobytes = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } ?? 0
        #expect(kilobytes > 0 && kilobytes < 150_000, "resident \(kilobytes) kB after the flood")
        print("resident after the flood: \(kilobytes) kB")
    }
}
