/// One CoAP message (RFC 7252) as it travels in a UDP datagram: a 4-byte header (version 1,
/// type, token length, code, message id), the token, the options in ascending number order
/// (delta-encoded), and after a `0xFF` marker the payload.
struct CoAPMessage: Sendable, Equatable {
    /// How the message is to be handled by its receiver (RFC 7252, 4.2 and 4.3).
    enum Kind: UInt8, Sendable {
        /// Confirmable: the receiver acknowledges it; the sender retransmits until it does.
        case confirmable = 0
        case nonConfirmable = 1
        case acknowledgement = 2
        /// Reset: the receiver cannot handle a message it got.
        case reset = 3
    }

    /// A request method or response code, `class.detail` (`2.04` is `0x44`).
    struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        let rawValue: UInt8
        init(rawValue: UInt8) { self.rawValue = rawValue }
        init(_ codeClass: UInt8, _ detail: UInt8) { rawValue = codeClass << 5 | detail }

        static let empty = Code(0, 0)
        static let get = Code(0, 1)
        static let post = Code(0, 2)
        static let put = Code(0, 3)
        static let changed = Code(2, 4)
        static let valid = Code(2, 3)
        static let content = Code(2, 5)
        static let badRequest = Code(4, 0)
        static let notFound = Code(4, 4)
        static let methodNotAllowed = Code(4, 5)

        var codeClass: UInt8 { rawValue >> 5 }
        var isRequest: Bool { codeClass == 0 && rawValue != 0 }
        var isSuccess: Bool { codeClass == 2 }
        var description: String { "\(codeClass).\(String(rawValue & 0x1F).count == 1 ? "0" : "")\(rawValue & 0x1F)" }
    }

    /// Option numbers this client uses (RFC 7252 5.10, RFC 7959 for the block options).
    enum OptionNumber: UInt16, Sendable {
        case uriHost = 3
        case uriPort = 7
        case uriPath = 11
        case contentFormat = 12
        case block2 = 23
        case block1 = 27
        case size2 = 28
    }

    struct Option: Sendable, Equatable {
        var number: UInt16
        var value: [UInt8]
    }

    var kind: Kind
    var code: Code
    var messageID: UInt16
    var token: [UInt8]
    /// In ascending number order (``encoded()`` sorts them; the order of equal numbers is kept).
    var options: [Option]
    var payload: [UInt8]

    init(kind: Kind, code: Code, messageID: UInt16, token: [UInt8] = [], options: [Option] = [], payload: [UInt8] = []) {
        self.kind = kind
        self.code = code
        self.messageID = messageID
        self.token = token
        self.options = options
        self.payload = payload
    }

    /// The values of every option `number`, in order.
    func values(of number: OptionNumber) -> [[UInt8]] {
        options.filter { $0.number == number.rawValue }.map(\.value)
    }

    /// The Uri-Path segments, joined with `/` (`""` for the root).
    var path: String {
        values(of: .uriPath).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
    }

    /// The message's Block2 option, if it has a valid one.
    var block2: CoAPBlock? {
        values(of: .block2).first.flatMap(CoAPBlock.init(optionValue:))
    }

    /// An option's value as the unsigned integer it encodes (big-endian, leading zeros dropped).
    static func uintValue(_ value: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return bytes
    }
}

// MARK: - Encoding

extension CoAPMessage {
    /// The datagram's bytes.
    func encoded() -> [UInt8] {
        precondition(token.count <= 8, "a CoAP token has at most 8 bytes")
        var bytes: [UInt8] = [1 << 6 | kind.rawValue << 4 | UInt8(token.count), code.rawValue, UInt8(messageID >> 8), UInt8(messageID & 0xFF)]
        bytes += token
        var previous: UInt16 = 0
        for option in options.enumerated().sorted(by: { ($0.element.number, $0.offset) < ($1.element.number, $1.offset) }).map(\.element) {
            Self.append(option, after: previous, to: &bytes)
            previous = option.number
        }
        if !payload.isEmpty {
            bytes.append(0xFF)
            bytes += payload
        }
        return bytes
    }

    private static func append(_ option: Option, after previous: UInt16, to bytes: inout [UInt8]) {
        let (deltaNibble, deltaExtension) = nibble(Int(option.number - previous))
        let (lengthNibble, lengthExtension) = nibble(option.value.count)
        bytes.append(deltaNibble << 4 | lengthNibble)
        bytes += deltaExtension
        bytes += lengthExtension
        bytes += option.value
    }

