import Accessories
import Foundation
@testable import Gateway
import HomeModel
import MQTT
import Testing
import TestSupport
import Wire

/// Service-level sets (`<service>/set` with a JSON object), on the engine in memory.
@Suite("Engine: a whole service at once")
struct EngineServiceSetTests {
    typealias Harness = EngineHarness

    @Test("the values are written together and acknowledged once, each characteristic's outcome listed; the id is echoed")
    func writesTogether() async throws {
        let harness = try await Harness()
        let ack = try await harness.command("\(Harness.lamp)/set", #"{"on": true, "brightness": 55, "id": 7}"#)
        #expect(ack["ok"] == true && ack["id"] == 7, "\(ack.text)")
        let results = ack["results"]?.array ?? []
        #expect(results.count == 2 && results.allSatisfy { $0["ok"] == true }, "\(ack.text)")
        #expect(Set(results.compactMap { $0["topic"]?.string }) == ["\(Harness.lamp)/on", "\(Harness.lamp)/brightness"])
        #expect(try await harness.deviceValue("lamp", "on") == .bool(true))
        #expect(try await harness.deviceValue("lamp", "brightness") == .int(55))
        #expect(harness.bus.retained["\(Harness.lamp)/brightness"] == "55")
        #expect(try harness.acknowledgements("\(Harness.lamp)/set").count == 1, "exactly one acknowledgement")
        await harness.stop()
    }

    @Test("one bad value or unknown segment refuses the whole set; nothing reaches the device")
    func refusedAsAWhole() async throws {
        let harness = try await Harness()
        let cases: [(String, String, String)] = [
            (#"{"on": true, "brightness": 500}"#, "invalid-value", "brightness must be within 0...100, got 500"),
            (#"{"on": true, "brightnes": 50}"#, "no-such-resource", #"no characteristic "brightnes" in lab/office/lamp/lightbulb; did you mean "brightness"? (there: on, brightness)"#),
            (#"{"id": 1}"#, "invalid-value", #"the JSON object names no characteristic of lab/office/lamp/lightbulb: {"on": true, "brightness": 50}"#),
        ]
        for (payload, error, message) in cases {
            let ack = try await harness.command("\(Harness.lamp)/set", payload)
            #expect(ack["ok"] == false && ack["error"] == .string(error) && ack["message"] == .string(message), "\(payload): \(ack.text)")
        }
        #expect(try await harness.deviceValue("lamp", "on") == .bool(false))
        #expect(try await harness.deviceValue("lamp", "brightness") == .int(10))
        await harness.stop()
    }
}
