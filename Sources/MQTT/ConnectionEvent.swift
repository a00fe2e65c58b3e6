/// A change in the client's connection, as delivered by ``Client/connectionEvents()``.
public enum ConnectionEvent: Sendable, Equatable {
    /// The broker accepted the connection. Subscriptions have been restored (or kept, when the
    /// broker says the session is present).
    case connected(sessionPresent: Bool)
    /// A connection attempt failed or an established connection was lost; `reason` says why.
    case disconnected(reason: String)
    /// The client waits `delay` before attempt number `attempt`.
    case reconnecting(delay: Duration, attempt: Int)
    /// The client stopped: after ``Client/disconnect()``, cancellation, or a fatal refusal.
    case stopped
}

/// How the broker treats retained messages when a subscription is made (MQTT 5).
public enum RetainHandling: Int32, Sendable {
    /// Send retained messages at every subscribe (the MQTT default).
    case sendOnSubscribe = 0
    /// Send them only if the subscription is new.
    case sendIfNew = 1
    /// Never send retained messages for this subscription.
    case doNotSend = 2
}

/// One subscription: a filter, the maximum QoS wanted, and MQTT 5 options.
public struct Subscription: Sendable, Equatable {
    public var filter: TopicFilter
    public var qos: QoS
    /// Do not receive messages this client published itself (MQTT 5).
    public var noLocal: Bool
    /// Keep the retain flag on live messages, so a receiver can tell a retained message (MQTT 5).
    public var retainAsPublished: Bool
    public var retainHandling: RetainHandling

    public init(_ filter: TopicFilter, qos: QoS = .atLeastOnce, noLocal: Bool = false, retainAsPublished: Bool = false, retainHandling: RetainHandling = .sendOnSubscribe) {
        self.filter = filter
        self.qos = qos
        self.noLocal = noLocal
        self.retainAsPublished = retainAsPublished
        self.retainHandling = retainHandling
    }

    /// The QoS asked of the broker: at most 1. A subscription at QoS 2 is delivered exactly once
    /// all the same, by the client's ``RedeliveryFilter`` instead of libmosquitto's QoS 2 state,
    /// which 2.0.11 corrupts when the broker re-sends a message after a reconnect (the copy is
    /// queued twice and one never leaves; once they fill the Receive Maximum, every connection
    /// ends at the broker's first message: docs/mqtt-api.md, "Choices").
    var qosOnTheWire: QoS { qos == .exactlyOnce ? .atLeastOnce : qos }

    /// The MQTT 5 subscription options byte, without the QoS bits.
    var optionBits: Int32 {
        (noLocal ? 0x04 : 0) | (retainAsPublished ? 0x08 : 0) | (retainHandling.rawValue << 4)
    }
}
