import Foundation
import Testing
import TestSupport
@testable import MQTT

/// libmosquitto's message ids wrap after 65,535 without checking which are in use: the table
/// keeps every slot of an id, and the broker's acknowledgement goes to the oldest.
@Suite("acknowledgements when message ids wrap", .loadTest)
struct AcknowledgementTableTests {
    @Test("slots of one id are taken first come, first served; a cancelled waiter's slot is replaced in place")
    func firstComeFirstServed() {
        var table = AcknowledgementTable()
        let filter = try! TopicFilter("a/b") // swiftlint:disable:this force_try
        table.append(.abandoned(.publishQueued), for: 7)
        table.append(.subscribing(filter, nil), for: 7)
        table.append(.abandoned(.publishQoS0), for: 8)
        #expect(!table.isEmpty)
        let replaced = table.replaceFirst(for: 7) { slot in
            if case .subscribing(let filter, _) = slot { .unsubscribing(filter, nil) } else { nil }
        }
        if case .subscribing = replaced {} else { Issue.record("the subscribing slot was replaced, got \(String(describing: replaced))") }
        if case .abandoned(.publishQueued) = table.removeFirst(for: 7) {} else { Issue.record("the first slot of 7 comes first") }
        if case .unsubscribing = table.removeFirst(for: 7) {} else { Issue.record("then the second") }
        #expect(table.removeFirst(for: 7) == nil)
        table.removeAll { if case .abandoned(.publishQoS0) = $0 { true } else { false } }
        #expect(table.isEmpty)
    }

    @Test("a publish waiting for its PUBACK while 70,000 more messages are queued behind it (ids wrap): it completes, and so do later ones")
    func waitingPublishSurvivesWrap() async throws {
        let broker = try await Mosquitto.start()
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "wrap"))
        let pid = try #require(broker.pid)
        kill(pid, SIGSTOP) // nothing is acknowledged until SIGCONT: every id stays in use
        let first = Task { try await client.client.publish(Message(topic: TopicName("wrap/first"), payload: "1", qos: .atLeastOnce)) }
        try await withDeadline(.seconds(10)) {
            while client.client.state.withLock({ !$0.acknowledgements.contains { if case .waiting = $0 { true } else { false } } }) { await Task.yield() }
        }
        let topic = try TopicName("wrap/many")
        for index in 0..<70_000 {
            try client.client.send(Message(topic: topic, payload: Array("\(index)".utf8), qos: .atLeastOnce))
        }
        let stillWaiting = client.client.state.withLock { $0.acknowledgements.contains { if case .waiting = $0 { true } else { false } } }
        #expect(stillWaiting, "the first publish's slot outlives the 65,536 ids handed out after it")
        kill(pid, SIGCONT)
        #expect(try await withDeadline(.seconds(60)) { try await first.value } != nil, "the first publish completes")
        #expect(try await withDeadline(.seconds(60)) { try await client.publish("wrap/last", "last") } != nil, "a publish after the wrap completes")
        await client.stop()
        await broker.stop()
    }
}
