import Foundation
import MQTT
import Testing
import TestSupport

/// Many HomeKit devices on one gateway (issue 23): 100 HAP accessory servers (`many_peers.py`,
/// HAP-python, each its own port, device id and pairings) paired with the real binary through a
/// real Mosquitto, then a restart: every device reachable, one set on each acknowledged and
/// carried out, a change each device makes by itself published. The times belong to the bench
/// (`scripts/bench --only many`); this test waits on the conditions.
@Suite(.serialized, .loadTest) struct ManyDevicesTests {
    static let count = 100
    static let config = HAPEndToEndTests.config

    @Test("100 HAP devices on one gateway: all paired, all reachable after a restart, one set on each acknowledged and carried out, an event from each published")
    func aHundredDevices() async throws {
        let peers = try await ManyPeers.start(count: Self.count)
        defer { Task { await peers.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "many-devices")
        let first = try await GatewayFixture.start(config: Self.config, folder: folder)
        try await peers.pairAll(broker: first.broker, base: first.base, room: "Office")
        #expect(peers.pairedCount() == Self.count, "\(peers.pairedCount()) peers report a pairing")
        try await first.stop(keepBroker: true)

        // The restart, on the same broker: what it retains says every device is reachable
        // (`$reachable` stays retained across the restart; once the new process has synchronised
        // and answered a round trip, it has corrected every one it sees otherwise).
        let broker = first.broker
        let fixture = try await GatewayFixture.start(config: Self.config, broker: broker, folder: folder)
        try await fixture.roundTrip()
        let count = Self.count
        let topics = try await fixture.watcher.inbox.wait(timeout: .seconds(60), for: "\(count) accessories reachable") { messages -> Set<String>? in
            let reachable = ManyPeers.reachable(in: messages, live: false)
            return reachable.count >= count ? reachable : nil
        }
        #expect(topics.count == Self.count, "\(topics.sorted())")
        #expect(Set(topics.compactMap(ManyPeers.index(ofAccessoryTopic:))) == Set(0..<Self.count), "\(topics.sorted())")
        let retained = try await fixture.retained()
        let retainedReachable = topics.filter { retained["\($0)/$reachable"] == "true" }
        #expect(retainedReachable.count == Self.count, "retained reachable: \(retainedReachable.count) of \(Self.count)")

        let status = try ProcessStatus.read(fixture.gateway.child.pid)
        print("ManyDevicesTests: with \(Self.count) HAP devices reachable the gateway has \(status.threads) threads and \(status.residentMegabytes) MB resident")
        // HAP connections are channels on SwiftNIO's shared group: the thread count does not grow
        // with the devices (a reader thread per connection gave 107 threads with 100 devices).
        #expect(status.threads <= 16, "\(status.threads) threads with \(Self.count) HAP devices")

        // One set on each, all sent at once: each acknowledged ok, each device has its value.
        let results = try await TestClient.connect(TestClient.configuration(broker.url, id: "many-results"))
        try await results.subscribe("\(fixture.base)/+/+/+/lightbulb/brightness/set/result")
        for topic in topics.sorted() {
            guard let index = ManyPeers.index(ofAccessoryTopic: topic) else { continue }
            try await results.publish("\(topic)/lightbulb/brightness/set", String(Self.brightness(index)))
        }
        let acks = try await results.inbox.collect(Self.count, timeout: .seconds(60)) { $0.topic.string.hasSuffix("/set/result") }
        for ack in acks {
            let answer = try GatewayFixture.decode(ack.payload)
            #expect(answer["ok"] as? Bool == true, "\(ack.topic.string): \(answer)")
        }
        #expect(Set(acks.map(\.topic.string)).count == Self.count, "one acknowledgement per device")
        let writes = try await peers.waitForWrites { writes in Set(writes.filter { $0.characteristic == "Brightness" }.map(\.index)).count >= count }
        for index in 0..<Self.count {
            let values = writes.filter { $0.index == index && $0.characteristic == "Brightness" }.map(\.valueJSON)
            #expect(values == [String(Self.brightness(index))], "Lamp \(index) was written \(values)")
        }

        // Every device changes its brightness by itself: the event from each reaches MQTT.
        let mark = fixture.watcher.inbox.all.count
        try await peers.set("Brightness", json: "7")
        let changed = try await fixture.watcher.inbox.wait(timeout: .seconds(60), for: "an event from every device") { messages -> Set<String>? in
            let topics = Set(messages.dropFirst(mark).filter { $0.topic.string.hasSuffix("/lightbulb/brightness") && $0.payloadString == "7" }.map(\.topic.string))
            return topics.count >= count ? topics : nil
        }
        #expect(changed == Set(topics.map { "\($0)/lightbulb/brightness" }))

        await results.stop()
        try await fixture.stop()
    }

    /// The brightness the set sends to peer `index`: 10 ... 99, never its starting 100 nor the
    /// 7 the devices change to by themselves.
    static func brightness(_ index: Int) -> Int {
        10 + index % 90
    }
}
