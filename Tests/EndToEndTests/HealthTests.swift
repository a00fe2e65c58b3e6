import Foundation
import Testing
import TestSupport

/// `<base>/$health` through the real binary and Mosquitto: published retained every
/// `gateway.health_interval`, with the process's figures, the MQTT session and each accessory's
/// events, failed writes, reachability changes and last error, the same counts `/metrics` serves.
@Suite(.startsProcesses) struct HealthTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb"

    /// The next `$health` after `mark` messages, decoded, that satisfies `predicate`.
    static func health(_ fixture: GatewayFixture, after mark: Int, where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> [String: Any] {
        let message = try await fixture.watcher.inbox.wait(for: "a $health message") { messages in
            messages.dropFirst(mark).first { message in
                message.topic.string == "homegate/$health"
                    && ((try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]).map(predicate) ?? false)
            }
        }
        #expect(message.retain)
        return try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    static func accessory(_ health: [String: Any], _ id: String) -> [String: Any] {
        (health["accessories"] as? [String: Any])?[id] as? [String: Any] ?? [:]
    }

    @Test("$health is retained every health_interval: uptime, memory, CPU, the MQTT session, and per accessory its events, failed writes, reachability changes and last error, as /metrics counts them")
    func healthReportsWhatHappened() async throws {
        let port = try FreePort.next()
        let fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: """
            gateway:
              health_interval: 1
            metrics:
              port: \(port)
            """))
        let first = try await Self.health(fixture, after: 0) { _ in true }
        #expect((first["uptimeSeconds"] as? Double ?? 0) > 0, "\(first)")
        #expect((first["residentBytes"] as? Int ?? 0) > 1_000_000, "\(first)")
        #expect(first["cpuSeconds"] is Double || first["cpuSeconds"] is Int, "\(first)")
        let mqtt = first["mqtt"] as? [String: Any] ?? [:]
        #expect(mqtt["connected"] as? Bool == true && (mqtt["messagesSent"] as? Int ?? 0) > 0 && (mqtt["messagesReceived"] as? Int ?? 0) > 0, "\(first)")
        #expect(Self.accessory(first, "sim-lamp-1")["name"] as? String == "Floor Lamp", "\(first)")

        // The lamp changes by itself twice, refuses a write, drops off and comes back.
        for brightness in [20, 30] {
            _ = try await fixture.request("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "brightness", "value": \#(brightness)}"#)
        }
        _ = try await fixture.request("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": -70403}"#)
        let refused = try await fixture.command("\(Self.lamp)/on/set", "true")
        #expect(refused["ok"] as? Bool == false, "\(refused)")
        _ = try await fixture.request("simulator/reachability", #"{"accessory": "sim-lamp-1", "reachable": false}"#)
        _ = try await fixture.request("simulator/reachability", #"{"accessory": "sim-lamp-1", "reachable": true}"#)
        let mark = fixture.watcher.inbox.all.count
        let later = try await Self.health(fixture, after: mark) { health in
            (Self.accessory(health, "sim-lamp-1")["reachabilityChanges"] as? Int ?? 0) >= 2
        }
        let lamp = Self.accessory(later, "sim-lamp-1")
        #expect((lamp["events"] as? Int ?? 0) >= 2, "\(lamp)")
        #expect(lamp["failedWrites"] as? Int == 1, "\(lamp)")
        #expect(lamp["reachabilityChanges"] as? Int == 2, "\(lamp)")
        #expect(lamp["lastError"] as? String == "Floor Lamp (on): Floor Lamp refused the write (busy)", "\(lamp)")
        #expect(lamp["reachable"] as? Bool == true)

        // /metrics counts the same.
        let curl = try Executable.locate("curl", install: "scripts/setup (apt-get install curl)")
        let scrape = try ChildProcess(curl, ["-s", "http://127.0.0.1:\(port)/metrics"])
        #expect(try await scrape.waitForExit() == 0)
        let text = scrape.output.value
        #expect(text.contains("homegate_accessory_failed_writes_total{accessory=\"sim-lamp-1\"} 1"), "\(text.suffix(3000))")
        #expect(text.contains("homegate_accessory_reachability_changes_total{accessory=\"sim-lamp-1\"} 2"), "\(text.suffix(3000))")
        #expect(text.contains("homegate_mqtt_messages_sent_total"), "\(text.suffix(3000))")
        try await fixture.stop()
    }
}
