import MQTT
import Wire

/// What the engine needs from MQTT. ``MQTT/Client`` is the real one.
public protocol MessageBus: Sendable {
    /// Hands a message over now, in call order, without waiting for the broker.
    func send(_ message: Message) throws(ClientError)
    /// Subscribes; the subscriptions are kept across reconnects.
    nonisolated(nonsending) func subscribe(_ subscriptions: [Subscription]) async throws
    /// Hands every received message and connection change, in order, to `consumer` on
    /// ``executor`` (nil: stop); a connection already up is reported first, before its messages.
    func deliver(to consumer: Client.Consumer?)
    /// Whether the broker has accepted the current connection.
    var isConnected: Bool { get }
    /// Messages read from the broker since the start (what `/metrics` counts as
    /// `homegate_mqtt_messages_received_total`, and `$health` reports).
    var messagesReceived: Int { get }
    /// Connection changes.
    func connectionEvents() -> AsyncStream<ConnectionEvent>
    /// Where the engine runs: the client's network thread, so that what arrives is handled, and
    /// what that publishes is written, in one turn of its loop.
    var executor: EventLoop { get }
}

extension Client: MessageBus {
    public var messagesReceived: Int { loopStatistics.received }
}
