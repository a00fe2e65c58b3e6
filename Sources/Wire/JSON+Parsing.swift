/// Why bytes are not acceptable JSON: what was wrong, and where (a byte offset).
public struct JSONError: Error, Hashable, CustomStringConvertible {
    /// The byte offset into the input where the problem was found.
    public let offset: Int
    /// What was wrong, in words (`expected a value`, `nesting deeper than 64 levels`).
    public let reason: String

    init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason) (at byte \(offset))" }
}

extension JSON {
    /// What the parser accepts at most; input beyond a limit is refused, never half-read.
    public struct Limits: Sendable, Hashable {
        /// Arrays and objects nested deeper than this are refused (a hostile 100,000-deep
        /// document costs nothing).
        public var maximumDepth: Int

        public init(maximumDepth: Int = 64) {
            self.maximumDepth = maximumDepth
        }
    }

    /// Parses one JSON document (RFC 8259: any value at the top, whitespace around it).
    /// - Throws: ``JSONError`` for anything that is not JSON: invalid UTF-8 in a string, a
    ///   control character or lone surrogate, trailing text, nesting beyond the limits.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(JSONError) -> JSON {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in
            var parser = JSONParser(buffer, limits: limits)
            return try parser.document()
        }
    }

    /// Parses one JSON document from a slice of bytes.
    public static func parse(_ bytes: ArraySlice<UInt8>, limits: Limits = Limits()) throws(JSONError) -> JSON {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in
            var parser = JSONParser(buffer, limits: limits)
            return try parser.document()
        }
    }

    /// Parses one JSON document from text.
    public static func parse(_ text: String, limits: Limits = Limits()) throws(JSONError) -> JSON {
        try parse(Array(text.utf8), limits: limits)
    }
}

/// A recursive-descent JSON reader over bytes. Depth is bounded by ``JSON/Limits``, so the
/// recursion is too.
private struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: JSON.Limits
    private var index = 0
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSON.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func document() throws(JSONError) -> JSON {
        skipWhitespace()
        let value = try value()
        skipWhitespace()
        guard index == bytes.count else { throw JSONError("unexpected text after the JSON value", at: index) }
        return value
    }

    private mutating func value() throws(JSONError) -> JSON {
        guard index < bytes.count else { throw JSONError("expected a value, found the end", at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw JSONError("expected a value", at: index)
        }
    }

    private mutating func enter() throws(JSONError) {
        depth += 1
        if depth > limits.maximumDepth { throw JSONError("nesting deeper than \(limits.maximumDepth) levels", at: index) }
    }

    private mutating func object() throws(JSONError) -> JSON {
        try enter()
        index += 1
        var members: [String: JSON] = [:]
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw JSONError("expected a member name in quotes", at: index) }
            let key = try string()
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw JSONError("expected ':' after a member name", at: index) }
            index += 1
            skipWhitespace()
            members[key] = try value()
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "}")) else { throw JSONError("expected ',' or '}' in an object", at: index) }
            index += 1
            depth -= 1
            return .object(members)
        }
    }

    private mutating func array() throws(JSONError) -> JSON {
        try enter()
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "]")) else { throw JSONError("expected ',' or ']' in an array", at: index) }
            index += 1
            depth -= 1
            return .array(elements)
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSON) throws(JSONError) -> JSON {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw JSONError("expected \(word)", at: index) }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw JSONError("expected \(word)", at: index)
        }
        index += count
        return value
    }

    private mutating func number() throws(JSONError) -> JSON {
        let start = index
        var isWhole = true
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw JSONError("expected a digit", at: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw JSONError("a number cannot start with 0", at: start) }
        } else {
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            isWhole = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw JSONError("expected a digit after '.'", at: index) }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isWhole = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw JSONError("expected a digit in the exponent", at: index) }
            skipDigits()
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isWhole {
            if let value = Int64(text) { return .int(value) }
            if let value = UInt64(text) { return .uint(value) }
        }
        guard let value = Double(text), value.isFinite else { throw JSONError("the number \(text.prefix(40)) is out of range", at: start) }
        return .double(value)
    }

    private mutating func string() throws(JSONError) -> String {
        let start = index
        index += 1
        let contentStart = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]), as: UTF8.self) else {
                    throw JSONError("a string is not valid UTF-8", at: start)
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONError("a control character inside a string must be escaped", at: index) }
            index += 1
        }
        guard index < bytes.count else { throw JSONError("a string does not end", at: start) }
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else { throw JSONError("a string is not valid UTF-8", at: start) }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &utf8)
            case 0..<0x20:
                throw JSONError("a control character inside a string must be escaped", at: index)
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw JSONError("a string does not end", at: start)
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(JSONError) {
        let start = index
        index += 1
        guard index < bytes.count else { throw JSONError("a string does not end", at: start) }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800...0xDBFF).contains(scalar) {
                guard peek(UInt8(ascii: "\\")), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw JSONError("a \\u escape is half of a surrogate pair", at: start)
                }
                index += 2
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONError("a \\u escape is half of a surrogate pair", at: start) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw JSONError("a \\u escape is half of a surrogate pair", at: start)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw JSONError("a \\u escape is not a character", at: start) }
            utf8.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw JSONError("unknown escape in a string", at: start)
        }
    }

    private mutating func hexQuad() throws(JSONError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw JSONError("a \\u escape needs four hex digits", at: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONError("a \\u escape needs four hex digits", at: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }
}
