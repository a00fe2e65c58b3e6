/// Tells a QoS 1 message the broker delivers again after a reconnect from a new one, so that the
/// consumer sees every publication once.
///
/// The client subscribes at QoS 1 at most (``Subscription/qosOnTheWire``): libmosquitto 2.0.11
/// keeps no reliable state for QoS 2 messages it receives (a PUBLISH the broker re-sends after a
/// reconnect is queued a second time, the copy is never released and holds a slot of the
/// Receive Maximum forever; docs/mqtt-api.md, "Choices"). With QoS 1 the broker re-sends, after a
/// reconnect, the messages whose PUBACK it had not read when the connection ended; the client has
/// already handed those to its consumer. This machine recognises them.
///
/// The rule: a QoS 1 message whose packet identifier, topic, payload, retain flag and properties
/// (all but the message expiry interval, which the broker counts down) equal those of one of the
/// last ``window`` QoS 1 messages received, received on an *earlier* connection of the same
/// session, is a redelivery. MQTT 5 forbids re-sending on the connection a message was sent on,
/// and the broker never has more unacknowledged messages out than the Receive Maximum we
/// announce, so every redelivery is among the last ``window`` messages. A message of the same
/// packet identifier that differs is a new one (the identifier was free again), and replaces the
/// remembered one. A connection on which the broker kept no session (session present 0) forgets
/// everything: nothing of the old session will be re-sent.
///
/// What it cannot tell: a broker that hands the same identifier to a new message with the same
/// topic, payload and properties right after a reconnect. Mosquitto counts identifiers up (the
/// same one again only 65,535 messages later); a command with its own correlation data can never
/// match.
struct RedeliveryFilter: Sendable {
    /// What identifies a publication across a re-send.
    struct Fingerprint: Equatable, Sendable {
        var topic: String
        var payload: [UInt8]
        var retain: Bool
        var properties: Message.Properties

        init(_ message: Message) {
            topic = message.topic.string
            payload = message.payload
            retain = message.retain
            var properties = message.properties
            properties.messageExpiryInterval = nil // the broker sends what is left of it
            self.properties = properties
        }
    }

    private struct Entry: Sendable {
        var fingerprint: Fingerprint
        var connection: Int
    }

    /// How many of the last QoS 1 messages are remembered: the Receive Maximum announced to the
    /// broker (with MQTT 3.1.1, a bound of the same kind).
    let window: Int
    /// The connection being served (counts up at every CONNACK).
    private(set) var connection = 0
    private var entries: [Int32: Entry] = [:]
    /// The packet identifiers in `entries`, oldest first.
    private var order: [Int32] = []

    init(window: Int) {
        precondition(window > 0, "the redelivery window must hold at least one message")
        self.window = window
    }

    /// The broker accepted a connection. Without the old session, nothing will be re-sent.
    mutating func connectionBegan(sessionPresent: Bool) {
        connection += 1
        if !sessionPresent {
            entries.removeAll()
            order.removeAll()
        }
    }

    /// A QoS 1 message arrived with packet identifier `mid`: true if it is new (hand it on),
    /// false if it is the re-send of one already handed on.
    mutating func admit(mid: Int32, _ message: Message) -> Bool {
        let fingerprint = Fingerprint(message)
        if let earlier = entries[mid], earlier.fingerprint == fingerprint, earlier.connection < connection {
            remove(mid) // re-sent once; the identifier is free for the broker again
            return false
        }
        remember(mid, Entry(fingerprint: fingerprint, connection: connection))
        return true
    }

    /// Messages remembered now (for tests and statistics).
    var count: Int { entries.count }

    private mutating func remember(_ mid: Int32, _ entry: Entry) {
        if entries.updateValue(entry, forKey: mid) != nil {
            order.removeAll { $0 == mid }
        }
        order.append(mid)
        if order.count > window {
            entries.removeValue(forKey: order.removeFirst())
        }
    }

    private mutating func remove(_ mid: Int32) {
        entries.removeValue(forKey: mid)
        order.removeAll { $0 == mid }
    }
}
