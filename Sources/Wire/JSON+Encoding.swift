extension JSON {
    /// Compact JSON text: no whitespace, object keys sorted by their UTF-8 bytes (so equal values
    /// always give equal bytes, which the gateway's retained-topic comparison relies on).
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(into: &output)
        return output
    }

    /// The compact text as a string.
    public var text: String { String(decoding: encoded(), as: UTF8.self) }

    /// Appends the compact text to `output`.
    public func write(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .uint(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): output.append(contentsOf: Self.text(of: value).utf8)
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
            var first = true
            for key in members.keys.sorted(by: Self.precedes) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                members[key].unsafelyUnwrapped.write(into: &output) // the key is the dictionary's own
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Orders keys by their UTF-8 bytes (cheaper than String's Unicode comparison, and stable).
    private static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// A number as JSON writes it: whole numbers without a fraction, the shortest text that
    /// reads back as the same double otherwise; `null` for infinities and NaN (JSON has none).
    public static func text(of value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A string with JSON's escapes: quote, backslash, and the control characters. Runs of bytes
    /// that need no escape are copied at once.
    public static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                appendEscape(byte, into: &output)
                start = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, into output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            output.append(contentsOf: "\\u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}
