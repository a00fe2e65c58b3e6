import Foundation

/// Topic segments made from names.
public enum Slug {
    /// The longest segment a name gives (longer ones are cut at a word boundary when possible).
    public static let maximumLength = 64

    /// A name made fit for a topic level: letters and digits lower-cased with diacritics folded
    /// (`Küche` -> `kuche`), every other run of characters one `-`, trimmed; `fallback` when
    /// nothing is left. `+`, `#`, `/`, NUL and `$` can never appear in one.
    public static func make(_ text: String, fallback: String) -> String {
        var slug = ""
        var pendingDash = false
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            let properties = scalar.properties
            if properties.generalCategory == .nonspacingMark || properties.generalCategory == .enclosingMark { continue }
            if properties.isAlphabetic || properties.numericType == .decimal {
                if pendingDash && !slug.isEmpty { slug += "-" }
                pendingDash = false
                slug += String(scalar).lowercased()
            } else {
                pendingDash = true
            }
        }
        slug = String(slug.precomposedStringWithCanonicalMapping)
        if slug.count > maximumLength {
            var cut = String(slug.prefix(maximumLength))
            let nextIsBoundary = slug.dropFirst(maximumLength).first == "-"
            if !nextIsBoundary, let dash = cut.lastIndex(of: "-"), cut.distance(from: cut.startIndex, to: dash) >= maximumLength / 2 {
                cut = String(cut[..<dash]) // cut at a word boundary when that keeps most of it
            }
            while cut.hasSuffix("-") { cut.removeLast() }
            slug = cut
        }
        return slug.isEmpty ? fallback : slug
    }

    /// `garageDoorOpener` -> `garage-door-opener`.
    public static func kebab(_ camelCase: String) -> String {
        var result = ""
        for character in camelCase {
            if character.isUppercase {
                if !result.isEmpty { result += "-" }
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The key inbound topic levels are compared by: lower-cased, diacritics folded, without
    /// `-`, `_`, spaces and apostrophes. `Living Room`, `living-room` and `livingroom` match.
    public static func canonical(_ text: Substring) -> String {
        // ASCII, byte by byte into the new string's own storage (a topic's levels on every
        // command: appending scalar by scalar was 3% of a set's CPU).
        var isASCII = true
        let key = String(unsafeUninitializedCapacity: text.utf8.count) { buffer in
            var count = 0
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: " "), UInt8(ascii: "'"):
                    continue
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    buffer[count] = byte + 32
                case 0..<0x80:
                    buffer[count] = byte
                default:
                    isASCII = false
                    return 0
                }
                count += 1
            }
            return count
        }
        return isASCII ? key : canonicalFolding(text)
    }

    public static func canonical(_ text: String) -> String {
        canonical(Substring(text))
    }

    /// The slow path of ``canonical(_:)`` for non-ASCII text.
    private static func canonicalFolding(_ text: Substring) -> String {
        var key = ""
        for scalar in String(text).decomposedStringWithCanonicalMapping.unicodeScalars {
            let category = scalar.properties.generalCategory
            if category == .nonspacingMark || category == .enclosingMark { continue }
            if scalar == "-" || scalar == "_" || scalar == " " || scalar == "'" || scalar == "\u{2019}" { continue }
            key += String(scalar).lowercased()
        }
        return key.precomposedStringWithCanonicalMapping
    }

    /// Gives each item a segment unique among its siblings (by ``canonical(_:)``): its preferred
    /// slug, or for the second, third ... of a clash `-2`, `-3` in stable-id order.
    public static func assign<ID: Comparable & Hashable>(_ items: [(id: ID, slug: String)]) -> [ID: String] {
        var result: [ID: String] = [:]
        var taken: Set<String> = []
        let ordered = items.sorted { lhs, rhs in
            let (left, right) = (canonical(lhs.slug), canonical(rhs.slug))
            return left == right ? lhs.id < rhs.id : left < right
        }
        // First pass: every slug's first claimant keeps it, so a later "-2" never steals a real name.
        var claimed: Set<String> = []
        for item in ordered where !claimed.contains(canonical(item.slug)) {
            claimed.insert(canonical(item.slug))
            result[item.id] = item.slug
            taken.insert(canonical(item.slug))
        }
        for item in ordered where result[item.id] == nil {
            var number = 2
            while taken.contains(canonical("\(item.slug)-\(number)")) { number += 1 }
            let segment = "\(item.slug)-\(number)"
            result[item.id] = segment
            taken.insert(canonical(segment))
        }
        return result
    }
}
