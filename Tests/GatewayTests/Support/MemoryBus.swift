import Foundation
@testable import Gateway
import MQTT
import Synchronization
import TestSupport

/// A broker in memory for one client, the engine: it keeps retained messages, honours the
/// engine's subscriptions (No Local, Retain As Published), delivers what a test publishes as
/// another client, and records everything the engine sends. Waiting is woken by each message,
/// never by polling.
final class MemoryBus: MessageBus {
    /// The engine's thread (a real client's is its network thread).
    let executor = try! EventLoop(name: "memory-bus") // swiftlint:disable:this force_try
    /// The engine (``deliver(to:)``), called on ``executor``.
    private let toEngine = Mutex<Client.Consumer?>(nil)
    private let connections: AsyncStream<ConnectionEvent>
    private let connectionSink: AsyncStream<ConnectionEvent>.Continuation

    private struct State {
        var retained: [String: Message] = [:]
        var subscriptions: [Subscription] = []
    }

    private let state = Mutex(State())
    /// Everything the engine sent, in order.
    let sent = Recorder<[Message]>([])
    /// Whether the engine has subscribed.
    let subscribed = Recorder<Bool>(false)

    init() {
        (connections, connectionSink) = AsyncStream.makeStream(of: ConnectionEvent.self)
    }

    deinit {
        connectionSink.finish()
    }

    // MARK: MessageBus (the engine's side)

    func deliver(to consumer: Client.Consumer?) {
        toEngine.withLock { $0 = consumer }
    }

    /// The test's ``connect()`` reports the connection; before it, none.
    var isConnected: Bool { false }

    /// The messages handed to the engine so far.
    var messagesReceived: Int { handed.withLock { $0 } }
    private let handed = Mutex(0)

    func send(_ message: Message) throws(ClientError) {
        store(message)
        sent.update { $0.append(message) }
        // The engine hears its own message only through a subscription without No Local ($sync/+).
        let subscriptions = state.withLock { $0.subscriptions }
        if subscriptions.contains(where: { !$0.noLocal && $0.filter.matches(message.topic) }) {
            deliver(message, retained: false)
        }
    }

    nonisolated(nonsending) func subscribe(_ subscriptions: [Subscription]) async throws {
        state.withLock { $0.subscriptions += subscriptions }
        self.subscribed.update { $0 = true }
    }

    func connectionEvents() -> AsyncStream<ConnectionEvent> {
        connections
    }

    // MARK: The test's side

    /// The engine connects: the connection is reported, then the retained messages its
    /// subscriptions match arrive (as the MQTT client does it).
    func connect() {
        let (retained, subscriptions) = state.withLock { ($0.retained.values.sorted { $0.topic < $1.topic }, $0.subscriptions) }
        if let consumer = toEngine.withLock({ $0 }) { executor.execute { consumer.connection(.connected(sessionPresent: false)) } }
        connectionSink.yield(.connected(sessionPresent: false))
        for message in retained where subscriptions.contains(where: { $0.filter.matches(message.topic) }) {
            deliver(message, retained: true)
        }
    }

    /// Another client publishes.
    func publish(_ topic: String, _ payload: String, retain: Bool = false, responseTopic: String? = nil, correlationData: [UInt8]? = nil) throws {
        var properties = Message.Properties()
        properties.responseTopic = try responseTopic.map { try TopicName($0) }
        properties.correlationData = correlationData
        let message = Message(topic: try TopicName(topic), payload: Array(payload.utf8), retain: retain, properties: properties)
        store(message)
        let subscriptions = state.withLock { $0.subscriptions }
        if let subscription = subscriptions.first(where: { $0.filter.matches(message.topic) }) {
            deliver(message, retained: retain && subscription.retainAsPublished)
        }
    }

    /// What the broker keeps retained: topic -> payload text.
    var retained: [String: String] {
        state.withLock { $0.retained.mapValues(\.payloadString) }
    }

    /// Waits until the engine has sent `count` messages satisfying `predicate`; returns them.
    @discardableResult
    func waitFor(_ count: Int = 1, timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (Message) -> Bool) async throws -> [Message] {
        try await sent.wait(timeout: timeout, for: "\(count) messages from the engine") { messages in
            let matches = messages.filter(predicate)
            return matches.count >= count ? matches : nil
        }
    }

    /// Waits for the first message the engine sent on `topic` after the first `skipping`.
    func next(on topic: String, after skipping: Int = 0, timeout: Duration = HangGuard.standard) async throws -> Message {
        try await waitFor(skipping + 1, timeout: timeout) { $0.topic.string == topic }[skipping]
    }

    /// How many messages the engine sent on `topic` so far.
    func count(on topic: String) -> Int {
        sent.value.filter { $0.topic.string == topic }.count
    }

    private func store(_ message: Message) {
        guard message.retain else { return }
        state.withLock { state in
            if message.payload.isEmpty { state.retained[message.topic.string] = nil } else { state.retained[message.topic.string] = message }
        }
    }

    private func deliver(_ message: Message, retained: Bool) {
        var delivered = message
        delivered.retain = retained
        delivered.receivedAt = .now
        guard let consumer = toEngine.withLock({ $0 }) else { return }
        handed.withLock { $0 += 1 }
        let message = delivered
        executor.execute { consumer.message(message) }
    }
}
