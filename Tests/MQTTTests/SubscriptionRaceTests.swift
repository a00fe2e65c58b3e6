import Foundation
import Testing
import TestSupport
@testable import MQTT

/// What the client records as subscribed is what the broker does, however calls, cancellations
/// and reconnects interleave: every subscription change happens on the network thread, in order
/// with libmosquitto's callbacks (the three races docs/mqtt-client.md once listed).
@Suite("subscriptions racing reconnects and cancellations", .startsProcesses)
struct SubscriptionRaceTests {
    @Test("subscribe and unsubscribe calls made while the broker restarts: after each restart the broker delivers exactly what the client records")
    func callsDuringReconnects() async throws {
        let broker = try await Mosquitto.start()
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "racer"))
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "pub"))
        try await client.subscribe("race/marker/#")
        for round in 0..<4 {
            let events = client.client.connectionEvents()
            try await broker.restart()
            // While the client notices, reconnects and restores its subscriptions, flip one
            // subscription many times; the last call decides.
            let subscribedAtEnd = round.isMultiple(of: 2)
            for flip in 0..<40 {
                if flip.isMultiple(of: 2) {
                    try await client.client.subscribe([Subscription(TopicFilter("race/a"))])
                } else {
                    try await client.client.unsubscribe([TopicFilter("race/a")])
                }
            }
            if subscribedAtEnd {
                try await client.client.subscribe([Subscription(TopicFilter("race/a"))])
            } else {
                try await client.client.unsubscribe([TopicFilter("race/a")])
            }
            // The stream starts with the connection before the restart: wait for its end and the next.
            _ = try await withDeadline(.seconds(20)) {
                var lost = false
                for await event in events {
                    if case .disconnected = event { lost = true }
                    if case .connected = event, lost { return true }
                }
                return false
            }
            // The broker handles one connection's SUBSCRIBE and UNSUBSCRIBE in order: once this one
            // is answered, so is everything the client sent before it.
            try await client.subscribe("race/settle/\(round)")
            try await publisher.publish("race/a", "round \(round)")
            try await publisher.publish("race/marker/\(round)", "marker")
            _ = try await client.inbox.first(on: "race/marker/\(round)", timeout: HangGuard.standard)
            let delivered = client.inbox.all.contains { $0.topic.string == "race/a" && $0.payloadString == "round \(round)" }
            let recorded = client.client.state.withLock { $0.subscriptions[try! TopicFilter("race/a")] != nil } // swiftlint:disable:this force_try
            #expect(recorded == subscribedAtEnd, "round \(round)")
            #expect(delivered == subscribedAtEnd, "round \(round): the broker \(delivered ? "delivered" : "did not deliver") race/a")
        }
        await publisher.stop()
        await client.stop()
        await broker.stop()
    }

    @Test("a cancelled subscribe: if its SUBSCRIBE went out the subscription is kept and the broker delivers; if not, neither")
    func cancelledSubscribe() async throws {
        let broker = try await Mosquitto.start()
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "cancel"))
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "pub"))
        try await client.subscribe("cancel/marker/#")
        var outcomes: [Bool] = []
        for round in 0..<12 {
            let filter = try TopicFilter("cancel/\(round)")
            let call = Task { try await client.client.subscribe([Subscription(filter)]) }
            // Cancelled at a different moment each round: before, while, or after it is sent.
            for _ in 0..<round { await Task.yield() }
            call.cancel()
            _ = await call.result
            // The call's answer or cancellation has been handled on the network thread by now;
            // a round trip through it settles any SUBACK still on the way.
            try await client.subscribe("cancel/settle/\(round)")
            let recorded = client.client.state.withLock { $0.subscriptions[filter] != nil }
            try await publisher.publish("cancel/\(round)", "x")
            try await publisher.publish("cancel/marker/\(round)", "marker")
            _ = try await client.inbox.first(on: "cancel/marker/\(round)", timeout: HangGuard.standard)
            let delivered = client.inbox.all.contains { $0.topic.string == "cancel/\(round)" }
            #expect(recorded == delivered, "round \(round): recorded \(recorded), delivered \(delivered)")
            outcomes.append(recorded)
        }
        print("cancelled subscribes kept: \(outcomes)")
        await publisher.stop()
        await client.stop()
        await broker.stop()
    }

    @Test("a subscribe cancelled after its SUBSCRIBE went out (the broker held still): the call throws, the subscription stays and the broker delivers")
    func cancelledAfterSending() async throws {
        let broker = try await Mosquitto.start()
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "held"))
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "pub"))
        let pid = try #require(broker.pid)
        let filter = try TopicFilter("held/topic")
        kill(pid, SIGSTOP) // the SUBSCRIBE goes out; no SUBACK comes until SIGCONT
        let call = Task { try await client.client.subscribe([Subscription(filter)]) }
        let sent = try await withDeadline(.seconds(10)) { () async -> Bool in
            while true {
                let waiting = client.client.state.withLock { state in
                    state.acknowledgements.contains { if case .subscribing(filter, _?) = $0 { true } else { false } }
                }
                if waiting { return true }
                await Task.yield()
            }
        }
        #expect(sent == true)
        call.cancel()
        let outcome = await call.result
        kill(pid, SIGCONT)
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(client.client.state.withLock { $0.subscriptions[filter] != nil }, "kept: its SUBSCRIBE went out")
        try await client.subscribe("held/settle") // answered after the held SUBSCRIBE's SUBACK
        try await client.subscribe("held/marker")
        try await publisher.publish("held/topic", "delivered")
        try await publisher.publish("held/marker", "marker")
        _ = try await client.inbox.first(on: "held/marker", timeout: HangGuard.standard)
        #expect(client.inbox.all.contains { $0.topic.string == "held/topic" }, "the broker granted it, and delivers")
        await publisher.stop()
        await client.stop()
        await broker.stop()
    }

    @Test("an UNSUBSCRIBE the broker had not answered when the connection ended is recorded at once for a broker that kept the session")
    func unansweredUnsubscribe() async throws {
        let client = try Client(configuration: Configuration(url: try BrokerURL(parsing: "mqtt://127.0.0.1:1"), clientID: "unanswered"), logger: TestLogger.make("unanswered"))
        let filter = try TopicFilter("kept/session")
        let answered = Recorder<Bool>(false)
        let waiter = Client.Waiter(token: Client.CallToken()) { result in
            if case .success(let acknowledgement) = result, acknowledgement.interrupted { answered.update { $0 = true } }
        }
        client.state.withLock { $0.acknowledgements.append(.unsubscribing(filter, waiter), for: 7) }
        client.connectionEnded()
        #expect(client.state.withLock { $0.unsubscribedWhileDisconnected.contains(filter) }, "recorded before any reconnect can be handled")
        #expect(answered.value, "the waiting call returns")
        #expect(client.state.withLock { $0.acknowledgements.isEmpty })
    }
}
