import Foundation
import Wire

extension Value {
    /// Parses an MQTT payload as a value of `format`, for the characteristic named `name` (used in
    /// error messages, so worked out only for one).
    ///
    /// Accepted: a JSON scalar of the right kind (`true`, `42`, `21.5`, `"text"`); for booleans
    /// also `on`/`off`, `true`/`false`, `1`/`0` in any case; for strings also the raw text; for
    /// `data` and `tlv8` base64, quoted or not.
    public static func parse(payload: String, format: Format, name: @autoclosure () -> String) throws(StatusError) -> Value {
        let text = payload.trimmedOfWhitespace
        switch format {
        case .string:
            if text.hasPrefix("\""), let decoded = jsonString(text) { return .string(decoded) }
            return .string(payload)
        case .data, .tlv8:
            let body = text.hasPrefix("\"") ? (jsonString(text) ?? text) : text
            return try base64(body, name: name)
        default:
            return try parse(jsonText: text, format: format, name: name)
        }
    }

    /// Converts a JSON value (the `value` of `{"value": ..., "id": ...}`).
    public static func parse(json: JSON, format: Format, name: @autoclosure () -> String) throws(StatusError) -> Value {
        switch json {
        case .string(let text):
            switch format {
            case .string: return .string(text)
            case .data, .tlv8: return try base64(text, name: name)
            case .bool: return try parse(jsonText: text, format: format, name: name)
            default: throw StatusError(.invalidValue, "\(name()) must be a number, got \"\(text.prefix(80))\"")
            }
        case .bool(let flag):
            return try parse(jsonText: flag ? "true" : "false", format: format, name: name)
        case .int, .uint, .double:
            return try parse(jsonText: json.text, format: format, name: name)
        case .null:
            throw StatusError(.invalidValue, "\(name()) must have a value, got null")
        case .array, .object:
            throw StatusError(.invalidValue, "\(name()) must be a single value, not a list or an object")
        }
    }

    /// Parses bare JSON text (`true`, `42`, `-3.5`) for the non-text formats.
    private static func parse(jsonText text: String, format: Format, name: () -> String) throws(StatusError) -> Value {
        switch format {
        case .bool:
            switch text.lowercased() {
            case "true", "on", "1", "\"true\"", "\"on\"", "\"1\"": return .bool(true)
            case "false", "off", "0", "\"false\"", "\"off\"", "\"0\"": return .bool(false)
            default: throw StatusError(.invalidValue, "\(name()) must be true or false (also on/off, 1/0), got \(quoted(text))")
            }
        case .float:
            guard let number = Double(text), number.isFinite, isJSONNumber(text) else {
                throw StatusError(.invalidValue, "\(name()) must be a number, got \(quoted(text))")
            }
            return .float(number)
        case .int:
            return .int(try whole(text, name: name, as: Int64.self))
        case .uint8, .uint16, .uint32, .uint64:
            return .uint(try whole(text, name: name, as: UInt64.self))
        case .string, .data, .tlv8:
            throw StatusError(.invalidValue, "\(name()) cannot be parsed as \(format.rawValue)")
        }
    }

    private static func whole<T: FixedWidthInteger>(_ text: String, name: () -> String, as: T.Type) throws(StatusError) -> T {
        if let value = T(text) { return value }
        if let number = Double(text), number.isFinite, isJSONNumber(text) {
            if number == number.rounded(), let value = T(exactly: number) { return value }
            if number != number.rounded() { throw StatusError(.invalidValue, "\(name()) must be a whole number, got \(text)") }
            throw StatusError(.invalidValue, "\(name()) is out of range for its format, got \(text)")
        }
        throw StatusError(.invalidValue, "\(name()) must be a whole number, got \(quoted(text))")
    }

    private static func base64(_ text: String, name: () -> String) throws(StatusError) -> Value {
        guard let data = Data(base64Encoded: text) else {
            throw StatusError(.invalidValue, "\(name()) must be base64 data, got \(quoted(String(text.prefix(40))))")
        }
        return .data(Array(data))
    }

    private static func jsonString(_ text: String) -> String? {
        (try? JSON.parse(text))?.string
    }

    /// Rejects what `Double` parses but JSON does not (`nan`, `inf`, `0x1p3`).
    private static func isJSONNumber(_ text: String) -> Bool {
        text.allSatisfy { $0.isNumber || "+-.eE".contains($0) }
    }

    private static func quoted(_ text: String) -> String {
        "\"\(text.prefix(80))\""
    }
}

extension Characteristic {
    /// The characteristic's name in messages: its standard type name, else its description or UUID.
    public var displayName: String {
        standardType?.name ?? description ?? uuid
    }

