/// A topic a message can be published to: validated when built, so later code can trust it.
///
/// Rules (MQTT 5 section 4.7 plus what Mosquitto enforces): not empty; at most 65,535 bytes of
/// UTF-8; no NUL, control characters or Unicode non-characters; no wildcard (`+`, `#`);
/// at most 201 levels (Mosquitto's limit of 200 '/' separators).
public struct TopicName: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The topic as sent on the wire.
    public let string: String

    /// Validates `string` as a topic name.
    /// - Throws: ``TopicError`` saying what is wrong.
    public init(_ string: String) throws(TopicError) {
        try Topic.validateCommon(string)
        for byte in string.utf8 where byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") {
            throw TopicError(.wildcardInName(Character(Unicode.Scalar(byte))), topic: string)
        }
        self.string = string
    }

    /// A topic built inside this package from parts already checked (a validated base topic and
    /// the home tree's segments, which ``TopicName/init(_:)`` would accept by construction): not
    /// checked again, so publishing it costs nothing extra.
    package init(trusted string: String) {
        self.string = string
    }

    /// The topic's levels, split at `/`.
    public var levels: [Substring] {
        string.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// This topic with `level` appended (`a/b` + `c` = `a/b/c`).
    public func appending(_ level: String) throws(TopicError) -> TopicName {
        try TopicName(string + "/" + level)
    }

    public var description: String { string }

    public static func < (lhs: TopicName, rhs: TopicName) -> Bool { lhs.string < rhs.string }
}
