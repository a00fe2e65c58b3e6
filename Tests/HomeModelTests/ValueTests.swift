import Foundation
import Testing
@testable import HomeModel
import Wire

@Suite("Values: parsing, validation, JSON")
struct ValueTests {
    /// Parses `payload` as `format`, for a characteristic called `x`.
    func parse(_ payload: String, _ format: Format) throws(StatusError) -> Value {
        try Value.parse(payload: payload, format: format, name: "x")
    }

    func parseError(_ payload: String, _ format: Format, name: String = "x") -> StatusError? {
        do {
            let value = try Value.parse(payload: payload, format: format, name: name)
            Issue.record("\(payload.debugDescription) parsed as \(value)")
            return nil
        } catch {
            #expect(error.status == .invalidValue)
            return error
        }
    }

    @Test("white space is trimmed from both ends, ASCII or not; text with none around it comes back as it is")
    func trimming() {
        let cases: [(String, String)] = [
            ("5", "5"), (" 5 ", "5"), ("\t\"q\"\n", "\"q\""), ("a b", "a b"), ("", ""), ("   ", ""),
            ("\u{00A0}x\u{2003}", "x"), ("é ", "é"), (" é", "é"), ("~", "~"), ("!\u{3000}", "!"),
        ]
        for (text, trimmed) in cases { #expect(text.trimmedOfWhitespace == trimmed, "\(text.debugDescription)") }
    }

    @Test("a characteristic is momentary by its type's name or UUID, and a type the catalogue does not know is not")
    func momentary() throws {
        let event = try #require(Catalog.standard.characteristic("programmable-switch-event"))
        #expect(Catalog.standard.isMomentary("programmable-switch-event") && Catalog.standard.isMomentary(event.uuid))
        #expect(!Catalog.standard.isMomentary("on") && !Catalog.standard.isMomentary("no-such-type"))
        #expect(Self.standard("programmable-switch-event").isMomentary && !Self.standard("brightness").isMomentary)
    }

    static func standard(_ name: String, iid: Int = 10) -> Characteristic {
        guard let type = Catalog.standard.characteristic(name) else {
            Issue.record("no \(name) in the catalog")
            return Characteristic(iid: iid, type: name, uuid: name, format: .string, perms: [])
        }
        return Characteristic(iid: iid, standard: type)
    }

    // MARK: bool

    @Test("booleans: true/false, on/off, 1/0 in any case, JSON or quoted", arguments: [
        ("true", true), ("false", false), ("on", true), ("off", false), ("1", true), ("0", false),
        ("TRUE", true), ("False", false), ("ON", true), ("Off", false), ("oN", true), ("\"on\"", true), ("\"OFF\"", false),
        ("\"true\"", true), ("\"false\"", false), ("\"1\"", true), ("\"0\"", false), (" true\n", true), ("\toff ", false),
    ])
    func bool(_ payload: String, expected: Bool) throws {
        #expect(try parse(payload, .bool) == .bool(expected))
    }

    @Test("not booleans", arguments: ["maybe", "2", "-1", "", "yes", "no", "1.0", "truee", "\"maybe\"", "null", "[true]", "{\"value\":true}"])
    func notBool(_ payload: String) {
        let error = parseError(payload, .bool, name: "on")
        #expect(error?.message.hasPrefix("on must be true or false (also on/off, 1/0), got ") == true)
    }

    @Test("the refusal of a boolean quotes what was sent")
    func boolMessage() {
        #expect(parseError("maybe", .bool, name: "on")?.message == "on must be true or false (also on/off, 1/0), got \"maybe\"")
        #expect(parseError("2", .bool, name: "on")?.message == "on must be true or false (also on/off, 1/0), got \"2\"")
    }

    // MARK: int

    @Test("int", arguments: [
        ("42", Int64(42)), ("-7", -7), ("0", 0), ("-2147483648", -2_147_483_648), (" 15 ", 15), ("4.0", 4), ("1e2", 100), ("-0", 0),
    ])
    func int(_ payload: String, expected: Int64) throws {
        #expect(try parse(payload, .int) == .int(expected))
    }

    @Test("ints must be whole numbers")
    func intRefused() {
        #expect(parseError("4.5", .int, name: "brightness")?.message == "brightness must be a whole number, got 4.5")
        #expect(parseError("-0.5", .int)?.message == "x must be a whole number, got -0.5")
        #expect(parseError("abc", .int)?.message == "x must be a whole number, got \"abc\"")
        #expect(parseError("true", .int) != nil)
        #expect(parseError("nan", .int) != nil)
        #expect(parseError("inf", .int) != nil)
        #expect(parseError("0x10", .int) != nil)
        #expect(parseError("", .int) != nil)
        #expect(parseError("\"42\"", .int) != nil)
    }

    // MARK: uint

    @Test("unsigned formats", arguments: [Format.uint8, .uint16, .uint32, .uint64])
    func uint(_ format: Format) throws {
        #expect(try parse("0", format) == .uint(0))
        #expect(try parse("200", format) == .uint(200))
        #expect(try parse("3.0", format) == .uint(3))
        #expect(parseError("-1", format)?.message == "x is out of range for its format, got -1")
        #expect(parseError("2.5", format)?.message == "x must be a whole number, got 2.5")
        #expect(parseError("seven", format) != nil)
        #expect(parseError("true", format) != nil)
    }

    @Test("uint64 takes the whole 64-bit range")
    func uint64Max() throws {
        #expect(try parse("18446744073709551615", .uint64) == .uint(UInt64.max))
    }

    // MARK: float

    @Test("floats", arguments: [
        ("21.5", 21.5), ("20", 20), ("-3.5e2", -350), ("0.1", 0.1), ("-0.25", -0.25), ("1E3", 1000), (" 7.5 ", 7.5),
    ])
    func float(_ payload: String, expected: Double) throws {
        #expect(try parse(payload, .float) == .float(expected))
    }

    @Test("not floats", arguments: ["nan", "NaN", "inf", "-inf", "infinity", "1e400", "abc", "", "0x1p3", "true", "\"21.5\"", "21,5"])
    func notFloat(_ payload: String) {
        let error = parseError(payload, .float, name: "target-temperature")
        #expect(error?.message.hasPrefix("target-temperature must be a number, got ") == true)
    }

    // MARK: string

    @Test("strings: a JSON string is unquoted, anything else taken as it is", arguments: [
        ("\"Kitchen\"", "Kitchen"), ("Kitchen", "Kitchen"), ("\"a \\\"quoted\\\" word\"", "a \"quoted\" word"),
        ("\"line\\nbreak\"", "line\nbreak"), ("\"\\u00fc\"", "ü"), ("42", "42"), ("true", "true"), ("", ""),
        ("\"unterminated", "\"unterminated"), ("  spaced  ", "  spaced  "), ("{\"a\":1}", "{\"a\":1}"), ("Küche 💡", "Küche 💡"),
    ])
    func string(_ payload: String, expected: String) throws {
        #expect(try parse(payload, .string) == .string(expected))
    }

    // MARK: data, tlv8

    @Test("data and tlv8: base64, quoted or not", arguments: [Format.data, .tlv8])
    func data(_ format: Format) throws {
        #expect(try parse("AAEC", format) == .data([0, 1, 2]))
        #expect(try parse("\"AAEC\"", format) == .data([0, 1, 2]))
        #expect(try parse(" AAEC\n", format) == .data([0, 1, 2]))
        #expect(try parse("/w==", format) == .data([255]))
        #expect(try parse("\"\"", format) == .data([]))
        #expect(parseError("not base64!", format)?.message == "x must be base64 data, got \"not base64!\"")
        #expect(parseError("\"@@@\"", format) != nil)
        #expect(parseError("AAE", format) != nil)
    }

    @Test("a refused long base64 payload is not printed whole")
    func longBase64() {
        let message = parseError(String(repeating: "!", count: 10_000), .data)?.message ?? ""
        #expect(message.count < 120)
    }

    // MARK: parse(json:)

    static func decoded(_ json: String) -> JSON {
        do {
            return try JSON.parse(json)
        } catch {
            Issue.record("\(json) does not decode: \(error)")
            return .null
        }
    }

    @Test("values decoded from JSON", arguments: [
        ("true", Format.bool, Value.bool(true)), ("false", .bool, .bool(false)), ("1", .bool, .bool(true)), ("0", .bool, .bool(false)),
        ("\"on\"", .bool, .bool(true)), ("\"OFF\"", .bool, .bool(false)),
        ("1", .int, .int(1)), ("-12", .int, .int(-12)), ("1.0", .int, .int(1)),
        ("1", .uint8, .uint(1)), ("255", .uint8, .uint(255)), ("18446744073709551615", .uint64, .uint(UInt64.max)),
        ("1.5", .float, .float(1.5)), ("21.3", .float, .float(21.3)), ("20", .float, .float(20)), ("-3.5e2", .float, .float(-350)),
        ("\"x\"", .string, .string("x")), ("\"AAEC\"", .data, .data([0, 1, 2])), ("\"AAEC\"", .tlv8, .data([0, 1, 2])),
    ])
    func jsonObject(_ json: String, format: Format, expected: Value) throws {
        #expect(try Value.parse(json: Self.decoded(json), format: format, name: "x") == expected)
    }

    @Test("JSON values of the wrong kind are refused", arguments: [
        ("1.5", Format.int), ("true", .int), ("true", .float), ("\"x\"", .int), ("\"21.5\"", .float), ("1.5", .bool), ("2", .bool),
        ("-1", .uint8), ("null", .bool), ("null", .string), ("[1]", .int), ("[true]", .bool), ("{\"a\": 1}", .string), ("[]", .data),
        ("42", .string), ("true", .string), ("42", .data), ("\"***\"", .data),
    ])
    func jsonObjectRefused(_ json: String, format: Format) {
        do {
            let value = try Value.parse(json: Self.decoded(json), format: format, name: "x")
            Issue.record("\(json) as \(format) gave \(value)")
        } catch {
            #expect(error.status == .invalidValue)
        }
    }

    @Test("messages for null, lists and text where a number goes")
    func jsonObjectMessages() {
        func message(_ json: String, _ format: Format) -> String? {
            do {
                _ = try Value.parse(json: Self.decoded(json), format: format, name: "brightness")
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message("null", .int) == "brightness must have a value, got null")
        #expect(message("[1, 2]", .int) == "brightness must be a single value, not a list or an object")
        #expect(message("{\"v\": 1}", .int) == "brightness must be a single value, not a list or an object")
        #expect(message("\"high\"", .int) == "brightness must be a number, got \"high\"")
    }

    // MARK: Validation

    func validationError(_ characteristic: Characteristic, _ value: Value, write: Bool = true) -> StatusError? {
        do {
            if write { try characteristic.validateWrite(value) } else { try characteristic.validate(value) }
            Issue.record("\(value) passed \(characteristic.displayName)")
            return nil
        } catch {
            return error
        }
    }

    @Test("writes to read-only characteristics are refused with -70404")
    func readOnly() throws {
        let temperature = Self.standard("current-temperature")
        let error = validationError(temperature, .float(21))
        #expect(error == StatusError(.readOnly, "current-temperature is read-only"))
        #expect(error?.status.rawValue == -70404)
        #expect(throws: StatusError(.readOnly, "current-temperature is read-only")) {
            try temperature.parseWrite(payload: "21")
        }
        // Read-only does not stop validation itself (device updates).
        try temperature.validate(.float(21))
    }

    @Test("reads of write-only characteristics are refused with -70405")
    func writeOnly() throws {
        #expect(throws: StatusError(.writeOnly, "identify is write-only; it cannot be read")) {
            try Self.standard("identify").validateRead()
        }
        #expect(HAPStatus.writeOnly.rawValue == -70405)
        try Self.standard("brightness").validateRead()
        try Self.standard("identify").validateWrite(.bool(true))
    }

