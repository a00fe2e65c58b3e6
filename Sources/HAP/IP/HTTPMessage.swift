/// A response or an event an accessory sent, parsed by ``HTTPResponseParser``.
public struct HTTPMessage: Sendable, Equatable {
    /// Whether the message answers a request (`HTTP/1.1 ...`) or is an unsolicited event
    /// (`EVENT/1.0 ...`).
    public enum Kind: Sendable, Equatable {
        /// A response, with an `HTTP/1.x` status line.
        case response
        /// A characteristic change notification, with an `EVENT/1.0` status line.
        case event
    }

    /// One header field, as received.
    public struct Header: Sendable, Equatable {
        /// The field name, in the case the accessory sent.
        public var name: String
        /// The field value without surrounding white space.
        public var value: String

        /// A header field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Response or event.
    public var kind: Kind
    /// The status code (200, 204, 207, 470, ...).
    public var status: Int
    /// The reason phrase (`OK`, `Multi-Status`, ...), maybe empty.
    public var reason: String
    /// The header fields in the order received.
    public var headers: [Header]
    /// The body, after removing any chunked transfer coding.
    public var body: [UInt8]

    /// A message.
    public init(kind: Kind, status: Int, reason: String, headers: [Header] = [], body: [UInt8] = []) {
        self.kind = kind
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The value of the first header field called `name`, compared without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { Self.equalIgnoringASCIICase($0.name, name) }?.value
    }

    private static func equalIgnoringASCIICase(_ first: String, _ second: String) -> Bool {
        first.utf8.elementsEqual(second.utf8) { lowercase($0) == lowercase($1) }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (65...90).contains(byte) ? byte + 32 : byte
    }
}
