import Foundation

/// A characteristic's value, typed by the characteristic's format.
///
/// `bool`; `int` (HAP `int`); `uint` (HAP `uint8` ... `uint64`); `float`; `string`; `data`
/// (HAP `data` and `tlv8`, written as base64 in JSON).
public enum Value: Sendable, Hashable, Codable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Double)
    case string(String)
    case data([UInt8])

    /// The value as a JSON scalar: `true`, `42`, `21.5`, `"text"`, `"AAEC"` (base64 for data).
    public var json: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .float(let value): return Self.format(value)
        case .string(let value): return Self.quote(value)
        case .data(let bytes): return "\"\(Data(bytes).base64EncodedString())\""
        }
    }

    public var description: String {
        switch self {
        case .string(let value): return Self.quote(value)
        default: return json
        }
    }

    /// The numeric value, for numbers.
    public var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .float(let value): return value
        default: return nil
        }
    }

    /// A Foundation JSON object for this value (for JSONSerialization).
    public var jsonObject: Any {
        switch self {
        case .bool(let value): return value
        case .int(let value): return value
        case .uint(let value): return value
        case .float(let value): return value
        case .string(let value): return value
        case .data(let bytes): return Data(bytes).base64EncodedString()
        }
    }

    /// Shortest text that reads back as the same number; whole numbers without a fraction.
    public static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

extension Value {
    private enum CodingKeys: String, CodingKey {
        case bool, int, uint, float, string, data
    }

    /// Stored as `{"<kind>": <value>}` (`{"int": 40}`, `{"data": "AAEC"}`), so the kind survives.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a value needs one of bool, int, uint, float, string, data"))
        }
        switch key {
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .int: self = .int(try container.decode(Int64.self, forKey: key))
        case .uint: self = .uint(try container.decode(UInt64.self, forKey: key))
        case .float: self = .float(try container.decode(Double.self, forKey: key))
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .data:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
            }
            self = .data(Array(data))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .int(let value): try container.encode(value, forKey: .int)
        case .uint(let value): try container.encode(value, forKey: .uint)
        case .float(let value): try container.encode(value, forKey: .float)
        case .string(let value): try container.encode(value, forKey: .string)
        case .data(let bytes): try container.encode(Data(bytes).base64EncodedString(), forKey: .data)
        }
    }
}
