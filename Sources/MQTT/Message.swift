/// One MQTT message, as published or as received.
public struct Message: Sendable, Equatable {
    public var topic: TopicName
    public var payload: [UInt8]
    public var qos: QoS
    /// Published: ask the broker to keep it for future subscribers. Received: the broker says the
    /// message is a retained one (with Retain-As-Published, also on live delivery).
    public var retain: Bool
    /// MQTT 5 properties. Ignored (not sent) with MQTT 3.1.1.
    public var properties: Properties
    /// When the client received it (nil on messages to send); not part of equality.
    public var receivedAt: ContinuousClock.Instant?

    public init(topic: TopicName, payload: [UInt8], qos: QoS = .atLeastOnce, retain: Bool = false, properties: Properties = Properties()) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    public init(topic: TopicName, payload: String, qos: QoS = .atLeastOnce, retain: Bool = false, properties: Properties = Properties()) {
        self.init(topic: topic, payload: Array(payload.utf8), qos: qos, retain: retain, properties: properties)
    }

    public static func == (lhs: Message, rhs: Message) -> Bool {
        lhs.topic == rhs.topic && lhs.payload == rhs.payload && lhs.qos == rhs.qos && lhs.retain == rhs.retain && lhs.properties == rhs.properties
    }

    /// The payload decoded as UTF-8 (invalid sequences replaced).
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }

    /// The MQTT 5 properties HomeGate uses; all optional.
    public struct Properties: Sendable, Equatable {
        /// Where the receiver should publish its answer (request/response).
        public var responseTopic: TopicName?
        /// Opaque bytes the answer must echo.
        public var correlationData: [UInt8]?
        /// Name/value pairs, in order; names may repeat.
        public var userProperties: [UserProperty]
        /// A MIME type such as `application/json`.
        public var contentType: String?
        /// Seconds after which the broker discards the message if undelivered.
        public var messageExpiryInterval: UInt32?
        /// Whether the payload is UTF-8 text (payload format indicator 1).
        public var payloadIsUTF8: Bool

        public init(responseTopic: TopicName? = nil, correlationData: [UInt8]? = nil, userProperties: [UserProperty] = [], contentType: String? = nil, messageExpiryInterval: UInt32? = nil, payloadIsUTF8: Bool = false) {
            self.responseTopic = responseTopic
            self.correlationData = correlationData
            self.userProperties = userProperties
            self.contentType = contentType
            self.messageExpiryInterval = messageExpiryInterval
            self.payloadIsUTF8 = payloadIsUTF8
        }

        /// Whether no property is set.
        public var isEmpty: Bool { self == Properties() }
    }

    /// An MQTT 5 user property.
    public struct UserProperty: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }
}
