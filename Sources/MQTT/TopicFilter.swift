/// A subscription filter: a topic that may contain the wildcards `+` (one whole level) and
/// `#` (the last level, alone). Validated when built.
public struct TopicFilter: Hashable, Sendable, CustomStringConvertible {
    /// The filter as sent on the wire.
    public let string: String

    /// Validates `string` as a topic filter.
    /// - Throws: ``TopicError`` saying what is wrong.
    public init(_ string: String) throws(TopicError) {
        try Topic.validateCommon(string)
        let levels = string.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                throw TopicError(.multiLevelWildcardNotLast, topic: string)
            }
            if level.contains("+") && level != "+" {
                throw TopicError(.singleLevelWildcardNotAlone, topic: string)
            }
        }
        self.string = string
    }

    /// The filter that matches exactly one topic.
    public init(_ name: TopicName) {
        self.string = name.string
    }

    /// Whether a message published to `topic` is delivered to this filter, as a broker decides
    /// (topics starting with `$` are not matched by a leading wildcard).
    public func matches(_ topic: TopicName) -> Bool {
        let filterLevels = string.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.levels
        if topic.string.hasPrefix("$"), let first = filterLevels.first, first == "+" || first == "#" {
            return false
        }
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }

    public var description: String { string }
}
