import Foundation
import Wire

/// A characteristic's format as HAP over CoAP and Bluetooth LE describe it (the Bluetooth SIG's
/// presentation format codes), and its values in binary: little-endian numbers, single-precision
/// floats, UTF-8 text, raw bytes for `data` and `tlv8`.
enum GATTFormat: UInt8, Sendable {
    case bool = 0x01
    case uint8 = 0x04
    case uint16 = 0x06
    case uint32 = 0x08
    case uint64 = 0x0A
    case int32 = 0x10
    case float = 0x14
    case string = 0x19
    /// `data` and `tlv8` alike.
    case data = 0x1B

    /// HAP over IP's name of the format.
    var hapName: String {
        switch self {
        case .bool: "bool"
        case .uint8: "uint8"
        case .uint16: "uint16"
        case .uint32: "uint32"
        case .uint64: "uint64"
        case .int32: "int"
        case .float: "float"
        case .string: "string"
        case .data: "data"
        }
    }

    /// The width of a number of this format in bytes (nil: not a number).
    var width: Int? {
        switch self {
        case .bool, .uint8: 1
        case .uint16: 2
        case .uint32, .int32, .float: 4
        case .uint64: 8
        case .string, .data: nil
        }
    }

    /// HAP over IP's unit for a Bluetooth SIG unit code (nil: none, or one HAP does not name).
    static func unitName(_ code: UInt16) -> String? {
        switch code {
        case 0x272F: "celsius"
        case 0x2763: "arcdegrees"
        case 0x27AD: "percentage"
        case 0x2731: "lux"
        case 0x2703: "seconds"
        default: nil
        }
    }

    /// A value as the JSON HAP over IP would have carried: numbers as numbers (a float as the
    /// double of its single-precision value), text as text, `data` and `tlv8` as base64.
    ///
    /// No bytes is a value the accessory does not know yet (a doorbell's first press, a vendor
    /// counter not started, a name not set; HAP over IP sends `null` for it): nil, a
    /// characteristic without a value, in every format, as aiohomekit's CoAP controller reads it
    /// (`None`). Over CoAP an empty text cannot be told from no text; both are no value.
    /// - Throws: ``HAPError`` (malformed) when the bytes do not fit the format.
    func json(from bytes: [UInt8]) throws(HAPError) -> JSON? {
        if bytes.isEmpty { return nil }
        if let width, bytes.count != width {
            throw HAPError(.malformed, "a \(hapName) value of \(bytes.count) bytes (it has \(width))")
        }
        let raw = bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch self {
        case .bool: return .bool(raw != 0)
        case .uint8, .uint16, .uint32: return .int(Int64(raw))
        case .uint64: return raw > UInt64(Int64.max) ? .uint(raw) : .int(Int64(raw))
        case .int32: return .int(Int64(Int32(truncatingIfNeeded: UInt32(raw))))
        case .float: return .double(Double(Float(bitPattern: UInt32(raw))))
        case .string:
            guard let text = String(validating: bytes, as: UTF8.self) else { throw HAPError(.malformed, "a string value that is not UTF-8") }
            return .string(text)
        case .data: return .string(Data(bytes).base64EncodedString())
        }
    }

    /// A JSON value in this format's bytes; nil when it is not a value of the format.
    func bytes(from json: JSON) -> [UInt8]? {
        switch self {
        case .bool: return json.bool.map { [$0 ? 1 : 0] }
        case .uint8, .uint16, .uint32, .uint64:
            let value: UInt64? = if case .uint(let large) = json { large } else { json.int.flatMap { $0 >= 0 ? UInt64($0) : nil } }
            guard let value, let width, width == 8 || value < UInt64(1) << (8 * width) else { return nil }
            return Self.littleEndian(value, width: width)
        case .int32:
            guard let value = json.int, let narrow = Int32(exactly: value) else { return nil }
            return Self.littleEndian(UInt64(UInt32(bitPattern: narrow)), width: 4)
        case .float:
            guard let value = json.double else { return nil }
            return Self.littleEndian(UInt64(Float(value).bitPattern), width: 4)
        case .string: return json.string.map { Array($0.utf8) }
        case .data: return json.string.flatMap { Data(base64Encoded: $0) }.map(Array.init)
        }
    }

    /// A number of this format from its bytes, as a double (for ranges and steps).
    /// A float without its single-precision noise (`0.1`, not `0.10000000149011612`).
    func number(from bytes: [UInt8]) -> Double? {
        guard let value = (try? json(from: bytes))?.double else { return nil }
        return self == .float ? Double(Float(value).description) ?? value : value
    }

    private static func littleEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