    /// Checks that `value` may be written: the characteristic is writable and the value fits its
    /// format, bounds, step, valid values and length. A value that fails never reaches a device.
    public func validateWrite(_ value: Value) throws(StatusError) {
        guard isWritable else { throw StatusError(.readOnly, "\(displayName) is read-only") }
        try validate(value)
    }

    /// Checks that the characteristic may be read.
    public func validateRead() throws(StatusError) {
        guard isReadable else { throw StatusError(.writeOnly, "\(displayName) is write-only; it cannot be read") }
    }

    /// Parses a payload and validates it for writing.
    public func parseWrite(payload: String) throws(StatusError) -> Value {
        guard isWritable else { throw StatusError(.readOnly, "\(displayName) is read-only") }
        let value = try Value.parse(payload: payload, format: format, name: displayName)
        try validate(value)
        return value
    }

    /// Checks the value against format, bounds, step, valid values and length.
    public func validate(_ value: Value) throws(StatusError) {
        switch (format, value) {
        case (.bool, .bool), (.string, .string), (.data, .data), (.tlv8, .data):
            break
        case (.float, .float), (.float, .int), (.float, .uint), (.int, .int), (.uint8, .uint), (.uint16, .uint), (.uint32, .uint), (.uint64, .uint):
            break
        case (.int, .uint(let number)) where number <= UInt64(Int32.max):
            break
        default:
            let article = format == .int ? "an" : "a"
            throw StatusError(.invalidValue, "\(displayName) takes \(article) \(format.rawValue) value, got \(value)")
        }
        if let number = value.number { try validateNumber(number) }
        if case .string(let text) = value {
            let limit = maxLen ?? 64
            if text.count > limit { throw StatusError(.invalidValue, "\(displayName) must be at most \(limit) characters, got \(text.count)") }
        }
        if case .data(let bytes) = value, bytes.count > 2_097_152 {
            throw StatusError(.invalidValue, "\(displayName) must be at most 2097152 bytes, got \(bytes.count)")
        }
    }

    private func validateNumber(_ number: Double) throws(StatusError) {
        var shown: String { Value.format(number) } // for a message only
        if let range = format.integerRange, !range.contains(number) {
            throw StatusError(.invalidValue, "\(displayName) must be within \(Value.format(range.lowerBound))...\(Value.format(range.upperBound)) (\(format.rawValue)), got \(shown)")
        }
        if let validValues, !validValues.contains(number) {
            let names = standardType?.validValues.map { Dictionary($0.map { ($0.value, $0.name) }, uniquingKeysWith: { first, _ in first }) } ?? [:]
            let list = validValues.map { value in names[value].map { "\(Value.format(value)) (\($0))" } ?? Value.format(value) }
            throw StatusError(.invalidValue, "\(displayName) must be one of \(list.joined(separator: ", ")), got \(shown)")
        }
        if let minValue, let maxValue, !(minValue...maxValue).contains(number) {
            throw StatusError(.invalidValue, "\(displayName) must be within \(Value.format(minValue))...\(Value.format(maxValue)), got \(shown)")
        }
        if let minValue, maxValue == nil, number < minValue {
            throw StatusError(.invalidValue, "\(displayName) must be at least \(Value.format(minValue)), got \(shown)")
        }
        if let maxValue, minValue == nil, number > maxValue {
            throw StatusError(.invalidValue, "\(displayName) must be at most \(Value.format(maxValue)), got \(shown)")
        }
        if let minStep, minStep > 0 {
            let origin = minValue ?? 0
            let steps = (number - origin) / minStep
            if abs(steps - steps.rounded()) > 1e-6 {
                throw StatusError(.invalidValue, "\(displayName) must be a multiple of \(Value.format(minStep)) from \(Value.format(origin)), got \(shown)")
            }
        }
        if let range = validValuesRange, range.count == 2, !(range[0]...range[1]).contains(number) {
            throw StatusError(.invalidValue, "\(displayName) must be within \(Value.format(range[0]))...\(Value.format(range[1])), got \(shown)")
        }
    }
}

extension String {
    /// The text without the spaces, tabs and line breaks around it (every Unicode white space).
    /// Plain Swift: Foundation's trimming bridges to NSString, a fifth of reading a big
    /// configuration.
    public var trimmedOfWhitespace: String {
        // The usual payload has nothing around it: a visible ASCII character at each end is no
        // white space, and two bytes tell it.
        if let head = utf8.first, let tail = utf8.last, (0x21...0x7E).contains(head), (0x21...0x7E).contains(tail) { return self }
        guard let first = unicodeScalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = unicodeScalars.lastIndex(where: { !$0.properties.isWhitespace }) ?? first
        if first == unicodeScalars.startIndex, last == unicodeScalars.index(before: unicodeScalars.endIndex) { return self }
        return String(unicodeScalars[first...last])
    }
}
