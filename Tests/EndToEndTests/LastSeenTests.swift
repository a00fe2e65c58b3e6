import Foundation
import MQTT
import Testing
import TestSupport

/// `<accessory>/$last-seen` through the real binary and Mosquitto: when each accessory was last
/// heard from, retained, ISO 8601 in UTC, at most once per `gateway.last_seen_interval`; kept
/// from the broker for an accessory not heard from since a restart; moved with a rename.
@Suite(.startsProcesses) struct LastSeenTests {
    static let seeded = "2026-01-02T03:04:05Z"

    static func date(_ text: String?) -> Date? {
        text.flatMap { try? Date($0, strategy: .iso8601) }
    }

    static func topic(of id: String, in layout: [String: Any]) -> String? {
        (ManagementVerbTests.home(layout)["accessories"] as? [[String: Any]])?.first { $0["id"] as? String == id }?["topic"] as? String
    }

    @Test("$last-seen: retained when an accessory is first heard from, then at most once per interval; an unreachable one keeps the broker's from before; a rename moves it")
    func lastSeen() async throws {
        // What the broker kept from an earlier run for the Reading Lamp, which is unreachable
        // now (so not heard from): the gateway keeps it.
        let broker = try await Mosquitto.start()
        let earlier = try await TestClient.connect(TestClient.configuration(broker.url, id: "earlier-run"))
        let readingLampSeen = "homegate/demo-home/living-room/reading-lamp/$last-seen"
        try await earlier.publish(readingLampSeen, Self.seeded, retain: true)
        await earlier.stop()

        let started = Date()
        let fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: """
            gateway:
              last_seen_interval: 1
            """), broker: broker)
        let layout = try await fixture.layout()
        #expect(Self.topic(of: "sim-hue-reading", in: layout).map { "\($0)/$last-seen" } == readingLampSeen)
        let lamp = try #require(Self.topic(of: "sim-lamp-1", in: layout))

        // The Floor Lamp was heard from when the simulator described it.
        let first = try await fixture.watcher.inbox.first { $0.topic.string == "\(lamp)/$last-seen" && $0.retain }
        let firstDate = try #require(Self.date(first.payloadString), "\(first.payloadString)")
        #expect(first.payloadString.hasSuffix("Z"), "UTC: \(first.payloadString)")
        #expect(firstDate >= started.addingTimeInterval(-2) && firstDate <= Date().addingTimeInterval(2), "\(first.payloadString)")
        var retained = try await fixture.retained()
        #expect(retained[readingLampSeen] == Self.seeded, "kept for the accessory not heard from: \(retained[readingLampSeen] ?? "cleared")")

        // Sets the lamp answers: heard from again, published again, never twice within the
        // interval (a second apart at least as the gateway sends; half a second as received).
        // `$last-seen` is to the second: the sets come in a later second than the first one, so
        // that the time they give differs (a wait on the wall clock, not on the gateway).
        while Date() < firstDate.addingTimeInterval(1.05) { try await Task.sleep(for: .milliseconds(100)) }
        for brightness in [10, 20, 30, 40, 50] {
            #expect(try await fixture.command("\(lamp)/lightbulb/brightness/set", "\(brightness)")["ok"] as? Bool == true)
        }
        let later = try await fixture.watcher.inbox.first {
            $0.topic.string == "\(lamp)/$last-seen" && (Self.date($0.payloadString) ?? .distantPast) > firstDate
        }
        #expect(later.retain)
        let received = fixture.watcher.inbox.all.filter { $0.topic.string == "\(lamp)/$last-seen" }.compactMap(\.receivedAt)
        for (earlier, next) in zip(received, received.dropFirst()) {
            #expect(earlier.duration(to: next) >= .milliseconds(500), "\(received)")
        }

        // A rename moves it; the old topic is cleared.
        #expect(try await fixture.request("accessory/rename", #"{"accessory": "Floor Lamp", "newName": "Sofa Lamp"}"#)["ok"] as? Bool == true)
        let renamed = try #require(Self.topic(of: "sim-lamp-1", in: try await fixture.currentLayout(containing: "\"Sofa Lamp\"")))
        let moved = try await fixture.watcher.inbox.first { $0.topic.string == "\(renamed)/$last-seen" && !$0.payload.isEmpty }
        #expect(Self.date(moved.payloadString) != nil)
        retained = try await fixture.retained()
        #expect(retained["\(lamp)/$last-seen"] == nil, "the old topic is cleared")
        #expect(retained["\(renamed)/$last-seen"] == moved.payloadString)
        try await fixture.stop()
    }
}
