/// MQTT quality of service: how hard the broker and client work to deliver a message.
public enum QoS: Int32, Sendable, Comparable, CaseIterable {
    /// At most once: no acknowledgement.
    case atMostOnce = 0
    /// At least once: acknowledged by PUBACK; may arrive twice.
    case atLeastOnce = 1
    /// Exactly once: four-way handshake.
    case exactlyOnce = 2

    public static func < (lhs: QoS, rhs: QoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The MQTT protocol version spoken with the broker.
public enum ProtocolVersion: String, Sendable, CaseIterable {
    /// MQTT 5.0: properties, reason codes, Retain-As-Published. The default.
    case v5 = "5"
    /// MQTT 3.1.1, for old brokers. Message properties are not sent and not received.
    case v311 = "3.1.1"
}
