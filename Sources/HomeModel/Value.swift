import Foundation
import Wire

/// A characteristic's value, typed by the characteristic's format.
///
/// `bool`; `int` (HAP `int`); `uint` (HAP `uint8` ... `uint64`); `float`; `string`; `data`
/// (HAP `data` and `tlv8`, written as base64 in JSON).
public enum Value: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Double)
    case string(String)
    case data([UInt8])

    /// The value as JSON: `true`, `42`, `21.5`, `"text"`, `"AAEC"` (base64 for data).
    public var json: JSON {
        switch self {
        case .bool(let value): .bool(value)
        case .int(let value): .int(value)
        case .uint(let value): value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
        case .float(let value): .double(value)
        case .string(let value): .string(value)
        case .data(let bytes): .string(Data(bytes).base64EncodedString())
        }
    }

    /// The value's compact JSON text, as a payload.
    public var encoded: [UInt8] {
        switch self {
        case .bool(let value): Array((value ? "true" : "false").utf8)
        case .int(let value): Array(String(value).utf8)
        case .uint(let value): Array(String(value).utf8)
        case .float(let value): Array(Self.format(value).utf8)
        default: json.encoded()
        }
    }

    /// The value's compact JSON text.
    public var jsonText: String { String(decoding: encoded, as: UTF8.self) }

    public var description: String { jsonText }

    /// The numeric value, for numbers.
    public var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        default: return nil
        }
    }

    /// Shortest text that reads back as the same number; whole numbers without a fraction.
    public static func format(_ value: Double) -> String {
        JSON.text(of: value)
    }
}
