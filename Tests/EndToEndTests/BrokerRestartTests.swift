import Foundation
import Harness
import MQTT
import Testing
import TestSupport

/// The broker restarting while the gateway holds sets it has not acknowledged yet (issue 35: a
/// 30-minute soak left the gateway reconnecting about once a second, never answering again).
///
/// The in-flight state is made on purpose, not waited for: the gateway is stopped (SIGSTOP), a
/// phone sends more QoS 2 sets than the gateway's Receive Maximum, the broker writes as many as
/// it may to the gateway's socket (its own debug log says so), and is stopped with those
/// unacknowledged (saved in its persistence file); the gateway then reads them from the dead
/// connection and acknowledges into it. The restarted broker re-sends every one of them.
@Suite("The broker restarting under the gateway", .startsProcesses)
struct BrokerRestartTests {
    static let brightness = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"
    /// More than the Receive Maximum (20), so the broker has a full window out and more queued.
    static let sets = 30

    @Test("a broker restart while its sets to the gateway are unacknowledged: the session comes back, every set is answered exactly once, the gateway does not reconnect again")
    func restartWithSetsInFlight() async throws {
        let folder = try TemporaryDirectory.make(prefix: "restart")
        let broker = try await Mosquitto.start(extraConfiguration: ["persistence true", "persistence_location \(folder.path)/", "autosave_interval 3600", "log_type all"], directory: folder)
        let fixture = try await GatewayFixture.demo(broker: broker)
        var phoneConfiguration = TestClient.configuration(broker.url, id: "phone")
        phoneConfiguration.cleanStart = false // the answers published while the broker is away reach it
        let phone = try await TestClient.connect(phoneConfiguration)
        try await phone.subscribe("\(Self.brightness)/set/result")

        fixture.gateway.signal(SIGSTOP)
        for number in 1...Self.sets {
            try await phone.publish("\(Self.brightness)/set", #"{"value": \#(number), "id": "r\#(number)"}"#, qos: .exactlyOnce)
        }
        // The gateway's window is 20, less anything else the broker had out to it when it was
        // stopped (seen: 19 sets); 15 of them make the same state.
        let sentBefore = try await Self.waitForBrokerSends(broker, atLeast: 15)
        await broker.stop() // SIGTERM: Mosquitto saves the sets in flight to the gateway
        fixture.gateway.signal(SIGCONT)
        _ = try await fixture.gateway.waitForOutput(containing: "lost the connection to the MQTT broker")
        try await broker.restart()

        let answers = try await phone.inbox.wait(timeout: .seconds(90), for: "an answer to each of the \(Self.sets) sets") { messages -> [String: Int]? in
            let counts = Self.answerCounts(messages)
            return counts.count == Self.sets ? counts : nil
        }
        // Anything still on its way is in before the answer to a later set.
        let last = try await fixture.command("\(Self.brightness)/set", #"{"value": 99, "id": "after"}"#)
        #expect(last["ok"] as? Bool == true, "\(last)")
        try await fixture.roundTrip()
        let counts = Self.answerCounts(phone.inbox.all)
        #expect(counts.count == Self.sets, "\(answers)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "every set answered exactly once: \(counts.filter { $0.value != 1 })")
        // The phone's own client removes what its broker re-sends after a reconnect; it had
        // nothing in flight when the broker stopped, so a second answer could not hide there.
        #expect(phone.client.loopStatistics.redeliveries == 0)
        let output = fixture.gateway.output
        #expect(output.components(separatedBy: "lost the connection to the MQTT broker").count - 1 == 1,
                "one lost connection (the restart), none after it:\n\(output.suffix(3000))")
        #expect(!output.contains("protocol error"), "\(output.suffix(3000))")
        // The broker's side: two connections of the gateway (before and after the restart), and
        // no synchronisation marker sent again (before the fix, every failed connection added
        // one, and each was re-sent at every connect).
        let brokerLines = broker.logText().split(separator: "\n")
        #expect(brokerLines.filter { $0.contains("New client connected") && $0.contains(" as homegate") }.count == 2)
        #expect(!brokerLines.contains { $0.contains("Received PUBLISH from homegate") && $0.contains("(d1,") && $0.contains("/$sync/") })
        #expect(sentBefore >= 15)
        await phone.stop()
        try await fixture.stop()
    }

    /// The number of answers per set id (`r1` ... ) the phone received.
    static func answerCounts(_ messages: [Message]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for message in messages where message.topic.string == "\(brightness)/set/result" {
            guard let answer = try? GatewayFixture.decode(message.payload), let id = answer["id"] as? String, id.hasPrefix("r") else { continue }
            counts[id, default: 0] += 1
        }
        return counts
    }

    /// Waits until the broker's log shows at least `count` of the sets written to the gateway
    /// (Mosquitto logs every PUBLISH it sends at `log_type all`); returns how many it shows.
    static func waitForBrokerSends(_ broker: Mosquitto, atLeast count: Int) async throws -> Int {
        let deadline = ContinuousClock.now + HangGuard.standard // a hang guard: the broker sends at once
        while true {
            let sent = broker.logText().split(separator: "\n").filter { $0.contains("Sending PUBLISH to homegate") && $0.contains("/brightness/set'") }.count
            if sent >= count { return sent }
            guard ContinuousClock.now < deadline else {
                throw FixtureError("the broker wrote \(sent) of the sets to the gateway within 30 s, expected \(count): \(broker.logText().suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20)) // the log is a file: poll it
        }
    }
}