    /// A delta or length as its 4-bit nibble and extension bytes (13: one byte, 14: two bytes).
    private static func nibble(_ value: Int) -> (UInt8, [UInt8]) {
        switch value {
        case ..<13: (UInt8(value), [])
        case ..<269: (13, [UInt8(value - 13)])
        default: (14, [UInt8((value - 269) >> 8), UInt8((value - 269) & 0xFF)])
        }
    }
}

// MARK: - Decoding

extension CoAPMessage {
    /// Reads a datagram.
    /// - Throws: ``CoAPParseError`` for anything RFC 7252 calls a message format error.
    init(decoding bytes: [UInt8]) throws(CoAPParseError) {
        guard bytes.count >= 4 else { throw .tooShort(bytes.count) }
        guard bytes[0] >> 6 == 1 else { throw .unknownVersion(bytes[0] >> 6) }
        let tokenLength = Int(bytes[0] & 0x0F)
        guard tokenLength <= 8 else { throw .badTokenLength(tokenLength) }
        guard bytes.count >= 4 + tokenLength else { throw .truncated("token") }
        kind = Kind(rawValue: (bytes[0] >> 4) & 0x03)!
        code = Code(rawValue: bytes[1])
        messageID = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        token = Array(bytes[4..<(4 + tokenLength)])
        var reader = OptionReader(bytes: bytes, offset: 4 + tokenLength)
        options = try reader.readOptions()
        payload = reader.payload
    }

    private struct OptionReader {
        let bytes: [UInt8]
        var offset: Int
        var payload: [UInt8] = []

        mutating func readOptions() throws(CoAPParseError) -> [Option] {
            var options: [Option] = []
            var number = 0
            while offset < bytes.count {
                let first = bytes[offset]
                offset += 1
                if first == 0xFF {
                    guard offset < bytes.count else { throw .emptyPayloadAfterMarker }
                    payload = Array(bytes[offset...])
                    return options
                }
                number += try extended(Int(first >> 4))
                let length = try extended(Int(first & 0x0F))
                guard offset + length <= bytes.count else { throw .truncated("option \(number)") }
                guard number <= Int(UInt16.max) else { throw .badOption }
                options.append(Option(number: UInt16(number), value: Array(bytes[offset..<(offset + length)])))
                offset += length
            }
            return options
        }

        private mutating func extended(_ nibble: Int) throws(CoAPParseError) -> Int {
            switch nibble {
            case ..<13:
                return nibble
            case 13:
                guard offset < bytes.count else { throw .truncated("option header") }
                defer { offset += 1 }
                return Int(bytes[offset]) + 13
            case 14:
                guard offset + 1 < bytes.count else { throw .truncated("option header") }
                defer { offset += 2 }
                return (Int(bytes[offset]) << 8 | Int(bytes[offset + 1])) + 269
            default:
                throw .badOption
            }
        }
    }
}

/// Why a datagram is not a CoAP message.
enum CoAPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooShort(Int)
    case unknownVersion(UInt8)
    case badTokenLength(Int)
    case truncated(String)
    case badOption
    case emptyPayloadAfterMarker

    var description: String {
        switch self {
        case .tooShort(let count): "a CoAP message has at least 4 bytes, this one \(count)"
        case .unknownVersion(let version): "CoAP version \(version) (only 1 exists)"
        case .badTokenLength(let length): "a token length of \(length) (at most 8)"
        case .truncated(let part): "the datagram ends inside the \(part)"
        case .badOption: "an option with the reserved nibble 15 or a number above 65535"
        case .emptyPayloadAfterMarker: "a payload marker with no payload"
        }
    }
}

/// A Block2 (or Block1) option's value (RFC 7959): the block number, whether more follow, and
/// the block size (16 to 1024 bytes, a power of two).
struct CoAPBlock: Sendable, Equatable {
    var number: UInt32
    var more: Bool
    /// The size exponent: the size is 2^(exponent + 4).
    var sizeExponent: UInt8

    var size: Int { 1 << (Int(sizeExponent) + 4) }

    init(number: UInt32, more: Bool, sizeExponent: UInt8) {
        self.number = number
        self.more = more
        self.sizeExponent = sizeExponent
    }

    init?(optionValue: [UInt8]) {
        guard optionValue.count <= 3 else { return nil }
        let raw = optionValue.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard raw & 0x07 != 7 else { return nil } // 7 is reserved
        self.init(number: raw >> 4, more: raw & 0x08 != 0, sizeExponent: UInt8(raw & 0x07))
    }

    var optionValue: [UInt8] {
        CoAPMessage.uintValue(number << 4 | (more ? 0x08 : 0) | UInt32(sizeExponent))
    }
}
