import HomeModel

extension TopicMap {
    /// Names the first level of an unresolved topic (under `base`) for the -70409 message, with
    /// the closest existing segments (`did you mean "brightness"?`) and, when there are few, the
    /// valid ones.
    func describeUnresolved(levels: [Substring], index: Int, segment: String, base: String) -> String {
        let kinds = ["home", "room", "accessory", "service", "characteristic"]
        guard index < kinds.count else {
            return "\(levels.joined(separator: "/")) has more levels than <home>/<room>/<accessory>/<service>/<characteristic>"
        }
        let parent = index == 0 ? "under \(base)" : "in \(levels[0..<index].joined(separator: "/"))"
        let candidates = segments(after: Array(levels[0..<index]))
        var message = "no \(kinds[index]) \"\(segment)\" \(parent)"
        let close = Suggestions.closest(to: segment, among: candidates)
        if !close.isEmpty { message += "; did you mean \(close.map { "\"\($0)\"" }.joined(separator: " or "))?" }
        if !candidates.isEmpty, candidates.count <= 12 { message += " (there: \(candidates.joined(separator: ", ")))" }
        return message
    }
}

/// The names closest to a mistyped one, by edit distance on their canonical forms.
enum Suggestions {
    /// At most three, each within a third of the name's length (at least 2 edits).
    static func closest(to name: String, among candidates: [String]) -> [String] {
        let key = Array(Slug.canonical(name).unicodeScalars)
        guard !key.isEmpty else { return [] }
        let limit = max(2, key.count / 3)
        let scored = candidates.map { ($0, distance(key, Array(Slug.canonical($0).unicodeScalars))) }.filter { $0.1 <= limit }
        return scored.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    /// Levenshtein distance.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
