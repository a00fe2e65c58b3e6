/// A JSON value: the one JSON model of the gateway.
///
/// HAP bodies (`application/hap+json`), MQTT payloads (command bodies, management requests,
/// acknowledgements, `$layout`, `$meta`) and Home Assistant's discovery configs are all read into
/// it by ``JSON/parse(_:limits:)`` and written from it by ``JSON/encoded()``.
///
/// Numbers keep the kind they were written with: one without a fraction or exponent that fits
/// 64 bits is an ``int`` (or a ``uint`` above `Int64.max`), any other a ``double``.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    /// A whole number above `Int64.max` (HAP `uint64`).
    case uint(UInt64)
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

    /// The value as a 64-bit integer, if it is a whole number that fits.
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
        case .uint(let value): Double(value)
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

    /// Whether the value is a number (of any kind).
    public var isNumber: Bool {
        switch self {
        case .int, .uint, .double: true
        default: false
        }
    }

    /// A member of an object; nil for a missing key or when this is not an object.
    public subscript(key: String) -> JSON? {
        object?[key]
    }
}

extension JSON {
    /// A string, or null when there is none.
    public static func string(_ text: String?) -> JSON {
        text.map { JSON.string($0) } ?? .null
    }

    /// A whole number.
    public static func int(_ value: Int) -> JSON {
        .int(Int64(value))
    }
}

extension JSON: ExpressibleByStringInterpolation, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
