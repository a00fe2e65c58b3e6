import Wire

/// HAP's PDU layer, as HAP over CoAP (and Bluetooth LE) carries it: a request names an opcode, a
/// transaction id and a characteristic's instance id; its response echoes the transaction id
/// with a status. Several PDUs travel concatenated in one CoAP payload, answered in order.
enum HAPPDU {
    /// What a request PDU asks.
    enum Opcode: UInt8, Sendable {
        case characteristicSignatureRead = 0x01
        case write = 0x02
        case read = 0x03
        /// The first half of a timed write: the value with its time to live.
        case timedWrite = 0x04
        /// The second half: carry out the timed write.
        case executeWrite = 0x05
        case serviceSignatureRead = 0x06
        /// The whole accessory database (instance id 0).
        case databaseRead = 0x09
        case subscribe = 0x0B
        case unsubscribe = 0x0C
    }

    /// A response PDU's status.
    enum Status: UInt8, Sendable {
        case success = 0
        case unsupportedPDU = 1
        case maxProcedures = 2
        case insufficientAuthorization = 3
        case invalidInstanceID = 4
        case insufficientAuthentication = 5
        case invalidRequest = 6

        /// The HAP-over-IP status a caller of the driver sees for it.
        var hapStatus: HAPStatus {
            switch self {
            case .success: .success
            case .unsupportedPDU: .notAllowedInCurrentState
            case .maxProcedures: .outOfResources
            case .insufficientAuthorization: .insufficientPrivileges
            case .invalidInstanceID: .noSuchResource
            case .insufficientAuthentication: .insufficientAuthorization
            case .invalidRequest: .invalidValue
            }
        }
    }

    /// The body TLV item types.
    enum BodyType: UInt8, Sendable {
        case value = 0x01
        case additionalAuthorizationData = 0x02
        /// A timed write's time to live, in units of 100 ms.
        case ttl = 0x08
        case returnResponse = 0x09
    }

    struct Request: Sendable, Equatable {
        var opcode: Opcode
        var transaction: UInt8
        var iid: UInt16
        var body: [UInt8]

        /// Control byte 0 (a request, not fragmented), opcode, transaction id, instance id and
        /// body length (both little-endian), body.
        func encoded() -> [UInt8] {
            [0x00, opcode.rawValue, transaction, UInt8(iid & 0xFF), UInt8(iid >> 8), UInt8(body.count & 0xFF), UInt8(body.count >> 8)] + body
        }
    }

    struct Response: Sendable, Equatable {
        var transaction: UInt8
        /// The raw status byte (``Status`` when it is one this client knows).
        var status: UInt8
        var body: [UInt8]
    }

    /// A value the accessory sent by itself.
    struct Event: Sendable, Equatable {
        var iid: UInt16
        var body: [UInt8]
    }

    /// The requests, one after another in one payload.
    static func encode(_ requests: [Request]) -> [UInt8] {
        requests.flatMap { $0.encoded() }
    }

    /// The response PDUs of a payload: control byte (the response bit set), transaction id,
    /// status, body length (little-endian), body.
    static func responses(in payload: [UInt8]) throws(HAPError) -> [Response] {
        var responses: [Response] = []
        var offset = 0
        while offset < payload.count {
            guard offset + 5 <= payload.count else { throw HAPError(.malformed, "a response PDU ends inside its header at byte \(offset)") }
            guard payload[offset] & 0b0000_1110 == 0b0000_0010 else {
                throw HAPError(.malformed, "a PDU at byte \(offset) is not a response (control byte 0x\(String(payload[offset], radix: 16)))")
            }
            let length = Int(payload[offset + 3]) | Int(payload[offset + 4]) << 8
            guard offset + 5 + length <= payload.count else { throw HAPError(.malformed, "a response PDU's body of \(length) bytes passes the payload's end") }
            responses.append(Response(transaction: payload[offset + 1], status: payload[offset + 2], body: Array(payload[(offset + 5)..<(offset + 5 + length)])))
            offset += 5 + length
        }
        return responses
    }

    /// The events of a payload: control byte, instance id and body length (little-endian), body.
    static func events(in payload: [UInt8]) throws(HAPError) -> [Event] {
        var events: [Event] = []
        var offset = 0
        while offset < payload.count {
            guard offset + 5 <= payload.count else { throw HAPError(.malformed, "an event PDU ends inside its header at byte \(offset)") }
            let iid = UInt16(payload[offset + 1]) | UInt16(payload[offset + 2]) << 8
            let length = Int(payload[offset + 3]) | Int(payload[offset + 4]) << 8
            guard offset + 5 + length <= payload.count else { throw HAPError(.malformed, "an event PDU's body of \(length) bytes passes the payload's end") }
            events.append(Event(iid: iid, body: Array(payload[(offset + 5)..<(offset + 5 + length)])))
            offset += 5 + length
        }
        return events
    }

    /// The value item of a read response's or an event's body (nil: the body has none).
    static func value(inBody body: [UInt8]) throws(HAPError) -> [UInt8]? {
        guard !body.isEmpty else { return nil }
        do {
            return try TLV8(decoding: body).items.first { $0.type == BodyType.value.rawValue }?.value
        } catch {
            throw HAPError(.malformed, "a PDU body is not TLV8: \(error)")
        }
    }

    /// A write's body: the value, and for a timed write its time to live.
    static func writeBody(_ value: [UInt8], ttl: Duration? = nil) -> [UInt8] {
        var tlv = TLV8()
        tlv.items.append(TLV8.Item(type: BodyType.value.rawValue, value: value))
        if let ttl {
            let tenths = max(1, min(255, Int((ttl / .milliseconds(100)).rounded(.up))))
            tlv.items.append(TLV8.Item(type: BodyType.ttl.rawValue, value: [UInt8(tenths)]))
        }
        return tlv.encoded()
    }
}
