import Testing
import Wire

@Suite("JSON")
struct JSONTests {
    @Test("reads every kind of value, numbers keeping their kind")
    func kinds() throws {
        let json = try JSON.parse(#" {"a": [1, -2, 3.5, 1e3, 18446744073709551615, true, false, null, "x"]} "#)
        #expect(json == ["a": [.int(1), .int(-2), .double(3.5), .double(1000), .uint(UInt64.max), true, false, nil, "x"]])
    }

    @Test("strings: escapes, surrogate pairs, UTF-8 kept as it is")
    func strings() throws {
        #expect(try JSON.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try JSON.parse(#""\u00e9\ud83d\ude00""#) == .string("é😀"))
        #expect(try JSON.parse("\"Küche 🛋\"") == .string("Küche 🛋"))
    }

    @Test("refuses what is not JSON, saying where", arguments: [
        ("", "expected a value, found the end"),
        ("{", "expected a member name in quotes"),
        ("[1,]", "expected a value"),
        ("01", "a number cannot start with 0"),
        ("1.", "expected a digit after '.'"),
        ("tru", "expected true"),
        ("\"abc", "a string does not end"),
        ("\"a\u{1}\"", "a control character inside a string must be escaped"),
        (#""\ud800""#, "a \\u escape is half of a surrogate pair"),
        (#""\x""#, "unknown escape in a string"),
        ("1 2", "unexpected text after the JSON value"),
        ("1e999", "the number 1e999 is out of range"),
        ("nan", "expected null"),
    ])
    func refuses(input: String, reason: String) {
        #expect(throws: JSONError.self) { try JSON.parse(input) }
        do {
            _ = try JSON.parse(input)
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test("refuses invalid UTF-8 inside a string")
    func invalidUTF8() {
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0x5C, 0x6E, 0xC3, 0x22]) }
    }

    @Test("nesting is bounded: a document 100,000 levels deep is refused without exhausting the stack")
    func depth() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        do {
            _ = try JSON.parse(deep)
            Issue.record("a 100,000-deep document was accepted")
        } catch {
            #expect(error.reason == "nesting deeper than 64 levels")
        }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSON.parse(ok) }
    }

    @Test("writes compact text with sorted keys, reading back as the same value")
    func roundTrip() throws {
        let value: JSON = ["b": [1, 2.5, "x\n\"y\u{1}"], "a": nil, "é": true, "n": .uint(UInt64.max), "d": 120.6]
        let text = value.text
        #expect(text == #"{"a":null,"b":[1,2.5,"x\n\"y\u0001"],"d":120.6,"n":18446744073709551615,"é":true}"#)
        #expect(try JSON.parse(text) == value)
    }

    @Test("whole doubles are written without a fraction; infinities as null")
    func doubles() {
        #expect(JSON.double(21).text == "21")
        #expect(JSON.double(-0.5).text == "-0.5")
        #expect(JSON.double(.infinity).text == "null")
    }
}

@Suite("HAPStatus")
struct HAPStatusTests {
    @Test("every status has its wire number and kebab-case name")
    func names() {
        #expect(HAPStatus(rawValue: -70409) == .noSuchResource)
        #expect(HAPStatus.noSuchResource.name == "no-such-resource")
        #expect(HAPStatus.allCases.count == 13)
        #expect(Set(HAPStatus.allCases.map(\.name)).count == 13)
    }
}

/// The topic grammar as the page gets it: every reserved level and verb by its key.
@Suite("topic grammar")
struct TopicGrammarTests {
    @Test("served as data: levels and verbs by key, the result level and the shortcuts")
    func asData() throws {
        let json = TopicGrammar.json
        #expect(json["levels"] == .object(["request": "$request", "response": "$response", "sync": "$sync", "events": "$events", "layout": "$layout",
                                           "browser": "$browser", "state": "$state", "health": "$health", "actionSets": "$action-sets",
                                           "groups": "$groups", "zones": "$zones"]))
        #expect(json["verbs"] == .object(["set": "set", "get": "get", "execute": "execute"]))
        #expect(json["attributes"] == .object(["meta": "$meta", "reachable": "$reachable", "lastSeen": "$last-seen", "snapshot": "$snapshot",
                                               "adaptiveLighting": "adaptive-lighting"]))
        #expect(json["result"] == "result" && json["shortcuts"] == ["$action-sets", "$groups", "$zones"])
        #expect(TopicGrammar.topic("homegate", .request, "room", "add") == "homegate/$request/room/add")
        #expect(TopicGrammar.topic("homegate/h/r/lamp", .reachable) == "homegate/h/r/lamp/$reachable")
    }
}