    @Test("the format's own range", arguments: [
        (Format.uint8, Value.uint(256), "x must be within 0...255 (uint8), got 256"),
        (.uint16, .uint(65_536), "x must be within 0...65535 (uint16), got 65536"),
        (.uint32, .uint(4_294_967_296), "x must be within 0...4294967295 (uint32), got 4294967296"),
        (.int, .int(2_147_483_648), "x must be within -2147483648...2147483647 (int), got 2147483648"),
        (.int, .int(-2_147_483_649), "x must be within -2147483648...2147483647 (int), got -2147483649"),
    ])
    func formatRange(_ format: Format, value: Value, message: String) {
        let characteristic = Characteristic(iid: 1, type: "x", uuid: "x", format: format, perms: [.read, .write], description: "x")
        #expect(validationError(characteristic, value) == StatusError(.invalidValue, message))
    }

    @Test("the format's range edges are accepted", arguments: [
        (Format.uint8, Value.uint(255)), (.uint8, .uint(0)), (.uint16, .uint(65_535)), (.uint32, .uint(4_294_967_295)),
        (.uint64, .uint(UInt64.max)), (.int, .int(2_147_483_647)), (.int, .int(-2_147_483_648)), (.int, .uint(2_147_483_647)),
    ])
    func formatRangeEdges(_ format: Format, value: Value) throws {
        let characteristic = Characteristic(iid: 1, type: "x", uuid: "x", format: format, perms: [.read, .write])
        try characteristic.validateWrite(value)
    }

