import Foundation
import HomeModel
import Testing
import Wire
@testable import HomeStore

/// The model as the store writes and reads it (``ModelJSON``, through ``Wire/JSON``): values
/// name their kind, every kind survives the round trip, malformed stored values are refused,
/// and a trigger stored before last fire dates existed still reads.
@Suite("the model's stored JSON")
struct ModelJSONTests {
    @Test("every kind of value survives the store's round trip", arguments: [
        Value.bool(true), .bool(false), .int(0), .int(-42), .int(Int64.max), .int(Int64.min), .uint(0), .uint(UInt64.max),
        .float(21.5), .float(0.1), .float(-1e-9), .float(1e300), .string(""), .string("Küche \"💡\"\n"), .data([]), .data([0, 1, 2, 255]),
        .data(Array(0...255)),
    ])
    func roundTrip(_ value: Value) throws {
        let text = value.modelJSON.encoded()
        #expect(try Value(modelJSON: try JSON.parse(text)) == value)
    }

    @Test("the stored form names the kind")
    func storedForm() throws {
        #expect(Value.int(40).modelJSON.text == #"{"int":40}"#)
        #expect(Value.uint(40).modelJSON.text == #"{"uint":40}"#)
        #expect(Value.data([0, 1, 2]).modelJSON.text == #"{"data":"AAEC"}"#)
        #expect(Value.bool(true).modelJSON.text == #"{"bool":true}"#)
        #expect(try Value(modelJSON: try JSON.parse(#"{"float": 20}"#)) == .float(20))
    }

    @Test("malformed stored values are refused", arguments: ["{}", #"{"data": "***"}"#, #"{"int": "x"}"#, #"{"colour": 1}"#, "42", #"{"uint": -1}"#])
    func storedRefused(_ json: String) throws {
        let parsed = try JSON.parse(json)
        #expect(throws: ModelJSON.Failure.self) { try Value(modelJSON: parsed) }
    }

    @Test("a trigger stored before last fire dates existed reads with none")
    func triggerWithoutLastFireDate() throws {
        let json = try JSON.parse(#"{"id":"t","name":"T","fireDate":0,"actionSetIDs":["a"],"isEnabled":true}"#)
        let trigger = try TimerTrigger(modelJSON: json)
        #expect(trigger.lastFireDate == nil)
        #expect(trigger == TimerTrigger(id: "t", name: "T", fireDate: Date(timeIntervalSinceReferenceDate: 0), actionSetIDs: ["a"]))
    }
}
