import Foundation
import HomeModel
import Yams

/// A node of the YAML configuration with its key path, so every error can say where it is.
///
/// Reading is strict: unknown keys are refused (a typo must not be silently ignored), and each
/// value is checked for its type and range.
public struct ConfigNode {
    let node: Node
    /// The dotted key path of this node (`mqtt.tls`).
    public let keyPath: String
    /// The file it came from.
    public let file: String

    init(node: Node, keyPath: String, file: String) {
        self.node = node
        self.keyPath = keyPath
        self.file = file
    }

    /// Parses `text` (the contents of `file`) into its root node; an empty file is an empty mapping.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> ConfigNode {
        let root: Node?
        do {
            // Scalars stay text (the basic resolver): every value is read by its key's own rules
            // below, and YAML's regular-expression tagging was most of the parse of a big home.
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw ConfigError(file: file, line: Self.line(of: error), keyPath: "", problem: "not valid YAML: \(Self.problem(of: error))")
        } catch {
            throw ConfigError(file: file, line: nil, keyPath: "", problem: "not valid YAML: \(error)")
        }
        return ConfigNode(node: root ?? Node.mapping(Node.Mapping([])), keyPath: "", file: file)
    }

    /// The line this node starts on.
    public var line: Int? { node.mark?.line }

    /// An error about this node.
    public func error(_ problem: String) -> ConfigError {
        ConfigError(file: file, line: line, keyPath: keyPath, problem: problem)
    }

    /// The node's entries, refusing keys other than `allowed`.
    public func mapping(allowed: [String]) throws(ConfigError) -> [String: ConfigNode] {
        guard case .mapping(let mapping) = node else {
            throw error("expected a mapping of keys (\(allowed.joined(separator: ", "))), got \(kind)")
        }
        var entries: [String: ConfigNode] = [:]
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            let path = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            guard allowed.contains(key) else {
                let suggestion = Self.closest(to: key, in: allowed).map { "; did you mean \"\($0)\"?" } ?? ""
                throw ConfigError(file: file, line: keyNode.mark?.line, keyPath: path,
                                  problem: "unknown key\(suggestion) (known here: \(allowed.joined(separator: ", ")))")
            }
            entries[key] = ConfigNode(node: value, keyPath: path, file: file)
        }
        return entries
    }

    /// The node's entries under keys of the file's own choosing (accessory ids, say), in the
    /// file's order; an empty key is refused.
    public func namedEntries() throws(ConfigError) -> [(key: String, node: ConfigNode)] {
        guard case .mapping(let mapping) = node else { throw error("expected a mapping, got \(kind)") }
        var entries: [(key: String, node: ConfigNode)] = []
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            let path = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            guard !key.isEmpty else { throw ConfigError(file: file, line: keyNode.mark?.line, keyPath: path, problem: "an empty key") }
            entries.append((key, ConfigNode(node: value, keyPath: path, file: file)))
        }
        return entries
    }

    /// Whether the node is a list.
    public var isSequence: Bool {
        if case .sequence = node { return true }
        return false
    }

    /// The node's items, when it is a sequence.
    public func sequence() throws(ConfigError) -> [ConfigNode] {
        guard case .sequence(let sequence) = node else { throw error("expected a list, got \(kind)") }
        return sequence.enumerated().map { index, item in
            ConfigNode(node: item, keyPath: "\(keyPath)[\(index)]", file: file)
        }
    }

    /// The node as text; numbers and booleans written without quotes are accepted as their text.
    public func string() throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a text value, got \(kind)") }
        if scalar.style == .plain && Self.nullSpellings.contains(scalar.string) {
            let hint = scalar.string.isEmpty ? "" : " (\"\(scalar.string)\" means null in YAML; quote it to mean the text)"
            throw error("expected a text value, got nothing\(hint)")
        }
        return scalar.string
    }

    /// Whether the node is YAML's plain null (`~`, `null`, or nothing).
    public var isPlainNull: Bool {
        guard case .scalar(let scalar) = node else { return false }
        return scalar.style == .plain && Self.nullSpellings.contains(scalar.string)
    }

    /// YAML's plain null (the core schema).
    static let nullSpellings: Set<String> = ["", "~", "null", "Null", "NULL"]

    /// Text that must not be empty.
    public func nonEmptyString() throws(ConfigError) -> String {
        let text = try string()
        if text.trimmedOfWhitespace.isEmpty { throw error("must not be empty") }
        return text
    }

    /// A boolean: `true`/`false` (also `yes`/`no`, `on`/`off`).
    public func bool() throws(ConfigError) -> Bool {
        let text = try scalarText()
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error("expected true or false, got \"\(text)\"")
        }
    }

    /// A whole number within `range`.
    public func int(in range: ClosedRange<Int>, unit: String = "") throws(ConfigError) -> Int {
        let text = try scalarText()
        let what = unit.isEmpty ? "a whole number" : "a whole number of \(unit)"
        guard let value = Int(text) else { throw error("expected \(what), got \"\(text)\"") }
        guard range.contains(value) else {
            throw error("must be within \(range.lowerBound)...\(range.upperBound)\(unit.isEmpty ? "" : " \(unit)"), got \(value)")
        }
        return value
    }

    /// A number of seconds (fractions allowed) within `range`, as a duration.
    public func seconds(in range: ClosedRange<Double>) throws(ConfigError) -> Duration {
        let text = try scalarText()
        guard let value = Double(text), value.isFinite else { throw error("expected a number of seconds, got \"\(text)\"") }
        guard range.contains(value) else {
            throw error("must be within \(Self.format(range.lowerBound))...\(Self.format(range.upperBound)) seconds, got \(Self.format(value))")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    /// A path; relative paths are taken from the configuration file's folder.
    public func path() throws(ConfigError) -> String {
        let text = try nonEmptyString()
        return Self.resolve(text, relativeTo: file)
    }

    /// One of `choices`, compared without case.
    public func choice(_ choices: [String]) throws(ConfigError) -> String {
        let text = try scalarText()
        guard let match = choices.first(where: { $0.lowercased() == text.lowercased() }) else {
            throw error("expected one of \(choices.joined(separator: ", ")), got \"\(text)\"")
        }
        return match
    }

    /// `path` made absolute against the folder of `file`.
    public static func resolve(_ path: String, relativeTo file: String) -> String {
        if path.hasPrefix("/") { return path }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        return folder.appendingPathComponent(path).standardizedFileURL.path
    }

    private func scalarText() throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a single value, got \(kind)") }
        return scalar.string
    }

    private var kind: String {
        switch node {
        case .scalar(let scalar): return scalar.string.isEmpty ? "nothing" : "the value \"\(scalar.string)\""
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// A whole number without its `.0`; anything else (a fraction, or a number beyond `Int`, which
    /// a configuration may well hold by mistake) as Swift writes a `Double`.
    private static func format(_ value: Double) -> String {
        if let whole = Int(exactly: value) { return String(whole) }
        return String(value)
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        case .duplicatedKeysInMapping(_, let context):
            return context.mark.line
        default:
            return nil
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _), .composer(let context, let problem, _, _):
            return context.map { "\(problem) \($0.text)" } ?? problem
        case .duplicatedKeysInMapping(let duplicates, _):
            return "the key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) appears more than once"
        default:
            return "\(error)"
        }
    }

    /// The allowed key nearest to a misspelt one, if any is close.
    static func closest(to key: String, in allowed: [String]) -> String? {
        let scored = allowed.map { ($0, editDistance($0, key.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, key.count / 3) else { return nil }
        return best.0
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
