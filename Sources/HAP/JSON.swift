import Foundation

/// A JSON value as HAP's `application/hap+json` bodies carry them: characteristic values,
/// metadata, statuses.
///
/// Decoding keeps numbers as HAP sends them: a number without a fraction or exponent is an
/// ``int``, any other an ``double``; `true`/`false` stay booleans.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    /// The value as a Boolean, if it is one (or the numbers 0 and 1, as some devices send them).
    public var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .int(0): false
        case .int(1): true
        default: nil
        }
    }

    /// The value as an integer, if it is a whole number.
    public var int: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value) where value == value.rounded() && abs(value) < 9.2e18: Int64(value)
        default: nil
        }
    }

    /// The value as a number.
    public var double: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var array: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var object: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    public subscript(key: String) -> JSON? {
        object?[key]
    }

    /// Compact JSON text, keys in a stable order.
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(into: &output)
        return output
    }

    func write(into output: inout [UInt8]) {
        switch self {
        case .null: output += Array("null".utf8)
        case .bool(let value): output += Array((value ? "true" : "false").utf8)
        case .int(let value): output += Array(String(value).utf8)
        case .double(let value): output += Array(Self.text(of: value).utf8)
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                members[key]?.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func text(of value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: output += Array(String(format: "\\u%04x", byte).utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSON {
    /// Parses a JSON document.
    /// - Throws: ``HAPError`` (malformed) if `bytes` is not JSON.
    public static func parse(_ bytes: [UInt8]) throws(HAPError) -> JSON {
        do {
            return try JSONDecoder().decode(JSON.self, from: Data(bytes))
        } catch {
            throw HAPError(.malformed, "the accessory sent JSON that does not parse: \(error)")
        }
    }
}
