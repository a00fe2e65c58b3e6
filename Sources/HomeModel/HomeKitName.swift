/// A name a person gives (a home, room, zone, group, action set, or a rename), checked against
/// HomeKit's rules when built:
///
/// - only letters, digits, spaces and apostrophes (`'` and `’`);
/// - it starts with a letter or a digit;
/// - at most 64 characters; trailing spaces are dropped;
/// - unique in its namespace, comparing ``key``: case, spaces and apostrophes ignored, so
///   `Home 1` and `home1` clash.
public struct HomeKitName: Hashable, Sendable, CustomStringConvertible {
    /// The name as it is shown.
    public let text: String

    /// The longest name accepted.
    public static let maximumLength = 64

    /// Checks `text` against the naming rules.
    /// - Throws: ``NameError`` saying which rule it breaks.
    public init(_ text: String) throws(NameError) {
        var trimmed = Substring(text)
        while trimmed.last?.isWhitespace == true { trimmed = trimmed.dropLast() }
        guard let first = trimmed.first else { throw NameError(.empty, name: text) }
        guard Self.startsWord(first) else { throw NameError(.badFirstCharacter(first), name: text) }
        if let bad = trimmed.first(where: { !Self.isAllowed($0) }) { throw NameError(.badCharacter(bad), name: text) }
        guard trimmed.count <= Self.maximumLength else { throw NameError(.tooLong(trimmed.count), name: text) }
        self.text = String(trimmed)
    }

    /// The comparison key: lower-cased, without spaces and apostrophes.
    public var key: String { Self.key(text) }

    /// Whether this name clashes with `other` under HomeKit's comparison.
    public func clashes(with other: String) -> Bool { key == Self.key(other) }

    /// The comparison key of any text.
    public static func key(_ text: String) -> String {
        String(text.lowercased().filter { $0 != " " && !apostrophes.contains($0) })
    }

    public var description: String { text }

    static let apostrophes: Set<Character> = ["'", "\u{2019}"]

    /// Letters (with their accents), digits, spaces and apostrophes; no emoji, keycaps or symbols.
    static func isAllowed(_ character: Character) -> Bool {
        if character == " " || apostrophes.contains(character) { return true }
        return startsWord(character)
    }

    /// A letter or a digit: its first scalar is one, the rest are accents (no variation
    /// selectors or enclosing marks, which make emoji and keycaps such as 1️⃣).
    static func startsWord(_ character: Character) -> Bool {
        let scalars = character.unicodeScalars
        guard let first = scalars.first, first.properties.isAlphabetic || first.properties.numericType == .decimal else { return false }
        return scalars.dropFirst().allSatisfy { scalar in
            let category = scalar.properties.generalCategory
            return (category == .nonspacingMark || category == .spacingMark) // accents, vowel signs
                && !scalar.properties.isVariationSelector && !scalar.properties.isEmojiModifier
        }
    }
}

/// Why a name breaks HomeKit's naming rules, or clashes with another.
public struct NameError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case empty
        case badFirstCharacter(Character)
        case badCharacter(Character)
        case tooLong(Int)
        case inUse(existing: String)
    }

    let kind: Kind
    /// The name that was refused.
    public let name: String

    init(_ kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// The name clashes with `existing` in its namespace.
    public static func inUse(_ name: String, existing: String) -> NameError {
        NameError(.inUse(existing: existing), name: name)
    }

    /// `name-in-use` or `invalid-name`, as management answers say.
    public var code: String {
        if case .inUse = kind { return "name-in-use" }
        return "invalid-name"
    }

    /// The name as messages show it: at most 40 characters.
    private var shown: String {
        name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    public var description: String {
        let name = shown
        switch kind {
        case .empty:
            return "a name must not be empty"
        case .badFirstCharacter(let character):
            return "\"\(name)\" must start with a letter or a digit, not \"\(character)\""
        case .badCharacter(let character):
            return "\"\(name)\" may contain only letters, digits, spaces and apostrophes, not \"\(character)\""
        case .tooLong(let count):
            return "\"\(name)\" is \(count) characters long; at most \(HomeKitName.maximumLength) are allowed"
        case .inUse(let existing):
            return existing == self.name
                ? "\"\(name)\" is already in use"
                : "\"\(name)\" is already in use as \"\(existing.count > 40 ? existing.prefix(40) + "…" : existing)\" (names are compared ignoring case, spaces and apostrophes)"
        }
    }
}