    @Test("minValue and maxValue")
    func bounds() throws {
        let brightness = Self.standard("brightness")
        #expect(validationError(brightness, .int(150)) == StatusError(.invalidValue, "brightness must be within 0...100, got 150"))
        #expect(validationError(brightness, .int(-1)) == StatusError(.invalidValue, "brightness must be within 0...100, got -1"))
        #expect(validationError(brightness, .int(101))?.status.rawValue == -70410)
        try brightness.validateWrite(.int(0))
        try brightness.validateWrite(.int(100))
        try brightness.validateWrite(.uint(55))
        #expect(throws: StatusError(.invalidValue, "brightness must be within 0...100, got 150")) {
            try brightness.parseWrite(payload: "150")
        }
        #expect(try brightness.parseWrite(payload: "80") == .int(80))
        let temperature = Self.standard("target-temperature")
        #expect(validationError(temperature, .float(38.5)) == StatusError(.invalidValue, "target-temperature must be within 10...38, got 38.5"))
        #expect(validationError(temperature, .float(9.9)) == StatusError(.invalidValue, "target-temperature must be within 10...38, got 9.9"))
    }

    @Test("one-sided bounds")
    func oneSided() throws {
        let atLeast = Characteristic(iid: 1, type: "x", uuid: "x", format: .float, perms: [.write], minValue: 5, description: "x")
        #expect(validationError(atLeast, .float(4)) == StatusError(.invalidValue, "x must be at least 5, got 4"))
        try atLeast.validateWrite(.float(1e9))
        let atMost = Characteristic(iid: 1, type: "x", uuid: "x", format: .float, perms: [.write], maxValue: 5, description: "x")
        #expect(validationError(atMost, .float(5.5)) == StatusError(.invalidValue, "x must be at most 5, got 5.5"))
        try atMost.validateWrite(.float(-1e9))
    }

    @Test("minStep: the catalog's target temperature takes steps of 0.1 from 10")
    func catalogStep() throws {
        let temperature = Self.standard("target-temperature")
        try temperature.validateWrite(.float(21.5))
        try temperature.validateWrite(.float(21.3))
        try temperature.validateWrite(.float(10.1))
        try temperature.validateWrite(.float(37.9))
        try temperature.validateWrite(.int(22))
        #expect(validationError(temperature, .float(21.35)) == StatusError(.invalidValue, "target-temperature must be a multiple of 0.1 from 10, got 21.35"))
        #expect(try temperature.parseWrite(payload: "21.5") == .float(21.5))
    }

    @Test("minStep: half degrees refuse 21.3 and take 21.5")
    func halfStep() throws {
        var temperature = Self.standard("target-temperature")
        temperature.minStep = 0.5
        try temperature.validateWrite(.float(21.5))
        try temperature.validateWrite(.float(10))
        try temperature.validateWrite(.float(38))
        #expect(validationError(temperature, .float(21.3)) == StatusError(.invalidValue, "target-temperature must be a multiple of 0.5 from 10, got 21.3"))
        #expect(validationError(temperature, .float(21.3))?.status.rawValue == -70410)
    }

    @Test("minStep: whole steps for an int")
    func wholeStep() throws {
        let colour = Self.standard("color-temperature")
        try colour.validateWrite(.uint(140))
        try colour.validateWrite(.uint(333))
        var stepped = colour
        stepped.minStep = 10
        #expect(validationError(stepped, .uint(145)) == StatusError(.invalidValue, "color-temperature must be a multiple of 10 from 140, got 145"))
        try stepped.validateWrite(.uint(150))
    }

    @Test("valid values name their meanings in the message")
    func validValues() throws {
        let lock = Self.standard("lock-target-state")
        try lock.validateWrite(.uint(0))
        try lock.validateWrite(.uint(1))
        let error = validationError(lock, .uint(5))
        #expect(error?.status == .invalidValue)
        #expect(error?.message.contains("0 (unsecured)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("1 (secured)") == true, "\(error?.message ?? "")")
        #expect(error?.message.hasSuffix("got 5") == true)
    }

    @Test("a value inside the bounds but not among the valid ones")
    func validValuesInsideBounds() throws {
        var lock = Self.standard("lock-target-state")
        lock.validValues = [1]
        #expect(validationError(lock, .uint(0)) == StatusError(.invalidValue, "lock-target-state must be one of 1 (secured), got 0"))
        try lock.validateWrite(.uint(1))
        var mode = Self.standard("target-heating-cooling-state")
        mode.validValues = [0, 1, 3]
        #expect(validationError(mode, .uint(2)) == StatusError(.invalidValue, "target-heating-cooling-state must be one of 0 (off), 1 (heat), 3 (auto), got 2"))
        let custom = Characteristic(iid: 1, type: "x", uuid: "x", format: .uint8, perms: [.write], validValues: [2, 4], description: "mode")
        #expect(validationError(custom, .uint(3)) == StatusError(.invalidValue, "mode must be one of 2, 4, got 3"))
    }

    @Test("valid values range")
    func validValuesRange() throws {
        let characteristic = Characteristic(iid: 1, type: "x", uuid: "x", format: .uint8, perms: [.write], validValuesRange: [2, 4], description: "x")
        try characteristic.validateWrite(.uint(3))
        #expect(validationError(characteristic, .uint(5)) == StatusError(.invalidValue, "x must be within 2...4, got 5"))
    }

    @Test("maxLen: 64 characters by default, else the characteristic's own")
    func maxLen() throws {
        let text = Characteristic(iid: 1, type: "x", uuid: "x", format: .string, perms: [.write], description: "label")
        try text.validateWrite(.string(String(repeating: "a", count: 64)))
        try text.validateWrite(.string(String(repeating: "ü", count: 64)))
        #expect(validationError(text, .string(String(repeating: "a", count: 65)))
            == StatusError(.invalidValue, "label must be at most 64 characters, got 65"))
        var longer = text
        longer.maxLen = 256
        try longer.validateWrite(.string(String(repeating: "a", count: 256)))
        #expect(validationError(longer, .string(String(repeating: "a", count: 257)))
            == StatusError(.invalidValue, "label must be at most 256 characters, got 257"))
        var shorter = text
        shorter.maxLen = 3
        #expect(validationError(shorter, .string("abcd")) == StatusError(.invalidValue, "label must be at most 3 characters, got 4"))
        let name = Self.standard("name")
        #expect(validationError(name, .string(String(repeating: "n", count: 65)), write: false)?.status == .invalidValue)
    }

    @Test("values of the wrong kind", arguments: [
        ("on", Value.string("on"), "on takes a bool value, got \"on\""),
        ("on", .int(1), "on takes a bool value, got 1"),
        ("brightness", .bool(true), "brightness takes an int value, got true"),
        ("brightness", .float(50.5), "brightness takes an int value, got 50.5"),
        ("brightness", .string("50"), "brightness takes an int value, got \"50\""),
        ("lock-target-state", .int(1), "lock-target-state takes a uint8 value, got 1"),
        ("target-temperature", .string("21"), "target-temperature takes a float value, got \"21\""),
        ("target-temperature", .bool(false), "target-temperature takes a float value, got false"),
        ("name", .data([1]), "name takes a string value, got \"AQ==\""),
        ("access-code-control-point", .string("AQ=="), "access-code-control-point takes a tlv8 value, got \"AQ==\""),
    ])
    func wrongKind(_ name: String, value: Value, message: String) {
        let characteristic = Self.standard(name)
        #expect(validationError(characteristic, value, write: false) == StatusError(.invalidValue, message))
    }

    @Test("int takes a uint up to Int32.max, floats take any number")
    func crossKinds() throws {
        try Self.standard("brightness").validateWrite(.uint(50))
        #expect(validationError(Self.standard("brightness"), .uint(UInt64(Int32.max) + 1))?.status == .invalidValue)
        try Self.standard("target-temperature").validateWrite(.int(20))
        try Self.standard("target-temperature").validateWrite(.uint(20))
    }

    @Test("data: tlv8 and data take bytes")
    func dataValidation() throws {
        try Self.standard("access-code-control-point").validateWrite(.data([1, 2, 3]))
        let data = Characteristic(iid: 1, type: "x", uuid: "x", format: .data, perms: [.write])
        try data.validateWrite(.data(Array(repeating: 0, count: 2_097_152)))
        #expect(validationError(data, .data(Array(repeating: 0, count: 2_097_153)))?.status == .invalidValue)
    }

    @Test("display names: standard name, else description, else UUID")
    func displayNames() {
        #expect(Self.standard("brightness").displayName == "brightness")
        #expect(Characteristic(iid: 1, type: "U", uuid: "U", format: .bool, perms: [], description: "Eve Thing").displayName == "Eve Thing")
        #expect(Characteristic(iid: 1, type: "U", uuid: "ABCDEF01-0000-1000-8000-000000000000", format: .bool, perms: []).displayName
            == "ABCDEF01-0000-1000-8000-000000000000")
    }

    @Test("parseWrite checks writability before it parses")
    func parseWriteOrder() {
        #expect(throws: StatusError(.readOnly, "current-temperature is read-only")) {
            try Self.standard("current-temperature").parseWrite(payload: "not a number")
        }
        #expect(throws: StatusError(.invalidValue, "on must be true or false (also on/off, 1/0), got \"maybe\"")) {
            try Self.standard("on").parseWrite(payload: "maybe")
        }
        #expect((try? Self.standard("on").parseWrite(payload: "ON")) == .bool(true))
    }

    @Test("HAP statuses of the refusals")
    func statuses() {
        #expect(HAPStatus.readOnly.rawValue == -70404)
        #expect(HAPStatus.writeOnly.rawValue == -70405)
        #expect(HAPStatus.invalidValue.rawValue == -70410)
        #expect(HAPStatus.invalidValue.name == "invalid-value")
        #expect(HAPStatus.readOnly.name == "read-only")
        #expect(HAPStatus.communicationFailure.rawValue == -70402)
        #expect(HAPStatus.noSuchResource.rawValue == -70409)
        #expect(Set(HAPStatus.allCases.map(\.name)).count == HAPStatus.allCases.count)
    }

    // MARK: JSON rendering

    @Test("values as JSON scalars", arguments: [
        (Value.bool(true), "true"), (.bool(false), "false"), (.int(42), "42"), (.int(-7), "-7"), (.uint(42), "42"),
        (.uint(UInt64.max), "18446744073709551615"), (.float(21.5), "21.5"), (.float(20), "20"), (.float(-0.5), "-0.5"),
        (.float(0), "0"), (.float(-3), "-3"), (.float(0.1), "0.1"), (.string("Kitchen"), "\"Kitchen\""),
        (.string("say \"hi\""), "\"say \\\"hi\\\"\""), (.string("a\nb"), "\"a\\nb\""), (.string("tab\there"), "\"tab\\there\""),
        (.string("back\\slash"), "\"back\\\\slash\""), (.string("cr\r"), "\"cr\\r\""), (.string("\u{1}"), "\"\\u0001\""),
        (.string("Küche 💡"), "\"Küche 💡\""), (.string(""), "\"\""), (.data([0, 1, 2]), "\"AAEC\""), (.data([]), "\"\""),
        (.data([255]), "\"/w==\""),
    ])
    func json(_ value: Value, expected: String) {
        #expect(value.jsonText == expected)
        #expect(value.json.text == expected)
    }

    @Test("rendered JSON reads back as the same value", arguments: [
        Value.string("say \"hi\"\n\t\r\\ \u{0}\u{1}\u{1F}\u{7F} ü 💡"), .string("</script>"), .float(1.0 / 3), .float(1e-7), .float(1e20),
        .float(-1e15), .float(123_456.789), .float(21.200000000000003), .int(Int64.min), .bool(true), .uint(7),
    ])
    func jsonReadsBack(_ value: Value) throws {
        let object = try JSONSerialization.jsonObject(with: Data(value.encoded), options: [.fragmentsAllowed])
        switch value {
        case .string(let text): #expect(object as? String == text)
        case .float(let number):
            #expect(object is NSNumber)
            // Swift's own parser reads back exactly (Foundation's JSONSerialization may round the last digit).
            #expect(Double(value.jsonText) == number)
            #expect(try JSON.parse(value.encoded) == .double(number) || value.json == JSON.parse(value.encoded))
        case .int(let number): #expect((object as? NSNumber)?.int64Value == number)
        case .uint(let number): #expect((object as? NSNumber)?.uint64Value == number)
        case .bool(let flag): #expect((object as? NSNumber)?.boolValue == flag)
        case .data: Issue.record("not in the table")
        }
    }

    @Test("a value's JSON reads back through the JSON parser as the same value")
    func jsonOut() throws {
        for value in [Value.bool(true), .int(42), .uint(UInt64.max), .float(21.5), .string("x"), .data([0, 1, 2])] {
            #expect(try JSON.parse(value.encoded) == value.json)
        }
        #expect(Value.data([0, 1, 2]).json == "AAEC")
    }

    @Test("description quotes strings and is JSON otherwise")
    func description() {
        #expect(Value.string("a\"b").description == "\"a\\\"b\"")
        #expect(Value.int(3).description == "3")
        #expect(Value.float(20).description == "20")
    }

    @Test("numbers of values")
    func numbers() {
        #expect(Value.int(-3).number == -3)
        #expect(Value.uint(3).number == 3)
        #expect(Value.float(2.5).number == 2.5)
        #expect(Value.bool(true).number == nil)
        #expect(Value.string("3").number == nil)
        #expect(Value.data([3]).number == nil)
    }
}
