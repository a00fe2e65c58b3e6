/// Why a string is not a valid MQTT topic name or topic filter.
///
/// The description says what is wrong in words a person understands, for example
/// `topic "a/#/b" is not valid: '#' must be the last level of a filter, alone`.
public struct TopicError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case empty
        case tooLong(bytes: Int)
        case tooManyLevels(Int)
        case nul
        case controlCharacter(Unicode.Scalar)
        case nonCharacter(Unicode.Scalar)
        case wildcardInName(Character)
        case multiLevelWildcardNotLast
        case singleLevelWildcardNotAlone
    }

    let kind: Kind
    /// The rejected topic, with control characters escaped so it can be printed.
    public let topic: String

    init(_ kind: Kind, topic: String) {
        self.kind = kind
        self.topic = topic.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
    }

    public var description: String {
        "topic \"\(topic.prefix(200))\(topic.count > 200 ? "…" : "")\" is not valid: \(reason)"
    }

    /// What is wrong, without the topic.
    public var reason: String {
        switch kind {
        case .empty:
            return "a topic must not be empty"
        case .tooLong(let bytes):
            return "it is \(bytes) bytes long in UTF-8; MQTT allows at most \(Topic.maximumLength)"
        case .tooManyLevels(let levels):
            return "it has \(levels) levels; Mosquitto accepts at most \(Topic.maximumLevels) (200 '/' separators)"
        case .nul:
            return "it contains a NUL character (U+0000)"
        case .controlCharacter(let scalar):
            return "it contains the control character \(Topic.codePoint(scalar)), which brokers reject"
        case .nonCharacter(let scalar):
            return "it contains the Unicode non-character \(Topic.codePoint(scalar)), which brokers reject"
        case .wildcardInName(let wildcard):
            return "'\(wildcard)' is a wildcard; it may appear in a subscription filter, never in a published topic"
        case .multiLevelWildcardNotLast:
            return "'#' must be the last level of a filter, alone (as in \"a/b/#\")"
        case .singleLevelWildcardNotAlone:
            return "'+' must fill a whole level of a filter (as in \"a/+/c\")"
        }
    }
}

/// The rules MQTT topic names and filters share.
enum Topic {
    /// MQTT encodes a topic's length in two bytes.
    static let maximumLength = 65_535
    /// Mosquitto's `TOPIC_HIERARCHY_LIMIT` allows 200 '/' separators: the broker refuses topics
    /// with more than 201 levels.
    static let maximumLevels = 201

    /// Checks what every topic name and filter must satisfy. One pass over the UTF-8 bytes; only
    /// non-ASCII text looks at Unicode scalars.
    static func validateCommon(_ topic: String) throws(TopicError) {
        if topic.isEmpty { throw TopicError(.empty, topic: topic) }
        var bytes = 0
        var separators = 0
        var ascii = true
        for byte in topic.utf8 {
            bytes += 1
            if byte == UInt8(ascii: "/") {
                separators += 1
            } else if byte < 0x20 || byte == 0x7F {
                throw byte == 0 ? TopicError(.nul, topic: topic) : TopicError(.controlCharacter(Unicode.Scalar(byte)), topic: topic)
            } else if byte >= 0x80 {
                ascii = false
            }
        }
        if bytes > maximumLength { throw TopicError(.tooLong(bytes: bytes), topic: topic) }
        if !ascii { try validateScalars(topic) }
        if separators + 1 > maximumLevels {
            throw TopicError(.tooManyLevels(separators + 1), topic: topic)
        }
    }

    /// The checks non-ASCII text needs: C1 control characters and Unicode non-characters.
    private static func validateScalars(_ topic: String) throws(TopicError) {
        for scalar in topic.unicodeScalars where scalar.value >= 0x80 {
            let value = scalar.value
            if value <= 0x9F { throw TopicError(.controlCharacter(scalar), topic: topic) }
            if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE {
                throw TopicError(.nonCharacter(scalar), topic: topic)
            }
        }
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
